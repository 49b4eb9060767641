// A preloaded context for the renderer tests: a few users, groups, channels and realm emoji.
import { compileLinkifiers, type Linkifier, type MarkdownContext, type MentionUser } from '../../src/markdown/index.ts';

export const USERS: MentionUser[] = [
  { id: 4, fullName: 'King Hamlet', isActive: true },
  { id: 5, fullName: "Cordelia, Lear's daughter", isActive: true },
  { id: 6, fullName: 'Othello', isActive: false },
  { id: 7, fullName: 'Twin', isActive: true },
  { id: 8, fullName: 'Twin', isActive: true },
  { id: 9, fullName: '<b>Evil</b> & Co', isActive: true },
];

export function makeContext(overrides: Partial<MarkdownContext> = {}, linkifiers: Linkifier[] = []): MarkdownContext {
  const groups = [
    { id: 31, name: 'support' },
    { id: 32, name: 'Old team', deactivated: true },
  ];
  const channels = [
    { id: 1, name: 'Denmark' },
    { id: 2, name: 'Verona street' },
    { id: 3, name: 'a.b' },
  ];
  return {
    realmUrl: 'http://zulip.testserver',
    users: {
      byId: (id) => USERS.find((u) => u.id === id),
      byName: (name) => USERS.filter((u) => u.fullName.toLowerCase() === name.toLowerCase()),
    },
    groups: { byName: (name) => groups.find((g) => g.name.toLowerCase() === name.toLowerCase()) },
    channels: {
      byName: (name) => channels.find((c) => c.name === name),
      byId: (id) => channels.find((c) => c.id === id),
      topicMessageId: (channelId, topic) => (channelId === 1 && topic === 'with id' ? 77 : undefined),
    },
    realmEmoji: {
      byName: (name) =>
        name === 'green_tick'
          ? { id: '1', name: 'green_tick', url: '/user_avatars/2/emoji/images/1.png', deactivated: false }
          : name === 'old_emoji'
            ? { id: '2', name: 'old_emoji', url: '/user_avatars/2/emoji/images/2.png', deactivated: true }
            : undefined,
    },
    linkifiers: compileLinkifiers(linkifiers),
    ...overrides,
  };
}
