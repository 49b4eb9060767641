// Narrows (Zulip's search filters) compiled to SQL. A narrow searches the user's own message
// history (their UserMessage rows) unless it names a channel whose whole history the user may read;
// then it searches every message of that channel, with the user's flags where they have a row.
import { z } from 'zod';
import type { App } from '../app.ts';
import type { User } from '../db/generated/client.ts';
import { FLAG_BITS, IS_PRIVATE } from '../domain/message-flags.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../domain/realm-settings.ts';
import { ApiError } from '../errors.ts';
import { cachedChannel, channelAccess } from './channels.ts';
import type { RealmInfo } from './realms.ts';
import { findUserByEmail, userInRealm } from './users.ts';
import { likePattern } from '../db/text-match.ts';
import { isGuest } from '../auth/policy.ts';
import { rawQuery, rawQueryPlannedPerCall } from '../db/transaction.ts';

const operand = z.union([z.string(), z.number().int(), z.array(z.number().int())]);
export const narrowSchema = z.array(
  z.union([
    z.object({ operator: z.string(), operand, negated: z.boolean().optional() }).strict(),
    z.tuple([z.string(), z.string()]).transform(([operator, operandValue]) => ({ operator, operand: operandValue, negated: undefined })),
  ]),
);
export type NarrowTerm = { operator: string; operand: string | number | number[]; negated?: boolean };

/** Legacy operator names (Zulip still takes the underscore spellings too) and the operator each now is. */
export const CANONICAL_OPERATORS: Record<string, string> = {
  stream: 'channel',
  streams: 'channels',
  subject: 'topic',
  'pm-with': 'dm',
  pm_with: 'dm',
  group_pm_with: 'group-pm-with',
};

/** Zulip's BadNarrowOperatorError, whose `desc` the error carries too. */
export const badNarrow = (desc: string) => new ApiError(`Invalid narrow operator: ${desc}`, 'BAD_NARROW', 400, { desc });

/** Topic operands and parameters: the realm's display name for the empty topic means "". */
export function normalizeTopicName(topic: string): string {
  const trimmed = topic.trim();
  return trimmed === EMPTY_TOPIC_DISPLAY_NAME || trimmed === '(no topic)' ? '' : trimmed;
}

/** SQL conditions over `m` (Message) and `um` (the user's UserMessage row, null for history). */
export interface CompiledNarrow {
  /** Search every message of the named channels, not only the user's UserMessage rows. */
  history: boolean;
  conditions: string[];
  params: unknown[];
}

