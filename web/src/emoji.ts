// Emoji as Zulip shows them: its own images (Google's set, from the emoji-datasource-google package,
// served one file each by the server at /static/emoji/<set>/<code>.png) rather than the system's
// font, so they show on a machine that has none. The catalog of names and categories is a chunk
// of its own, loaded when the picker or the `:` typeahead first needs it.
import type { EmojiCategory, EmojiEntry, RealmEmoji } from './types.ts';

/** Where the images are, with the package's version in it (they are cached for good): set by the build. */
declare const __EMOJI_IMAGES__: string;

export const emojiImageUrl = (code: string) => `${__EMOJI_IMAGES__}${code}.png`;

let catalog: Promise<EmojiCategory[]> | null = null;

/** The Unicode emoji by category (loaded once). */
export function loadEmojiCatalog(): Promise<EmojiCategory[]> {
  catalog ??= import('./emoji/catalog.ts').then((m) => m.categories);
  return catalog;
}

/** The organization's custom emoji (GET /realm/emoji, realm_emoji events) as entries, active ones only. */
export function customEmoji(realmEmoji: Map<string, RealmEmoji>): EmojiEntry[] {
  return [...realmEmoji.values()].filter((e) => !e.deactivated).map((e) => ({ code: e.id, names: [e.name], url: e.source_url }));
}
