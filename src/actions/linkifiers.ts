// Linkifiers (spec 4.13, 4.17; Zulip's zerver/actions/realm_linkifiers.py): administrators add,
// edit, remove and reorder them. Each change is written under a per-realm lock, then the cache is
// dropped and everyone in the organization gets the full ordered list in a `realm_linkifiers` event.
import type { App } from '../app.ts';
import { requireRole } from '../auth/policy.ts';
import type { Prisma, User } from '../db/generated/client.ts';
import { Role } from '../domain/roles.ts';
import { type ApiError, badRequest } from '../errors.ts';
import { LinkifierValidationError, validateLinkifier } from '../markdown/index.ts';
import { alternativeTemplates, loadLinkifiers } from '../queries/linkifiers.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { realmViewers } from '../queries/users.ts';
import { atomic, onCommit, sendOnCommit } from './transaction.ts';
import { cacheChanged } from '../cluster/cache-sync.ts';

export interface LinkifierInput {
  pattern: string;
  urlTemplate: string;
  exampleInput: string | null;
  reverseTemplate: string | null;
  alternativeUrlTemplates: string[];
}

/** PATCH: pattern and url_template are required; an absent optional field keeps its value. */
export type LinkifierUpdate = Pick<LinkifierInput, 'pattern' | 'urlTemplate'> & Partial<LinkifierInput>;

/** Advisory-lock class of linkifier writes (the second key is the realm id). */
const LINKIFIER_LOCK = 0x4c4b4652;

const linkifierNotFound = () => badRequest('Linkifier not found.');

/** Zulip's ValidationFailureError: the first message as `msg`, the messages by field as `errors`. */
function validationFailure(field: string, msg: string): ApiError {
  return badRequest(msg, { errors: { [field]: [msg] } });
}

/** The model validation Zulip runs in full_clean: blank fields, then the linkifier's own rules. */
function checkLinkifier(input: LinkifierInput): LinkifierInput {
  // Zulip strips both before validating and storing.
  const checked = { ...input, pattern: input.pattern.trim(), urlTemplate: input.urlTemplate.trim() };
  if (!checked.pattern) throw validationFailure('pattern', 'This field cannot be blank.');
  if (!checked.urlTemplate) throw validationFailure('url_template', 'This field cannot be blank.');
  try {
    validateLinkifier({
      pattern: checked.pattern,
      url_template: checked.urlTemplate,
      example_input: checked.exampleInput,
      reverse_template: checked.reverseTemplate,
      alternative_url_templates: checked.alternativeUrlTemplates,
    });
  } catch (error) {
    if (error instanceof LinkifierValidationError) throw validationFailure(error.field, error.message);
    throw error;
  }
  return checked;
}

/** Serializes a realm's linkifier writes, so orders and the unique-pattern check stay consistent. */
async function lockRealmLinkifiers(tx: Prisma.TransactionClient, realmId: number): Promise<void> {
  await tx.$executeRawUnsafe('SELECT pg_advisory_xact_lock($1, $2)', LINKIFIER_LOCK, realmId);
}

/** Zulip's unique_together (realm, pattern), with Django's message for it. */
async function checkUniquePattern(tx: Prisma.TransactionClient, realmId: number, pattern: string, exceptId?: number): Promise<void> {
  const taken = await tx.linkifier.findFirst({
    where: { realmId, pattern, ...(exceptId === undefined ? {} : { id: { not: exceptId } }) },
    select: { id: true },
  });
  if (taken) throw validationFailure('__all__', 'Realm filter with this Realm and Pattern already exists.');
}

const columns = (l: LinkifierInput) => ({
  pattern: l.pattern,
  urlTemplate: l.urlTemplate,
  exampleInput: l.exampleInput,
  reverseTemplate: l.reverseTemplate,
  alternativeUrlTemplates: l.alternativeUrlTemplates,
});

