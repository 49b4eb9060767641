// The Unicode emoji Zulip offers, by picker category (catalog.json, written by
// scripts/emoji/generate-emoji-data.mjs from the same tables as the server's names).
import type { EmojiCategory } from '../emoji.ts';
import data from './catalog.json';

export const categories: EmojiCategory[] = data.categories.map((c) => ({
  name: c.name,
  emoji: c.emoji.map(([code, ...names]) => ({ code: code!, names })),
}));
