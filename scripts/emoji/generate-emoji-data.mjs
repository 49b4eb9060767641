#!/usr/bin/env node
// Builds src/emoji/emoji-data.json, the Unicode emoji name <-> code table,
// the way Zulip's tools/setup/emoji/generate_emoji_names does:
//   - which emoji exist: emoji-datasource-google (iamcal), those with a Google image,
//     no skin-tone variants or components;
//   - names: Zulip's curated names first (zulip-custom-names.json), otherwise the CLDR
//     text-to-speech name as the canonical name and CLDR keywords as aliases;
//   - an alias that collides with a canonical name, or that several emoji claim, is dropped;
//   - codes are dash-separated lowercase hex with every U+FE0F removed.
// Run: node scripts/emoji/generate-emoji-data.mjs
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const datasource = require('emoji-datasource-google/emoji.json');
const cldr = require('cldr-annotations-full/annotations/en/annotations.json').annotations.annotations;
const cldrDerived = require('cldr-annotations-derived-full/annotationsDerived/en/annotations.json').annotationsDerived.annotations;
const custom = JSON.parse(readFileSync(join(here, 'zulip-custom-names.json'), 'utf8'));
delete custom._comment;

function codeOf(unified) {
  return unified.toLowerCase().split('-').filter((c) => c !== 'fe0f').join('-');
}

function charsOf(code) {
  return code.split('-').map((h) => String.fromCodePoint(parseInt(h, 16))).join('');
}

/** Zulip's cleanup_name. */
function cleanupName(name) {
  return name
    .toLowerCase()
    .replace(/&/g, 'and')
    .replace(/[\s-]+/g, '_')
    .replace(/[^\p{L}\p{N}_+]/gu, '')
    .replace(/_+/g, '_')
    .replace(/^_|_$/g, '');
}

function asciiAlias(name) {
  return name.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
}

const codes = [];
for (const entry of datasource.sort((a, b) => a.sort_order - b.sort_order)) {
  if (!entry.has_img_google || entry.category === 'Component') continue;
  codes.push({ code: codeOf(entry.unified), entry });
}

const canonical = new Map();
const usedCanonical = new Set();
for (const { code, entry } of codes) {
  let names = custom[code];
  if (!names) {
    const chars = charsOf(code);
    const withVs = String.fromCodePoint(...entry.unified.split('-').map((h) => parseInt(h, 16)));
    const note = cldr[withVs] ?? cldr[chars] ?? cldrDerived[withVs] ?? cldrDerived[chars];
    const tts = note?.tts?.[0];
    const main = tts ? cleanupName(tts) : entry.short_name.replace(/-/g, '_');
    const aliases = (note?.default ?? []).map(cleanupName).filter((a) => a && a !== main);
    names = [main, ...aliases];
  }
  const main = names[0];
  if (usedCanonical.has(main)) continue;
  usedCanonical.add(main);
  canonical.set(code, { main, aliases: names.slice(1), curated: !!custom[code] });
}

// Drop aliases that are someone's canonical name, or that several non-curated emoji claim.
const aliasClaims = new Map();
for (const { aliases } of canonical.values()) for (const a of aliases) aliasClaims.set(a, (aliasClaims.get(a) ?? 0) + 1);
const nameToCode = {};
const codeToName = {};
for (const [code, { main }] of canonical) {
  nameToCode[main] = code;
  codeToName[code] = main;
}
for (const [code, { main, aliases, curated }] of canonical) {
  const all = [...aliases];
  const ascii = asciiAlias(main);
  if (ascii !== main) all.push(ascii);
  for (const alias of all) {
    if (alias in nameToCode) continue;
    if (!curated && aliasClaims.get(alias) > 1) continue;
    nameToCode[alias] = code;
  }
}

const sortedNames = Object.fromEntries(Object.entries(nameToCode).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
const out = { source: 'emoji-datasource-google + CLDR annotations + Zulip curated names', name_to_codepoint: sortedNames, codepoint_to_name: codeToName };
writeFileSync(join(here, '../../src/emoji/emoji-data.json'), JSON.stringify(out, null, 0) + '\n');
console.log(`${Object.keys(codeToName).length} emoji, ${Object.keys(sortedNames).length} names`);
