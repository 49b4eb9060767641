#!/usr/bin/env node
// Builds src/emoji/emoji-data.json, the Unicode emoji name <-> code table, by the rules of
// Zulip's tools/setup/emoji/generate_emoji_names and build_emoji, from the same sources Zulip
// builds from (emoji-datasource-google 16, CLDR 48 annotations) and Zulip's curated names:
//   - every emoji of emoji-datasource-google, in that file's order, except the skin tones and
//     most clock faces;
//   - names: Zulip's curated names (zulip-custom-names.json: code -> [canonical, ...aliases]) where
//     it has them, otherwise CLDR's text-to-speech name as canonical and its keywords as aliases;
//   - an alias that is some emoji's canonical name is dropped; one that several emoji claim is
//     kept only by the curated ones; a non-ASCII name gets an ASCII alias;
//   - codes are dash-separated lowercase hex with every U+FE0F removed.
// It also writes web/src/emoji/catalog.json, what the web client's emoji picker and `:` typeahead
// offer: Zulip's picker categories in emoji-datasource's order, each emoji as [code, canonical
// name, ...aliases].
// Run: node scripts/emoji/generate-emoji-data.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const datasource = require('emoji-datasource-google/emoji.json');
const cldr = {
  ...require('cldr-annotations-full/annotations/en/annotations.json').annotations.annotations,
  ...require('cldr-annotations-derived-full/annotationsDerived/en/annotations.json').annotationsDerived.annotations,
};
const curated = JSON.parse(readFileSync(join(here, 'zulip-custom-names.json'), 'utf8'));
delete curated._comment;

// Zulip offers only a few clock faces (its curated list names them), and skin tones only as modifiers.
const SKIPPED_CODES = new Set([
  ...['1f550', '1f551', '1f552', '1f553', '1f554', '1f555', '1f556', '1f558', '1f559', '1f55a', '1f55b', '1f55c'],
  ...['1f55d', '1f55e', '1f55f', '1f560', '1f561', '1f562', '1f563', '1f564', '1f565', '1f566', '1f567'],
  ...['1f3fb', '1f3fc', '1f3fd', '1f3fe', '1f3ff'],
]);
// Non-ASCII names that keep no ASCII twin: their emoji have ASCII aliases already.
const NO_ASCII_TWIN = new Set(['ココ', 'サ', '指', '空']);
const ASCII_FOLDS = { è: 'e', ǐ: 'i', ó: 'o', ā: 'a', ō: 'o', ñ: 'n', ô: 'o', ç: 'c', é: 'e', ã: 'a', í: 'i', å: 'a', ü: 'u' };

const unqualified = (unified) => unified.split('-').filter((h) => h.toLowerCase() !== 'fe0f');
const codeOf = (unified) =>
  unqualified(unified)
    .map((h) => h.toLowerCase())
    .join('-');
const textOf = (unified) => String.fromCodePoint(...unqualified(unified).map((h) => parseInt(h, 16)));

/** A CLDR phrase as an emoji name: spaces and dashes to underscores, some punctuation dropped. */
function cleanupName(name) {
  return name
    .replace(/[ \-–]/g, '_')
    .replace(/[“”:.,()‘’']/g, '')
    .replace(/&/g, 'and')
    .replace(/_{2,}/g, '_')
    .toLowerCase();
}

function asciiTwin(name) {
  const folded = [...name].map((c) => ASCII_FOLDS[c] ?? c).join('');
  if (!/^[\x00-\x7f]*$/.test(folded)) throw new Error(`${name} still has non-ASCII characters: add them to ASCII_FOLDS`);
  return folded;
}

const removeOne = (list, item) => {
  const at = list.indexOf(item);
  if (at >= 0) list.splice(at, 1);
};

const emoji = new Map(); // code -> { canonical, aliases }
const canonicalNames = new Set();
for (const entry of datasource) {
  const code = codeOf(entry.unified);
  if (SKIPPED_CODES.has(code)) continue;
  let names;
  if (curated[code]) {
    names = { canonical: curated[code][0], aliases: curated[code].slice(1) };
  } else {
    const note = cldr[textOf(entry.unified)];
    if (!note) continue;
    names = { canonical: cleanupName(note.tts[0].trim()), aliases: note.default.map((a) => cleanupName(a.trim())) };
  }
  const key = cleanupName(names.canonical);
  if (canonicalNames.has(key)) throw new Error(`${key} names two emoji: give ${code} a curated name`);
  canonicalNames.add(key);
  emoji.set(code, names);
}

const claims = new Map(); // alias -> codes claiming it (once per claim)
for (const [code, names] of emoji) {
  for (const alias of [...names.aliases]) {
    if (canonicalNames.has(alias)) removeOne(names.aliases, alias);
    else claims.set(alias, [...(claims.get(alias) ?? []), code]);
  }
}
for (const [alias, codes] of claims) {
  if (codes.length < 2) continue;
  for (const code of codes) if (!curated[code]) removeOne(emoji.get(code).aliases, alias);
}
for (const [code, names] of emoji) {
  for (const name of [names.canonical, ...names.aliases]) {
    if (NO_ASCII_TWIN.has(name) || /^[\x00-\x7f]*$/.test(name)) continue;
    const twin = asciiTwin(name);
    for (const other of claims.get(twin) ?? []) removeOne(emoji.get(other).aliases, twin);
    names.aliases.push(twin);
  }
}

const nameToCode = {};
const codeToName = {};
for (const [code, { canonical, aliases }] of emoji) {
  codeToName[code] = canonical;
  for (const name of [canonical, ...aliases]) nameToCode[name] = code;
}
const sortedNames = Object.fromEntries(Object.entries(nameToCode).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
const out = { source: 'emoji-datasource-google + CLDR annotations + Zulip curated names', name_to_codepoint: sortedNames, codepoint_to_name: codeToName };
writeFileSync(join(here, '../../src/emoji/emoji-data.json'), JSON.stringify(out, null, 0) + '\n');

// The picker's categories (Zulip's: the datasource's, skin-tone components left out), in order.
const CATEGORIES = ['Smileys & Emotion', 'People & Body', 'Animals & Nature', 'Food & Drink', 'Activities', 'Travel & Places', 'Objects', 'Symbols', 'Flags'];
const byCategory = new Map(CATEGORIES.map((c) => [c, []]));
for (const entry of [...datasource].sort((a, b) => a.sort_order - b.sort_order)) {
  const code = codeOf(entry.unified);
  const names = emoji.get(code);
  if (names && byCategory.has(entry.category)) byCategory.get(entry.category).push([code, names.canonical, ...names.aliases]);
}
const catalog = { categories: [...byCategory].map(([name, list]) => ({ name, emoji: list })) };
writeFileSync(join(here, '../../web/src/emoji/catalog.json'), JSON.stringify(catalog) + '\n');
console.log(`${Object.keys(codeToName).length} emoji, ${Object.keys(sortedNames).length} names`);
