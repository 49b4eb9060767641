// How people, conversations and times are named on screen.
import type { AppState } from './state.ts';
import type { Message, Narrow } from './types.ts';

export function userName(state: AppState, id: number): string {
  return state.users.get(id)?.full_name ?? `User ${id}`;
}

/** A direct-message conversation by its key: the other people's names, or "yourself". */
export function dmName(state: AppState, key: string): string {
  const ids = key.split(',').map(Number);
  if (ids.length === 1 && ids[0] === state.me.userId) return `${state.me.fullName} (you)`;
  return ids.map((id) => userName(state, id)).join(', ');
}

export const channelName = (state: AppState, id: number) => state.subs.get(id)?.name ?? state.channels.get(id)?.name ?? `channel ${id}`;

export function narrowTitle(state: AppState, narrow: Narrow): string {
  switch (narrow.kind) {
    case 'home':
      return 'Combined feed';
    case 'channel':
      return `#${channelName(state, narrow.streamId)}`;
    case 'topic':
      return `#${channelName(state, narrow.streamId)} › ${narrow.topic}`;
    case 'dm':
      return dmName(state, narrow.userIds.join(','));
    case 'mentions':
      return 'Mentions';
    case 'starred':
      return 'Starred messages';
    case 'dms':
      return 'Direct messages';
    case 'inbox':
      return 'Inbox';
    case 'recent':
      return 'Recent conversations';
    case 'search':
      return `Search: ${narrow.query}`;
  }
}

/** What separates runs of messages: the channel and topic, or the conversation. */
export function recipientKey(m: Message): string {
  return m.type === 'stream'
    ? `s:${m.stream_id}:${m.subject.toLowerCase()}`
    : `d:${
        Array.isArray(m.display_recipient)
          ? m.display_recipient
              .map((u) => u.id)
              .sort()
              .join(',')
          : ''
      }`;
}

// The user's twenty_four_hour_time decides the clock, whatever the browser's language would choose (Zulip's "Time format").
const timeOfDay12 = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit', hourCycle: 'h12' });
const timeOfDay24 = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit', hourCycle: 'h23' });
const fullDate12 = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'short', hourCycle: 'h12' });
const fullDate24 = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'short', hourCycle: 'h23' });
const dayFormat = new Intl.DateTimeFormat(undefined, { weekday: 'long', year: 'numeric', month: 'long', day: 'numeric' });

export const formatTime = (seconds: number, twentyFourHour: boolean) => (twentyFourHour ? timeOfDay24 : timeOfDay12).format(seconds * 1000);
export const formatFullDate = (seconds: number, twentyFourHour: boolean) => (twentyFourHour ? fullDate24 : fullDate12).format(seconds * 1000);
export const formatDay = (seconds: number) => dayFormat.format(seconds * 1000);
export const dayOf = (seconds: number) => new Date(seconds * 1000).toDateString();

/** Initials for an avatar without a picture. */
export function initials(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean);
  return ((words[0]?.[0] ?? '?') + (words.length > 1 ? words[words.length - 1]![0] : '')).toUpperCase();
}

/** A stable hue per user, for avatars. */
export const userHue = (id: number) => (id * 137) % 360;