class SqlParams {
  readonly values: unknown[] = [];
  constructor(start: unknown[] = []) {
    this.values.push(...start);
  }
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

async function channelCondition(
  app: App,
  realm: RealmInfo,
  user: User,
  value: NarrowTerm['operand'],
  sql: SqlParams,
): Promise<{ cond: string; history: boolean }> {
  const channel = typeof value === 'number' || typeof value === 'string' ? await cachedChannel(app, realm, value) : null;
  if (!channel) throw badNarrow(`unknown channel ${String(value)}`);
  const access = await channelAccess(app, realm, user, channel);
  return { cond: `m."channelId" = ${sql.add(channel.id)}`, history: access.content && channel.historyPublicToSubscribers };
}

/** Python's str() of an operand, as Zulip's error descriptions show it: "[1, 2]" for a list. */
const operandText = (value: NarrowTerm['operand']) => (Array.isArray(value) ? `[${value.join(', ')}]` : String(value));

/** The users an operand names (ids, or comma-separated emails); `unknown` describes the error when one is not found. */
async function userIdsOf(
  app: App,
  realm: RealmInfo,
  user: User,
  value: NarrowTerm['operand'],
  unknown = `unknown user ${operandText(value)}`,
): Promise<number[]> {
  const items = Array.isArray(value)
    ? value
    : typeof value === 'number'
      ? [value]
      : value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
  const ids: number[] = [];
  for (const item of items) {
    const found = typeof item === 'number' ? await userInRealm(app, realm, item) : await findUserByEmail(app, realm, item, user);
    if (!found) throw badNarrow(unknown);
    ids.push(found.id);
  }
  return ids;
}

function isCondition(value: string): string {
  switch (value) {
    case 'dm':
    case 'private':
      return `(um.flags & ${IS_PRIVATE}) <> 0`;
    case 'unread':
      return `(um.flags & ${FLAG_BITS.read}) = 0`;
    case 'starred':
      return `(um.flags & ${FLAG_BITS.starred}) <> 0`;
    case 'mentioned':
      return `(um.flags & ${FLAG_BITS.mentioned | FLAG_BITS.stream_wildcard_mentioned | FLAG_BITS.topic_wildcard_mentioned}) <> 0`;
    case 'alerted':
      return `(um.flags & ${FLAG_BITS.has_alert_word}) <> 0`;
    case 'resolved':
      // A constant, so the planner can match the partial index Message_resolved_idx.
      return `(m."channelId" IS NOT NULL AND m.topic LIKE '✔ %')`;
    default:
      throw badNarrow(`unknown 'is' operand ${value}`);
  }
}

const HAS_CONDITIONS: Record<string, string> = {
  link: 'm."hasLink"',
  attachment: 'm."hasAttachment"',
  image: 'm."hasImage"',
  reaction: 'EXISTS (SELECT 1 FROM "Reaction" r WHERE r."messageId" = m.id)',
};

/** The "quoted phrases" of a search operand (Zulip's re.findall(r'"[^"]+"|\S+') keeping the quoted ones). */
function searchPhrases(value: string): string[] {
  return [...value.matchAll(/"([^"]+)"|\S+/g)].flatMap((m) => (m[1] === undefined ? [] : [m[1]]));
}

/** The text-search configuration of Message.searchVector (migration 20261128080000). */
export const SEARCH_CONFIG = 'english';

/**
 * How often a text-search query's words all occur together, when every one is among the search
 * vector's most common lexemes as ANALYZE records them (pg_stats), each word taken as independent
 * of the others; null when a word is outside them. A query with such a word (rarer than the rarest
 * one tracked) matches few enough messages to list; a query of common words only may match
 * millions, whose list alone the index takes a second to build at 10M messages. Without
 * statistics (a new database) every word counts as rare.
 */
async function commonWordsFrequency(app: App, query: string): Promise<number | null> {
  const words = [...query.matchAll(/'((?:[^']|'')*)'/g)].map((m) => m[1]!.replaceAll("''", "'"));
  if (words.length === 0) return null;
  const common = await commonLexemes(app);
  let frequency = 1;
  for (const word of words) {
    const own = common.get(word);
    if (own === undefined) return null;
    frequency *= own;
  }
  return frequency;
}

/** How long the most common lexemes are kept: they change only when ANALYZE runs (autovacuum's, after 2 % of the table changed). */
const COMMON_LEXEMES_TTL_MS = 10 * 60_000;
const commonLexemesOf = new WeakMap<App, { until: number; lexemes: Promise<Map<string, number>> }>();

/** The search vector's most common lexemes and the share of messages holding each, kept a while: planning a query of pg_stats takes milliseconds each search. */
function commonLexemes(app: App): Promise<Map<string, number>> {
  const kept = commonLexemesOf.get(app);
  if (kept && kept.until > Date.now()) return kept.lexemes;
  const lexemes = app.prisma.$queryRaw<{ lexemes: string[] | null; frequencies: number[] | null }[]>`
    SELECT most_common_elems::text::text[] AS lexemes, most_common_elem_freqs::float8[] AS frequencies FROM pg_stats
     WHERE schemaname = current_schema() AND tablename = 'Message' AND attname = 'searchVector'`.then(
    (rows) => new Map((rows[0]?.lexemes ?? []).map((lexeme, i) => [lexeme, rows[0]!.frequencies![i]!])),
  );
  commonLexemesOf.set(app, { until: Date.now() + COMMON_LEXEMES_TTL_MS, lexemes });
  lexemes.catch(() => commonLexemesOf.delete(app));
  return lexemes;
}

