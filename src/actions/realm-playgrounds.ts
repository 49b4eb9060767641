// Code playgrounds (Zulip's zerver/views/realm_playgrounds.py, zerver/actions/realm_playgrounds.py
// and RealmPlayground's model validation): administrators add and remove them; every active user
// gets the whole new list in a `realm_playgrounds` event.
import type { App } from '../app.ts';
import { requireRole } from '../auth/policy.ts';
import type { Prisma, User } from '../db/generated/client.ts';
import { Role } from '../domain/roles.ts';
import { badRequest } from '../errors.ts';
import { uriTemplateVariables } from '../markdown/index.ts';
import { realmPlaygrounds } from '../queries/realm-playgrounds.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { sendToRealm } from './realm.ts';
import { atomic } from './transaction.ts';

export interface PlaygroundInput {
  name: string;
  pygmentsLanguage: string;
  urlTemplate: string;
}

const MAX_PYGMENTS_LANGUAGE_LENGTH = 40;
// Zulip's character class, whose `+-.` is a range: the comma is allowed too.
const PYGMENTS_LANGUAGE = /^[ a-zA-Z0-9_+,\-./#]*$/;
/** Advisory-lock class of playground writes (the second key is the realm id). */
const PLAYGROUND_LOCK = 0x504c4159;

/** The view's check of the language, made on the value as sent. */
function checkPygmentsLanguage(language: string): void {
  if ([...language].length > MAX_PYGMENTS_LANGUAGE_LENGTH) {
    throw badRequest(`pygments_language is too long (limit: ${MAX_PYGMENTS_LANGUAGE_LENGTH} characters)`);
  }
  if (!PYGMENTS_LANGUAGE.test(language)) throw badRequest('Invalid characters in pygments language');
}

/**
 * Django's full_clean of a RealmPlayground: each field's problems in field order, then the
 * model's rule about `{code}`, then uniqueness. Zulip's ValidationFailureError answers the first
 * message and lists them all in `errors`.
 */
async function checkPlayground(tx: Prisma.TransactionClient, realmId: number, p: PlaygroundInput): Promise<void> {
  const errors: Record<string, string[]> = {};
  const add = (field: string, msg: string) => (errors[field] ??= []).push(msg);
  const blank = 'This field cannot be blank.';
  const variables = uriTemplateVariables(p.urlTemplate);
  if (p.urlTemplate === '') add('url_template', blank);
  else if (!variables) add('url_template', 'Invalid URL template.');
  if (p.name === '') add('name', blank);
  if (p.pygmentsLanguage === '') add('pygments_language', blank);
  if (variables && !variables.has('code')) add('__all__', 'Missing the required variable "code" in the URL template');
  else if (variables && variables.size !== 1) add('__all__', '"code" should be the only variable present in the URL template');
  if (!errors.name && !errors.pygments_language) {
    const taken = await tx.realmPlayground.findFirst({ where: { realmId, name: p.name, pygmentsLanguage: p.pygmentsLanguage }, select: { id: true } });
    if (taken) add('__all__', 'Realm playground with this Realm, Pygments language and Name already exists.');
  }
  const first = Object.values(errors)[0]?.[0];
  if (first !== undefined) throw badRequest(first, { errors });
}

/** Serializes a realm's playground writes, so the uniqueness check holds until the insert. */
async function lockRealmPlaygrounds(tx: Prisma.TransactionClient, realmId: number): Promise<void> {
  await tx.$executeRawUnsafe('SELECT pg_advisory_xact_lock($1, $2)', PLAYGROUND_LOCK, realmId);
}

async function sendPlaygrounds(app: App, realm: RealmInfo): Promise<void> {
  await sendToRealm(app, realm, { type: 'realm_playgrounds', realm_playgrounds: await realmPlaygrounds(app.prisma, realm.id) });
}

/** POST /realm/playgrounds: returns the new playground's id. */
export async function addPlayground(app: App, realm: RealmInfo, actor: User, input: PlaygroundInput): Promise<number> {
  requireRole(actor, Role.ADMINISTRATOR);
  checkPygmentsLanguage(input.pygmentsLanguage);
  const playground = { name: input.name.trim(), pygmentsLanguage: input.pygmentsLanguage.trim(), urlTemplate: input.urlTemplate.trim() };
  return atomic(app, async () => {
    await lockRealmPlaygrounds(app.prisma, realm.id);
    await checkPlayground(app.prisma, realm.id, playground);
    const row = await app.prisma.realmPlayground.create({ data: { realmId: realm.id, ...playground }, select: { id: true } });
    await sendPlaygrounds(app, realm);
    return row.id;
  });
}

/** DELETE /realm/playgrounds/{id}. */
export async function removePlayground(app: App, realm: RealmInfo, actor: User, id: number): Promise<void> {
  requireRole(actor, Role.ADMINISTRATOR);
  await atomic(app, async () => {
    await lockRealmPlaygrounds(app.prisma, realm.id);
    const { count } = await app.prisma.realmPlayground.deleteMany({ where: { id, realmId: realm.id } });
    if (count === 0) throw badRequest('Invalid playground');
    await sendPlaygrounds(app, realm);
  });
}