/** The linkifiers as the transaction leaves them, to every active user (bots included, as Zulip does); the cached set goes at commit. */
async function sendLinkifiers(app: App, realm: RealmInfo): Promise<void> {
  onCommit(() => cacheChanged(app, { cache: 'linkifiers', realmId: realm.id }));
  const userIds = (await realmViewers(app, realm.id)).map((u) => u.id);
  sendOnCommit({ realmId: realm.id, userIds, event: { type: 'realm_linkifiers', realm_linkifiers: await loadLinkifiers(app.prisma, realm.id) } });
}

/** POST /realm/filters: the new linkifier goes last in the order. */
export async function addLinkifier(app: App, realm: RealmInfo, actor: User, input: LinkifierInput): Promise<number> {
  requireRole(actor, Role.ADMINISTRATOR);
  const linkifier = checkLinkifier(input);
  return atomic(app, async () => {
    const tx = app.prisma;
    await lockRealmLinkifiers(tx, realm.id);
    await checkUniquePattern(tx, realm.id, linkifier.pattern);
    const last = await tx.linkifier.aggregate({ where: { realmId: realm.id }, _max: { order: true } });
    const order = last._max.order === null ? 0 : last._max.order + 1;
    const row = await tx.linkifier.create({ data: { realmId: realm.id, order, ...columns(linkifier) }, select: { id: true } });
    await sendLinkifiers(app, realm);
    return row.id;
  });
}

/** PATCH /realm/filters/{id}: the merged linkifier is validated as a whole. */
export async function updateLinkifier(app: App, realm: RealmInfo, actor: User, id: number, update: LinkifierUpdate): Promise<void> {
  requireRole(actor, Role.ADMINISTRATOR);
  await atomic(app, async () => {
    const tx = app.prisma;
    await lockRealmLinkifiers(tx, realm.id);
    const row = await tx.linkifier.findFirst({ where: { id, realmId: realm.id } });
    if (!row) throw linkifierNotFound();
    const linkifier = checkLinkifier({
      pattern: update.pattern,
      urlTemplate: update.urlTemplate,
      exampleInput: update.exampleInput === undefined ? row.exampleInput : update.exampleInput,
      reverseTemplate: update.reverseTemplate === undefined ? row.reverseTemplate : update.reverseTemplate,
      alternativeUrlTemplates: update.alternativeUrlTemplates ?? alternativeTemplates(row.alternativeUrlTemplates),
    });
    await checkUniquePattern(tx, realm.id, linkifier.pattern, id);
    await tx.linkifier.update({ where: { id }, data: columns(linkifier) });
    await sendLinkifiers(app, realm);
  });
}

/** DELETE /realm/filters/{id}: the others keep their order. */
export async function removeLinkifier(app: App, realm: RealmInfo, actor: User, id: number): Promise<void> {
  requireRole(actor, Role.ADMINISTRATOR);
  await atomic(app, async () => {
    const tx = app.prisma;
    await lockRealmLinkifiers(tx, realm.id);
    const { count } = await tx.linkifier.deleteMany({ where: { id, realmId: realm.id } });
    if (count === 0) throw linkifierNotFound();
    await sendLinkifiers(app, realm);
  });
}

/** PATCH /realm/linkifiers: `ids` must name every linkifier of the realm exactly once. */
export async function reorderLinkifiers(app: App, realm: RealmInfo, actor: User, ids: number[]): Promise<void> {
  requireRole(actor, Role.ADMINISTRATOR);
  const wanted = new Set(ids);
  if (wanted.size < ids.length) throw badRequest('The ordered list must not contain duplicated linkifiers');
  await atomic(app, async () => {
    const tx = app.prisma;
    await lockRealmLinkifiers(tx, realm.id);
    const rows = await tx.linkifier.findMany({ where: { realmId: realm.id }, select: { id: true } });
    if (rows.length !== wanted.size || rows.some((r) => !wanted.has(r.id))) {
      throw badRequest('The ordered list must enumerate all existing linkifiers exactly once');
    }
    // Nothing to reorder: no write and no event, as in Zulip.
    if (rows.length === 0) return;
    for (const [order, id] of ids.entries()) await tx.linkifier.update({ where: { id }, data: { order } });
    await sendLinkifiers(app, realm);
  });
}