/**
 * Words at least this frequent together are matched message by message as the narrow is walked
 * in id order, never through the GIN index: a page of 50 then walks about 5,000 messages at most
 * where the narrow has them, where the index's list of the matches (every hundredth message of
 * history or more) took 20-50 ms at 1M messages for a common word in a small channel.
 */
const WALK_FREQUENCY = 0.01;

/** Up to one more than RARE_SEARCH_MATCHES ids of the messages that match. */
async function rareMatches(app: App, query: string): Promise<number[]> {
  const [row] = await rawQueryPlannedPerCall<{ ids: number[] }>(
    app,
    `SELECT array(SELECT id FROM "Message" WHERE "searchVector" @@ $1::tsquery LIMIT ${RARE_SEARCH_MATCHES + 1}) AS ids`,
    query,
  );
  return row!.ids;
}

/** A search matching at most this many messages (of any organization) is looked up by its matches first. */
const RARE_SEARCH_MATCHES = 1000;

const PLAIN_QUERY = `SELECT plainto_tsquery('${SEARCH_CONFIG}', $1)::text AS query`;

/**
 * Zulip's full-text search: every word of the operand, stemmed and without stop words, in the
 * topic or the content (the search vector's GIN index finds them), and each quoted phrase as is.
 * Newest first, PostgreSQL would read the newest messages one by one when it guesses the words
 * common, all of history for a word nobody wrote; so the matches are counted first, up to
 * RARE_SEARCH_MATCHES: fewer, and the narrow reads just those; more, and the newest come soon.
 * Words common enough (WALK_FREQUENCY) are not looked up in the index at all.
 */
async function searchConditions(app: App, value: string, sql: SqlParams): Promise<string[]> {
  const [{ query }] = await rawQuery<{ query: string }>(app, PLAIN_QUERY, value);
  // Whether the words are common comes from the search vector's statistics, not from listing the
  // matches: for a word in millions of messages that list took 0.9-1.4 s at 10M messages.
  const frequency = await commonWordsFrequency(app, query!);
  const looked = frequency === null;
  const ids = looked ? await rareMatches(app, query!) : [];
  const rare = looked && ids.length <= RARE_SEARCH_MATCHES;
  // ts_match_vq is what @@ calls; named as a function, no index serves it.
  const match =
    frequency !== null && frequency >= WALK_FREQUENCY
      ? `ts_match_vq(m."searchVector", ${sql.add(query)}::tsquery)`
      : `m."searchVector" @@ ${sql.add(query)}::tsquery`;
  const words = `${match}${rare ? ` AND m.id = ANY(${sql.add(ids)}::int[])` : ''}`;
  const phrases = searchPhrases(value).map((phrase) => {
    const p = sql.add(`%${likePattern(phrase)}%`);
    return `(m.content ILIKE ${p} OR m.topic ILIKE ${p})`;
  });
  return [words, ...phrases];
}

const CONVERSATION_ID = 'SELECT id FROM "DirectMessageGroup" WHERE "realmId" = $1 AND "memberKey" = $2';

async function dmCondition(app: App, realm: RealmInfo, user: User, value: NarrowTerm['operand'], sql: SqlParams): Promise<string> {
  const ids = await userIdsOf(app, realm, user, value, `unknown user in ${operandText(value)}`);
  const key = [...new Set([...ids, user.id])].sort((a, b) => a - b).join(',');
  const [group] = await rawQuery<{ id: number }>(app, CONVERSATION_ID, realm.id, key);
  return group ? `m."directGroupId" = ${sql.add(group.id)}` : 'FALSE';
}

