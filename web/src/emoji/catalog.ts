// The Unicode emoji Zulip offers, by picker category (catalog.json, written by
// scripts/emoji/generate-emoji-data.mjs from the same tables as the server's names).
import data from './catalog.json';
import type { EmojiCategory } from '../types.ts';

export const categories: EmojiCategory[] = data.categories.map((c) => ({
  name: c.name,
  emoji: c.emoji.map(([code, ...names]) => ({ code: code!, names })),
}));
