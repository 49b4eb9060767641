// What the message list shows (a narrow), how it is written in the page's address (Zulip's
// `#narrow/...` fragments, so links inside messages work here too), how it is asked of
// GET /messages, and whether a new message belongs in it.
import { parseSearch } from './search.ts';
import type { Message, Narrow } from './types.ts';

export interface Route {
  narrow: Narrow;
  /** `/near/<id>`: the message to show first. */
  near: number | null;
}

export const HOME: Narrow = { kind: 'home' };

/** Zulip's hash component encoding: percent-encoding with `.` for `%`. */
export function encodeHashComponent(text: string): string {
  return encodeURIComponent(text)
    .replace(/[!'()*.]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%/g, '.');
}

function decodeHashComponent(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\./g, '%'));
  } catch {
    return text;
  }
}

const slug = (name: string) => encodeHashComponent(name.replace(/ /g, '-'));

export function narrowHash(narrow: Narrow, names: { channel(id: number): string; user(id: number): string }): string {
  switch (narrow.kind) {
    case 'home':
      return '#';
    case 'channel':
      return `#narrow/channel/${narrow.streamId}-${slug(names.channel(narrow.streamId))}`;
    case 'topic':
      return `#narrow/channel/${narrow.streamId}-${slug(names.channel(narrow.streamId))}/topic/${encodeHashComponent(narrow.topic)}`;
    case 'dm': {
      const suffix = narrow.userIds.length > 1 ? 'group' : slug(names.user(narrow.userIds[0]!));
      return `#narrow/dm/${narrow.userIds.join(',')}-${suffix}`;
    }
    case 'mentions':
      return '#narrow/is/mentioned';
    case 'starred':
      return '#narrow/is/starred';
    case 'dms':
      return '#narrow/is/dm';
    case 'inbox':
      return '#inbox';
    case 'recent':
      return '#recent';
    case 'search':
      return `#narrow/search/${encodeHashComponent(narrow.query)}`;
  }
}

const leadingId = (part: string | undefined) => {
  const id = Number.parseInt(part ?? '', 10);
  return Number.isInteger(id) && id > 0 ? id : null;
};

export function parseHash(hash: string): Route {
  const parts = hash.replace(/^#/, '').split('/');
  if (parts[0] === 'inbox' || parts[0] === 'recent') return { narrow: { kind: parts[0] }, near: null };
  if (parts[0] !== 'narrow') return { narrow: HOME, near: null };
  let narrow: Narrow = HOME;
  let near: number | null = null;
  for (let i = 1; i + 1 < parts.length; i += 2) {
    const operator = parts[i]!;
    const operand = parts[i + 1]!;
    if ((operator === 'channel' || operator === 'stream') && leadingId(operand)) narrow = { kind: 'channel', streamId: leadingId(operand)! };
    else if (operator === 'topic' && narrow.kind === 'channel') narrow = { ...narrow, kind: 'topic', topic: decodeHashComponent(operand) };
    else if (operator === 'dm' || operator === 'pm-with') {
      const ids = operand.split('-')[0]!.split(',').map(leadingId);
      if (ids.length && ids.every((id) => id !== null)) narrow = { kind: 'dm', userIds: (ids as number[]).sort((a, b) => a - b) };
    } else if (operator === 'is' && operand === 'mentioned') narrow = { kind: 'mentions' };
    else if (operator === 'is' && operand === 'starred') narrow = { kind: 'starred' };
    else if (operator === 'is' && (operand === 'dm' || operand === 'private')) narrow = { kind: 'dms' };
    else if (operator === 'search') narrow = { kind: 'search', query: decodeHashComponent(operand) };
    else if (operator === 'near' || operator === 'with') near = leadingId(operand);
  }
  return { narrow, near };
}

/** The `narrow` parameter of GET /messages. */
export function apiNarrow(narrow: Narrow): { operator: string; operand: unknown; negated?: boolean }[] {
  switch (narrow.kind) {
    case 'home':
    case 'inbox':
    case 'recent':
      return [{ operator: 'in', operand: 'home' }];
    case 'channel':
      return [{ operator: 'channel', operand: narrow.streamId }];
    case 'topic':
      return [
        { operator: 'channel', operand: narrow.streamId },
        { operator: 'topic', operand: narrow.topic },
      ];
    case 'dm':
      return [{ operator: 'dm', operand: narrow.userIds }];
    case 'mentions':
      return [{ operator: 'is', operand: 'mentioned' }];
    case 'starred':
      return [{ operator: 'is', operand: 'starred' }];
    case 'dms':
      return [{ operator: 'is', operand: 'dm' }];
    case 'search':
      // Channels and people by name or email: the API takes them so.
      return parseSearch(narrow.query);
  }
}

/** A direct-message conversation's key: the other participants' ids, or the user alone for notes to self. */
export function dmKey(participantIds: number[], myId: number): string {
  const others = [...new Set(participantIds)].filter((id) => id !== myId).sort((a, b) => a - b);
  return (others.length ? others : [myId]).join(',');
}

/** A narrow with its conversation named the one way dmKey() names it (addresses may list the user too). */
export function normalizeNarrow(narrow: Narrow, myId: number): Narrow {
  return narrow.kind === 'dm' ? { kind: 'dm', userIds: dmKey(narrow.userIds, myId).split(',').map(Number) } : narrow;
}

export function messageDmKey(message: Message, myId: number): string {
  return dmKey(Array.isArray(message.display_recipient) ? message.display_recipient.map((u) => u.id) : [], myId);
}

export const sameTopic = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** A topic without the ✔ that marks it resolved. */
export const unresolvedTopic = (topic: string) => topic.replace(/^✔\s*/, '');

/**
 * Whether a message arriving live belongs at the end of this narrow. Home leaves out muted
 * channels and topics (`isMuted`); search results are not extended live.
 */
export function narrowMatches(narrow: Narrow, message: Message, myId: number, isMuted: (m: Message) => boolean): boolean {
  switch (narrow.kind) {
    case 'home':
    case 'inbox':
    case 'recent':
      return !isMuted(message);
    case 'channel':
      return message.type === 'stream' && message.stream_id === narrow.streamId;
    case 'topic':
      return message.type === 'stream' && message.stream_id === narrow.streamId && sameTopic(message.subject, narrow.topic);
    case 'dm':
      return message.type === 'private' && messageDmKey(message, myId) === dmKey(narrow.userIds, myId);
    case 'mentions':
      return message.flags.some((f) => f === 'mentioned' || f === 'wildcard_mentioned');
    case 'starred':
      return message.flags.includes('starred');
    case 'dms':
      return message.type === 'private';
    case 'search':
      return false;
  }
}

export function sameNarrow(a: Narrow, b: Narrow): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