/** Zulip's UserTopic visibility policies. */
const TOPIC_MUTED = 1;
const TOPIC_UNMUTED = 2;
const TOPIC_FOLLOWED = 3;

/**
 * in:home (Zulip's exclude_muting_conditions): not in the user's muted channels, unless the topic
 * is unmuted or followed there, and not in topics the user muted.
 */
function homeCondition(sql: SqlParams, user: User): string {
  const u = sql.add(user.id);
  const topicPolicy = (policies: string) =>
    `EXISTS (SELECT 1 FROM "UserTopic" ut WHERE ut."userId" = ${u} AND ut."channelId" = m."channelId" AND lower(ut.topic) = lower(m.topic) AND ut.visibility IN (${policies}))`;
  const mutedChannel = `m."channelId" IN (SELECT s."channelId" FROM "Subscription" s WHERE s."userId" = ${u} AND s.active AND s."isMuted")`;
  return `(m."channelId" IS NULL OR (NOT (${mutedChannel} AND NOT ${topicPolicy(`${TOPIC_UNMUTED}, ${TOPIC_FOLLOWED}`)}) AND NOT ${topicPolicy(String(TOPIC_MUTED))}))`;
}

const CHANNEL_OPERATORS = new Set(['channel', 'channels', 'topic']);
const DM_OPERATORS = new Set(['dm', 'dm-including', 'group-pm-with']);

/** Zulip refuses a narrow that asks for both a channel and direct messages (negated terms aside). */
function checkNotChannelAndDm(narrow: readonly NarrowTerm[]): void {
  const asked = narrow.filter((t) => !t.negated);
  const isDm = (t: NarrowTerm) => DM_OPERATORS.has(t.operator) || (t.operator === 'is' && (t.operand === 'dm' || t.operand === 'private'));
  if (asked.some((t) => CHANNEL_OPERATORS.has(t.operator)) && asked.some(isDm)) {
    throw badNarrow('No message can be both a channel message and direct message');
  }
}

/** A term's SQL: `parts` all hold; negated, none of them may (Zulip negates a search's parts one by one). */
interface TermSql {
  parts: string[];
  history?: boolean;
}

async function termCondition(app: App, realm: RealmInfo, user: User, term: NarrowTerm, sql: SqlParams): Promise<{ cond: string; history?: boolean } | TermSql> {
  const value = term.operand;
  const text = String(value);
  switch (term.operator) {
    case 'channel':
      return channelCondition(app, realm, user, value, sql);
    case 'channels':
      if (text !== 'public' && text !== 'web-public') throw badNarrow(`unknown channels operand ${text}`);
      return {
        cond: `m."channelId" IN (SELECT id FROM "Channel" WHERE "realmId" = ${sql.add(realm.id)} AND NOT "inviteOnly"${text === 'web-public' ? ' AND "isWebPublic"' : ''})`,
        history: !isGuest(user),
      };
    case 'topic':
      // The organization too, so that a topic without its channel is read from the realm's topic index.
      return {
        cond: `(m."channelId" IS NOT NULL AND m."realmId" = ${sql.add(realm.id)} AND upper(m.topic) = upper(${sql.add(normalizeTopicName(text))}))`,
      };
    case 'sender': {
      const [id] = await userIdsOf(app, realm, user, text === 'me' ? user.id : value);
      return { cond: `m."senderId" = ${sql.add(id)}` };
    }
    case 'dm':
      return { cond: await dmCondition(app, realm, user, value, sql) };
    case 'dm-including':
    case 'group-pm-with': {
      const [id] = await userIdsOf(app, realm, user, value);
      const like = sql.add(`%,${id},%`);
      // group-pm-with, which dm-including replaced, names group conversations only.
      const groupsOnly = term.operator === 'group-pm-with' ? ` AND cardinality(string_to_array("memberKey", ',')) >= 3` : '';
      return {
        cond: `m."directGroupId" IN (SELECT id FROM "DirectMessageGroup" WHERE "realmId" = ${sql.add(realm.id)} AND (',' || "memberKey" || ',') LIKE ${like}${groupsOnly})`,
      };
    }
    case 'in':
      if (text === 'all') return { cond: 'TRUE' };
      if (text !== 'home') throw badNarrow(`unknown 'in' operand ${text}`);
      return { cond: homeCondition(sql, user) };
    case 'is':
      return { cond: isCondition(text) };
    case 'has':
      if (!(text in HAS_CONDITIONS)) throw badNarrow(`unknown 'has' operand ${text}`);
      return { cond: HAS_CONDITIONS[text]! };
    case 'search':
      return { parts: await searchConditions(app, text, sql) };
    case 'id':
      if (!/^\d+$/.test(text)) throw badNarrow('Invalid message ID');
      return { cond: `m.id = ${sql.add(Number(text))}` };
    case 'near':
    case 'with':
      // Positioning hints for clients; they do not filter.
      return { cond: 'TRUE' };
    default:
      throw badNarrow(`unknown operator ${term.operator}`);
  }
}

