// Emoji as reactions name them: a (reaction_type, emoji_code) pair, each type its own namespace
// (Zulip's zerver/lib/emoji.py get_emoji_data and check_emoji_request).
import type { App } from '../app.ts';
import { emojiCodeByName, isValidEmojiCode } from '../emoji/index.ts';
import { rawQuery } from '../db/transaction.ts';
import { badRequest } from '../errors.ts';
import type { RealmInfo } from './realms.ts';

/**
 * The spec calls the server's own emoji `service_extra_emoji`, Zulip `zulip_extra_emoji`: both
 * are accepted, and the spec's name is the one stored and shown.
 */
export const EXTRA_EMOJI_TYPE = 'service_extra_emoji';
const REACTION_TYPE_ALIASES: Record<string, string> = { zulip_extra_emoji: EXTRA_EMOJI_TYPE };
const EXTRA_EMOJI = ['zulip'];

export const canonicalReactionType = (type: string) => REACTION_TYPE_ALIASES[type] ?? type;

export interface EmojiRef {
  code: string;
  type: string;
}

/** What a name means now: an active custom emoji first, then the extra emoji, then Unicode. */
export async function emojiByName(app: App, realm: RealmInfo, name: string): Promise<EmojiRef> {
  // Every reaction by name reads this: raw on the pool (bench/micro/db-read.ts: a third of the model API's CPU).
  const [custom] = await rawQuery<{ id: number }>(
    app,
    'SELECT id FROM "RealmEmoji" WHERE "realmId" = $1 AND name = $2 AND NOT deactivated LIMIT 1',
    realm.id,
    name,
  );
  if (custom) return { code: String(custom.id), type: 'realm_emoji' };
  if (EXTRA_EMOJI.includes(name)) return { code: name, type: EXTRA_EMOJI_TYPE };
  const code = emojiCodeByName(name);
  if (code !== undefined) return { code, type: 'unicode_emoji' };
  throw badRequest(`Emoji '${name}' does not exist`);
}

/**
 * The emoji a request names: the code and type it gives, the rest from what the name means now
 * (simple clients name the emoji only).
 */
export async function requestedEmoji(app: App, realm: RealmInfo, name: string, code: string | undefined, type: string | undefined): Promise<EmojiRef> {
  const given = type === undefined ? undefined : canonicalReactionType(type);
  if (code !== undefined && given !== undefined) return { code, type: given };
  const named = await emojiByName(app, realm, name);
  return { code: code ?? named.code, type: given ?? named.type };
}

/** Checks that a new reaction's name, code and type agree and name an emoji usable today. */
export async function checkEmojiRequest(app: App, realm: RealmInfo, name: string, { code, type }: EmojiRef): Promise<void> {
  if (type === 'realm_emoji') {
    const id = /^\d+$/.test(code) ? Number(code) : NaN;
    const custom = Number.isSafeInteger(id) ? await app.prisma.realmEmoji.findFirst({ where: { id, realmId: realm.id } }) : null;
    if (!custom) throw badRequest('Invalid custom emoji.');
    if (custom.name !== name) throw badRequest('Invalid custom emoji name.');
    if (custom.deactivated) throw badRequest('This custom emoji has been deactivated.');
  } else if (type === EXTRA_EMOJI_TYPE) {
    if (!EXTRA_EMOJI.includes(code)) throw badRequest('Invalid emoji code.');
    if (name !== code) throw badRequest('Invalid emoji name.');
  } else if (type === 'unicode_emoji') {
    if (!isValidEmojiCode(code)) throw badRequest('Invalid emoji code.');
    if (emojiCodeByName(name) !== code) throw badRequest('Invalid emoji name.');
  } else {
    throw badRequest('Invalid emoji type.');
  }
}
