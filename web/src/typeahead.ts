// What the compose box offers to complete, as Zulip's composebox typeahead does: `@` people,
// groups and wildcards (`@_` silently), `#` channels and then, after `>`, their topics, `:`
// emoji. Each suggestion knows the Markdown it puts in place of what was typed.
import type { Channel, User, UserGroup, EmojiEntry } from './types.ts';

/** At most this many suggestions show (Zulip's typeahead shows eight). */
export const MAX_SUGGESTIONS = 8;

/** What is being typed before the caret: its kind, the text after its trigger, and where it starts. */
export type Completion =
  | { kind: 'mention'; silent: boolean; query: string; start: number }
  | { kind: 'channel'; query: string; start: number }
  | { kind: 'topic'; channel: string; query: string; start: number }
  | { kind: 'emoji'; query: string; start: number };

// A completion starts at the beginning, after a space or an opening bracket.
const MENTION = /(?<=^|[\s(])@(_?)(?:\*{1,2})?([^\n@*]{0,40})$/;
const CHANNEL = /(?<=^|[\s(])#(?:\*\*)?([^\n*#>]+)$/;
const TOPIC = /(?<=^|[\s(])#\*\*([^*>\n]+)>([^*\n]*)$/;
const EMOJI = /(?<=^|[\s(]):([+\-\w]+)$/;
/** After the caret: the end, a space or punctuation; else the caret is inside a finished word. */
const TERMINAL = /^($|[\s,.;?!()[\]>"'])/;

/** The completion the text before the caret asks for, if any. */
export function completionAt(before: string, after: string): Completion | null {
  if (!TERMINAL.test(after)) return null;
  let m = TOPIC.exec(before);
  if (m) return m[2]!.startsWith(' ') ? null : { kind: 'topic', channel: m[1]!, query: m[2]!, start: m.index };
  m = MENTION.exec(before);
  if (m) return m[2]!.startsWith(' ') ? null : { kind: 'mention', silent: m[1] === '_', query: m[2]!, start: m.index };
  m = CHANNEL.exec(before);
  if (m) return m[1]!.startsWith(' ') ? null : { kind: 'channel', query: m[1]!, start: m.index };
  m = EMOJI.exec(before);
  // `:P`, `:-)` and a colon before a digit are not emoji being typed.
  if (m && (m[1]!.length > 1 || /^[+a-z]/i.test(m[1]!)) && !/^-.?$/.test(m[1]!)) return { kind: 'emoji', query: m[1]!, start: m.index };
  return null;
}

export interface Suggestion {
  key: string;
  /** What the list shows. */
  label: string;
  /** Shown beside it, dimmed (an email, a description). */
  detail?: string;
  /** The emoji to show before the label. */
  emoji?: { code?: string; url?: string };
  /** The text that replaces the completion, from its start. */
  text: string;
}

export interface CompletionSource {
  users: User[];
  groups: UserGroup[];
  channels: Channel[];
  /** The channel written to, when it is one: wildcards differ. */
  toChannel: boolean;
  topics(streamId: number): string[] | undefined;
  /** The emoji, once their catalog is loaded. */
  emoji: EmojiEntry[] | null;
}

/**
 * How well `text` matches `query`: 0 starts with it, 1 a later word does, null not at all (Zulip
 * matches names by the start of any word).
 */
export function matchRank(text: string, query: string): number | null {
  const t = text.toLowerCase();
  const q = query.toLowerCase();
  if (t.startsWith(q)) return 0;
  return t.split(/[\s_\-]+/).some((word) => word.startsWith(q)) ? 1 : null;
}

/** Items matching `query` by one of their names, best first; ties keep their order. */
export function rankBy<T>(items: T[], query: string, names: (item: T) => string[]): T[] {
  const ranked: { item: T; rank: number; order: number }[] = [];
  items.forEach((item, order) => {
    const ranks = names(item)
      .map((n) => matchRank(n, query))
      .filter((r): r is number => r !== null);
    if (ranks.length) ranked.push({ item, rank: Math.min(...ranks), order });
  });
  return ranked.sort((a, b) => a.rank - b.rank || a.order - b.order).map((r) => r.item);
}

const WILDCARDS_IN_CHANNELS = ['all', 'everyone', 'channel', 'topic'];
const WILDCARDS_IN_DMS = ['all', 'everyone'];

/** `@**Name**`, with the id when another active person has the same name, as Zulip writes it. */
export function mentionOf(user: User, users: User[], silent: boolean): string {
  const twins = users.filter((u) => u.full_name.toLowerCase() === user.full_name.toLowerCase()).length > 1;
  return `@${silent ? '_' : ''}**${user.full_name}${twins ? `|${user.user_id}` : ''}**`;
}

function mentions(c: Extract<Completion, { kind: 'mention' }>, source: CompletionSource): Suggestion[] {
  const people = rankBy(source.users, c.query, (u) => [u.full_name, u.email]).map((u) => ({
    key: `user:${u.user_id}`,
    label: u.full_name,
    detail: u.email,
    text: `${mentionOf(u, source.users, c.silent)} `,
  }));
  // Wildcards notify everyone: a silent mention has no use for them.
  const wildcards = c.silent
    ? []
    : rankBy(source.toChannel ? WILDCARDS_IN_CHANNELS : WILDCARDS_IN_DMS, c.query, (w) => [w]).map((w) => ({
        key: `wildcard:${w}`,
        label: w,
        detail: w === 'topic' ? 'Notify topic' : source.toChannel ? 'Notify channel' : 'Notify recipients',
        text: `@**${w}** `,
      }));
  const groups = rankBy(
    source.groups.filter((g) => !g.is_system_group && !g.deactivated),
    c.query,
    (g) => [g.name],
  ).map((g) => ({
    key: `group:${g.id}`,
    label: g.name,
    detail: g.description || 'User group',
    text: `@${c.silent ? '_' : ''}*${g.name}* `,
  }));
  return [...people, ...wildcards, ...groups];
}

function topicSuggestions(c: Extract<Completion, { kind: 'topic' }>, source: CompletionSource): Suggestion[] {
  const channel = source.channels.find((ch) => ch.name.toLowerCase() === c.channel.toLowerCase());
  if (!channel) return [];
  const known = source.topics(channel.stream_id) ?? [];
  const topics = rankBy(known, c.query, (t) => [t]);
  // A topic not there yet can be linked too.
  if (c.query.trim() && !known.some((t) => t.toLowerCase() === c.query.toLowerCase())) topics.push(c.query);
  const linkTo = (topic: string | null): Suggestion => ({
    key: topic === null ? 'channel' : `topic:${topic}`,
    label: topic === null ? `#${channel.name}` : topic,
    detail: topic === null ? 'Link to the channel' : `#${channel.name}`,
    text: `#**${channel.name}${topic === null ? '' : `>${topic}`}** `,
  });
  return [...(c.query ? [] : [linkTo(null)]), ...topics.map(linkTo)];
}

/** Emoji with a name matching `query`, best first (an exact name, then names or their words starting with it), each by its best name. */
export function searchEmoji(query: string, emoji: EmojiEntry[], limit: number): { entry: EmojiEntry; name: string }[] {
  const q = query.toLowerCase();
  const ranked: { entry: EmojiEntry; name: string; rank: number; order: number }[] = [];
  emoji.forEach((entry, order) => {
    let best: { name: string; rank: number } | null = null;
    for (const name of entry.names) {
      const rank = name === q ? -1 : matchRank(name, q);
      if (rank !== null && (!best || rank < best.rank)) best = { name, rank };
    }
    if (best) ranked.push({ entry, ...best, order });
  });
  return ranked.sort((a, b) => a.rank - b.rank || a.order - b.order).slice(0, limit);
}

function emojiSuggestions(query: string, emoji: EmojiEntry[]): Suggestion[] {
  return searchEmoji(query, emoji, MAX_SUGGESTIONS).map(({ entry, name }) => ({
    key: `emoji:${name}`,
    label: `:${name}:`,
    emoji: entry.url ? { url: entry.url } : { code: entry.code },
    text: `:${name}: `,
  }));
}

/** The suggestions for a completion, best first. */
export function suggestionsFor(c: Completion, source: CompletionSource): Suggestion[] {
  switch (c.kind) {
    case 'mention':
      return mentions(c, source).slice(0, MAX_SUGGESTIONS);
    case 'channel':
      // Picking a channel goes on to its topics (`#**name>`), where the first choice is the channel alone.
      return rankBy(source.channels, c.query, (ch) => [ch.name])
        .slice(0, MAX_SUGGESTIONS)
        .map((ch) => ({
          key: `channel:${ch.stream_id}`,
          label: `#${ch.name}`,
          detail: ch.description,
          text: `#**${ch.name}>`,
        }));
    case 'topic':
      return topicSuggestions(c, source).slice(0, MAX_SUGGESTIONS);
    case 'emoji':
      return source.emoji ? emojiSuggestions(c.query, source.emoji) : [];
  }
}

/** The text before the caret once `suggestion` replaced the completion. */
export function applySuggestion(before: string, c: Completion, suggestion: Suggestion): string {
  return before.slice(0, c.start) + suggestion.text;
}