/**
 * Compiles a narrow; `firstParams` are placed first ($1...) for the caller's own conditions.
 * History is searched only for a channel the user may read whole and when no `is:` term needs
 * a UserMessage row (Zulip's ok_to_include_history).
 */
export async function compileNarrow(
  app: App,
  realm: RealmInfo,
  user: User,
  narrow: readonly NarrowTerm[],
  firstParams: unknown[] = [],
): Promise<CompiledNarrow> {
  const sql = new SqlParams(firstParams);
  const conditions: string[] = [];
  let history = false;
  const terms = narrow.map((raw) => ({ ...raw, operator: CANONICAL_OPERATORS[raw.operator] ?? raw.operator }));
  for (const term of terms) {
    checkNotChannelAndDm(terms.slice(0, terms.indexOf(term) + 1));
    const compiled = await termCondition(app, realm, user, term, sql);
    // Zulip ignores the negation of in:home and in:all.
    const parts = 'parts' in compiled ? compiled.parts : [compiled.cond];
    if (term.negated && term.operator !== 'in') conditions.push(...parts.map((part) => `NOT COALESCE((${part}), FALSE)`));
    else {
      conditions.push(...parts);
      if (compiled.history) history = true;
    }
  }
  if (terms.some((t) => t.operator === 'is' && t.operand !== 'resolved')) history = false;
  return { history, conditions, params: sql.values };
}

/**
 * FROM clause and base condition for a compiled narrow; `$1` must be the user's id. `ids`: the
 * columns that hold the message id, each of which a bound on it (an anchor, a list) must name.
 */
export interface NarrowSource {
  from: string;
  where: string;
  ids: string[];
}

export function narrowSource(narrow: CompiledNarrow): NarrowSource {
  if (narrow.history) {
    return {
      ids: ['m.id'],
      // The user's row looked up per message (a lateral join, LIMIT 1 so it is not flattened): as a
      // plain join PostgreSQL may merge with the messageId index from its very start, reading every
      // row of history before an anchor (3M messages, a channel from id 500,000: 2.1 s).
      from: '"Message" m LEFT JOIN LATERAL (SELECT flags FROM "UserMessage" WHERE "userId" = $1 AND "messageId" = m.id LIMIT 1) um ON TRUE',
      where: ['TRUE', ...narrow.conditions].join(' AND '),
    };
  }
  return {
    from: '"UserMessage" um JOIN "Message" m ON m.id = um."messageId"',
    where: ['um."userId" = $1', ...narrow.conditions].join(' AND '),
    // PostgreSQL carries m.id = um."messageId" to equalities, not to ranges: bounded on m.id alone,
    // a page from an anchor walked the user's rows from their first (or newest) one to the anchor.
    ids: ['m.id', 'um."messageId"'],
  };
}
