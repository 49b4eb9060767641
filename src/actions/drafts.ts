// Drafts synchronized between a user's clients (spec 4.9, Zulip's zerver/lib/drafts.py): each
// draft is checked as a whole (shape, then content, timestamp and addressee) before anything is
// written, a batch is created in one transaction, and the user's own queues get `drafts` events.
import { z } from 'zod';
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { MAX_TOPIC_LENGTH } from '../domain/channel-settings.ts';
import { userSettingsSchema } from '../domain/realm-settings.ts';
import { badRequest, notFound } from '../errors.ts';
import { accessibleChannel } from '../queries/channels.ts';
import { formatDraft } from '../queries/drafts.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { apiEmail } from '../queries/users.ts';
import { normalizeContent, truncate } from './messages-content.ts';
import { atomic, sendOnCommit } from './transaction.ts';
import type { EventBody } from '../events/schemas.ts';

const draftSchema = z.strictObject({
  type: z.enum(['private', 'stream', '']),
  to: z.array(z.number().int()),
  topic: z.string(),
  content: z.string().trim().min(1),
  timestamp: z.number().nullable().optional(),
});
type DraftData = z.infer<typeof draftSchema>;

interface CheckedDraft {
  type: string;
  to: number[];
  topic: string;
  content: string;
  lastEditTime: Date;
}

/** Zulip's pydantic wording for a draft object that does not fit the schema, e.g. `drafts[0]["to"] is not a list`. */
function describeIssue(name: string, issue: z.core.$ZodIssue): string {
  const at = (path: readonly PropertyKey[]) => name + path.map((p) => `[${JSON.stringify(p)}]`).join('');
  const where = at(issue.path);
  switch (issue.code) {
    case 'unrecognized_keys':
      return `Argument "${issue.keys[0]}" at ${at([...issue.path, issue.keys[0]!])} is unexpected`;
    case 'invalid_value':
      return `Invalid ${where}`;
    case 'too_small':
      return `${where} cannot be blank`;
    case 'invalid_type': {
      if (issue.input === undefined) return `${where} field is missing`;
      const noun = { number: 'an integer', int: 'an integer', array: 'a list', string: 'a string', object: 'a dict' }[issue.expected as string];
      return `${where} is not ${noun ?? `a valid ${issue.expected}`}`;
    }
    default:
      return `Invalid ${where}`;
  }
}

/** Parses one JSON draft object, reporting problems under `name` (`draft`, `drafts[2]`). */
export function parseDraft(value: unknown, name: string): DraftData {
  const result = draftSchema.safeParse(value, { reportInput: true });
  if (!result.success) throw badRequest(describeIssue(name, result.error.issues[0]!));
  return result.data;
}

/** Direct-message addressees as Zulip stores them: the others in the conversation, or just the user for notes to self. */
async function checkDirectAddressees(app: App, realm: RealmInfo, user: User, ids: number[]): Promise<number[]> {
  const unique = [...new Set(ids)];
  const users = await app.prisma.user.findMany({ where: { id: { in: unique }, realmId: realm.id } });
  for (const id of unique) {
    const found = users.find((u) => u.id === id);
    if (!found) throw badRequest(`Invalid user ID ${id}`);
    if (!found.isActive) throw badRequest(`'${apiEmail(app, realm, found)}' is no longer using Zulip.`);
  }
  const others = unique.filter((id) => id !== user.id).sort((a, b) => a - b);
  return others.length ? others : [user.id];
}

/** Zulip's further_validated_draft_dict, in its order of checks. */
async function checkDraft(app: App, realm: RealmInfo, user: User, draft: DraftData): Promise<CheckedDraft> {
  const content = normalizeContent(draft.content);
  const timestamp = Math.round((draft.timestamp ?? Date.now() / 1000) * 1e6) / 1e6;
  if (timestamp < 0) throw badRequest('Timestamp must not be negative.');
  const lastEditTime = new Date(timestamp * 1000);
  if (draft.type === 'stream') {
    const topic = truncate(draft.topic, MAX_TOPIC_LENGTH, '...');
    if (topic.includes('\0')) throw badRequest('Topic must not contain null bytes');
    if (draft.to.length !== 1) throw badRequest('Must specify exactly 1 channel ID for channel messages');
    await accessibleChannel(app, realm, user, draft.to[0]!, { content: true, active: true });
    return { type: 'stream', to: draft.to, topic, content, lastEditTime };
  }
  // A direct-message draft without addressees is an unaddressed draft; topics only belong to channels.
  if (draft.type === 'private' && draft.to.length > 0) {
    return { type: 'private', to: await checkDirectAddressees(app, realm, user, draft.to), topic: '', content, lastEditTime };
  }
  return { type: '', to: [], topic: '', content, lastEditTime };
}

/** Every draft endpoint starts here (Zulip's draft_endpoint). */
export function checkDraftsEnabled(user: User): void {
  if (!userSettingsSchema.parse(user.settings ?? {}).enable_drafts_synchronization) throw badRequest('User has disabled synchronizing drafts.');
}

export const draftNotFound = () => notFound('Draft does not exist');

function sendDrafts(realm: RealmInfo, user: User, event: EventBody<'drafts'>): void {
  sendOnCommit({ realmId: realm.id, userIds: [user.id], event: { type: 'drafts', ...event } });
}

/** POST /drafts: all or none of the batch is created; returns the new ids in the order given. */
export async function createDrafts(app: App, realm: RealmInfo, user: User, drafts: unknown[]): Promise<number[]> {
  checkDraftsEnabled(user);
  const parsed = drafts.map((d, i) => parseDraft(d, `drafts[${i}]`));
  const checked: CheckedDraft[] = [];
  for (const d of parsed) checked.push(await checkDraft(app, realm, user, d));
  return atomic(app, async () => {
    const created = [];
    for (const d of checked) created.push(await app.prisma.draft.create({ data: { userId: user.id, ...d } }));
    sendDrafts(realm, user, { op: 'add', drafts: created.map(formatDraft) });
    return created.map((d) => d.id);
  });
}

/** PATCH /drafts/{id}: replaces the user's own draft; someone else's is as missing as a deleted one. */
export async function editDraft(app: App, realm: RealmInfo, user: User, draftId: number, value: unknown): Promise<void> {
  checkDraftsEnabled(user);
  const draft = parseDraft(value, 'draft');
  await atomic(app, async () => {
    if (!(await app.prisma.draft.findFirst({ where: { id: draftId, userId: user.id }, select: { id: true } }))) throw draftNotFound();
    const checked = await checkDraft(app, realm, user, draft);
    const { count } = await app.prisma.draft.updateMany({ where: { id: draftId, userId: user.id }, data: checked });
    if (count === 0) throw draftNotFound();
    sendDrafts(realm, user, { op: 'update', draft: formatDraft({ id: draftId, userId: user.id, ...checked }) });
  });
}

export async function deleteDraft(app: App, realm: RealmInfo, user: User, draftId: number): Promise<void> {
  checkDraftsEnabled(user);
  await atomic(app, async () => {
    const { count } = await app.prisma.draft.deleteMany({ where: { id: draftId, userId: user.id } });
    if (count === 0) throw draftNotFound();
    sendDrafts(realm, user, { op: 'remove', draft_id: draftId });
  });
}
