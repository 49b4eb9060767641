import type { Narrow } from './types.ts';
// The search box's language, as in Zulip's web app: `operator:operand` terms (`channel:general
// topic:"release plan" sender:ann@example.com is:starred has:link -is:resolved`) and free words,
// which become one `search` term. A query that is just a view (a channel, a topic, a conversation,
// mentions, starred, all direct messages) opens that view; suggestions complete the word being typed.

export interface Term {
  operator: string;
  operand: string;
  negated?: boolean;
}

/** Older names Zulip still accepts, by the name used now. */
const ALIASES: Record<string, string> = { stream: 'channel', subject: 'topic', from: 'sender', 'pm-with': 'dm', private: 'dm' };
const OPERATORS = new Set(['channel', 'topic', 'sender', 'dm', 'dm-including', 'is', 'has', 'in', 'id', 'channels']);
const IS_OPERANDS = ['mentioned', 'starred', 'dm', 'unread', 'resolved', 'alerted'];
const HAS_OPERANDS = ['link', 'image', 'attachment', 'reaction'];

const TOKEN = /(-?)([a-z-]+):("[^"]*"?|\S*)|"[^"]*"?|\S+/gi;
const unquote = (text: string) => text.replace(/^"|"$/g, '');

/** The terms of a query; free words (quoted phrases kept quoted, for the server) go last, as one search term. */
export function parseSearch(query: string): Term[] {
  const terms: Term[] = [];
  const words: string[] = [];
  for (const match of query.matchAll(TOKEN)) {
    const [token, negation, rawOperator, rawOperand] = match;
    const operator = rawOperator ? (ALIASES[rawOperator.toLowerCase()] ?? rawOperator.toLowerCase()) : '';
    if (!OPERATORS.has(operator) || !rawOperand) {
      words.push(token);
      continue;
    }
    const operand = operator === 'is' && rawOperand === 'private' ? 'dm' : unquote(rawOperand);
    terms.push({ operator, operand, ...(negation ? { negated: true } : {}) });
  }
  if (words.length) terms.push({ operator: 'search', operand: words.join(' ') });
  return terms;
}

export interface Directory {
  channelId(name: string): number | undefined;
  userId(email: string): number | undefined;
}

/** The narrows a query can name outright: every view but the search itself and the two overviews. */
type SimpleNarrow = Exclude<Narrow, { kind: 'search' | 'inbox' | 'recent' }>;

/** The view a query names, when it names one exactly (`channel:general topic:hi`, `is:starred`); else null (a search). */
export function viewOfQuery(query: string, directory: Directory): SimpleNarrow | null {
  const terms = parseSearch(query.trim());
  if (terms.length === 0) return { kind: 'home' };
  if (terms.some((t) => t.negated)) return null;
  const [first, second] = terms;
  const streamId = first!.operator === 'channel' ? directory.channelId(first!.operand) : undefined;
  if (terms.length === 2 && streamId !== undefined && second!.operator === 'topic') return { kind: 'topic', streamId, topic: second!.operand };
  if (terms.length > 1) return null;
  if (streamId !== undefined) return { kind: 'channel', streamId };
  if (first!.operator === 'dm') {
    const ids = first!.operand.split(',').map((email) => directory.userId(email.trim()));
    return ids.every((id) => id !== undefined) ? { kind: 'dm', userIds: (ids as number[]).sort((a, b) => a - b) } : null;
  }
  if (first!.operator !== 'is') return null;
  return first!.operand === 'mentioned'
    ? { kind: 'mentions' }
    : first!.operand === 'starred'
      ? { kind: 'starred' }
      : first!.operand === 'dm'
        ? { kind: 'dms' }
        : null;
}

export interface SuggestionSource {
  channels: string[];
  people: { name: string; email: string }[];
  /** The topics known for a channel, by its name. */
  topics(channel: string): string[];
}

const MAX_SUGGESTIONS = 8;
const quoteIfSpaced = (text: string) => (/\s/.test(text) ? `"${text}"` : text);

/**
 * Completions of the query's last word: an operator (`sen` gives `sender:`), or an operand
 * (`channel:gen` gives `channel:general`; people by name or email; topics of the channel named before).
 */
export function suggest(query: string, source: SuggestionSource): string[] {
  const match = /(-?)([a-z-]*)(:("[^"]*|\S*))?$/i.exec(query)!;
  const before = query.slice(0, match.index);
  const [, negation, rawOperator, colon, rawOperand] = match;
  const lower = (rawOperator ?? '').toLowerCase();
  const typed = unquote(rawOperand ?? '').toLowerCase();
  let completions: string[];
  if (!colon) {
    if (!lower) return [];
    const operators = ['channel:', 'topic:', 'sender:', 'dm:', ...IS_OPERANDS.map((o) => `is:${o}`), ...HAS_OPERANDS.map((o) => `has:${o}`)];
    completions = operators.filter((o) => o.startsWith(lower) && o !== lower);
  } else {
    const operator = ALIASES[lower] ?? lower;
    const named = parseSearch(before).find((t) => t.operator === 'channel')?.operand;
    const operands: string[] =
      operator === 'channel'
        ? source.channels
        : operator === 'topic'
          ? named
            ? source.topics(named)
            : []
          : operator === 'sender' || operator === 'dm' || operator === 'dm-including'
            ? source.people.filter((p) => p.name.toLowerCase().includes(typed) || p.email.toLowerCase().startsWith(typed)).map((p) => p.email)
            : operator === 'is'
              ? IS_OPERANDS
              : operator === 'has'
                ? HAS_OPERANDS
                : [];
    const people = operator === 'sender' || operator === 'dm' || operator === 'dm-including';
    completions = operands
      .filter((o) => people || o.toLowerCase().includes(typed))
      .filter((o) => o.toLowerCase() !== typed)
      .map((o) => `${operator}:${quoteIfSpaced(o)}`);
  }
  return completions.slice(0, MAX_SUGGESTIONS).map((c) => `${before}${negation}${c}`);
}
