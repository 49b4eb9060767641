// Zulip's inline patterns, in Zulip's priority order (highest first).
import { emojiCodeByName, emojiCodeOfText, emojiNameByCode } from '../emoji/index.ts';
import { etElement, type EtElement, type InlineEngine, type InlinePattern } from './inline.ts';
import { ACTUAL_GROUP, BEFORE_GROUP, type CompiledLinkifiers, expandLinkifier } from './linkifiers.ts';
import { encodeStream, hashUtilEncode, rewriteLocalLinkToRelative, sanitizeUrl, urlsplit, webLinkRegex, WORD } from './links.ts';
import { mediaSource } from './previews.ts';
import {
  EMPTY_TOPIC_FALLBACK_NAME,
  MENTIONS_SOURCE,
  STREAM_LINK_SOURCE,
  STREAM_TOPIC_LINK_SOURCE,
  STREAM_TOPIC_MESSAGE_LINK_SOURCE,
  STREAM_WILDCARDS,
  TOPIC_WILDCARDS,
  USER_GROUP_MENTIONS_SOURCE,
} from './mention-syntax.ts';
import type { HtmlStash } from './preprocess.ts';
import { renderTex } from './tex.ts';
import { parseTimestamp } from './timestamp.ts';
import type { MarkdownContext, MentionUser } from './types.ts';

/** What the patterns record while rendering one message. */
export interface Collected {
  mentionedUserIds: Set<number>;
  mentionedGroupIds: Set<number>;
  wildcardMention: boolean;
  topicWildcardMention: boolean;
}

export interface PatternEnv {
  ctx: MarkdownContext;
  stash: HtmlStash;
  engine: InlineEngine;
  collected: Collected;
}

// Rendering is synchronous and not re-entrant, so the compiled pattern list is
// shared and reads the message being rendered from here.
let current: PatternEnv | undefined;

function env(): PatternEnv {
  if (!current) throw new Error('inline patterns used outside renderMarkdown');
  return current;
}

/** Run `fn` with `value` as the message being rendered. */
export function withPatternEnv<T>(value: PatternEnv, fn: () => T): T {
  const previous = current;
  current = value;
  try {
    return fn();
  } finally {
    current = previous;
  }
}

const BACKTICK_RE = /(?:(?<!\\)((?:\\{2})+)(?=`+)|(?<!\\)(`+)([^\n]+?)(?<!`)\2(?!`))/g;
const STRONG_EM_RE = /(\*\*\*)(?!\s+)([^*^\n]+)(?<!\s)\*\*\*/;
const TEX_RE = new RegExp(String.raw`(?<![${WORD}])(?<!\$)\$\$([^\n_$](?:\\\$|[^$\n])*)\$\$(?!\$)(?![${WORD}])`, 'u');
const TIMESTAMP_RE = /<time:([^>]*?)>/;
const LINK_RE = /(?<!!)\[/g;
const ENTITY_RE = /(&(?:#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z0-9]+);)/g;
const STRONG_RE = /(\*\*)([^\n]+?)\1/;
const EMPHASIS_RE = /(\*)(?!\s+)([^*^\n]+)(?<!\s)\*/;
const DEL_RE = /(?<!~)(~~)([^~\n]+?)(~~)(?!~)/;
const NOT_STRONG_RE = /((^|(?<=\s))(\*{1,3}|_{1,3})(?=\s|\n?$))/g;
const EMOJI_RE = new RegExp(String.raw`(:[${WORD}\-+]+:)`, 'u');
const BR_RE = /\n/g;
const EMOJI_PART = String.raw`(?:\p{Regional_Indicator}\p{Regional_Indicator}|\p{Emoji}(?:\p{Emoji_Modifier}|\uFE0F\u20E3?|[\u{E0020}-\u{E007E}]+\u{E007F})?)`;
const POSSIBLE_EMOJI_RE = new RegExp(String.raw`(${EMOJI_PART}(?:\u200D${EMOJI_PART})*)`, 'gu');
const TEXT_PRESENTATION_RE = /^\P{Emoji_Presentation}\u20E3?$/u;
const ID_SYNTAX_RE = /^(.+)?\|(\d+)$/s;

const EMOTICON_CONVERSIONS: Record<string, string> = {
  ':)': ':slight_smile:',
  '(:': ':slight_smile:',
  ':(': ':frown:',
  '<3': ':heart:',
  ':|': ':neutral:',
  ':/': ':confused:',
  ';)': ':wink:',
  ':D': ':smile:',
  ':o': ':open_mouth:',
  ':O': ':open_mouth:',
  ':p': ':stuck_out_tongue:',
  ':P': ':stuck_out_tongue:',
};
const TERMINAL = String.raw`,.;?!()\[\] "'\n\t`;
const EMOTICON_RE = new RegExp(
  `(?<![^${TERMINAL}])(` +
    Object.keys(EMOTICON_CONVERSIONS)
      .map((e) => e.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'))
      .join('|') +
    `)(?![^${TERMINAL}])`,
);

function atomicEl(tag: string, attrib: Record<string, string>, value: string): EtElement {
  return etElement(tag, attrib, value, true);
}

export function makeEmoji(code: string, displayString: string): EtElement {
  const title = displayString.slice(1, -1).replace(/_/g, ' ');
  return atomicEl('span', { class: `emoji emoji-${code}`, title, role: 'img', 'aria-label': title }, displayString);
}

function makeRealmEmoji(src: string, displayString: string): EtElement {
  return etElement('img', { src, class: 'emoji', alt: displayString, title: displayString.slice(1, -1).replace(/_/g, ' ') });
}

/** Zulip's url_to_a: a link element, or the plain text when the URL is not allowed. */
function urlToA(url: string, text?: string): EtElement | string {
  const href = sanitizeUrl(url);
  if (href === null) return url;
  return atomicEl('a', { href: rewriteLocalLinkToRelative(env().ctx.realmUrl, href) }, text ?? url);
}

function findUserByName(ctx: MarkdownContext, name: string): MentionUser | undefined {
  const users = ctx.users.byName(name);
  if (users.length <= 1) return users[0];
  const active = users.filter((u) => u.isActive);
  return active.length === 1 ? active[0] : undefined;
}

// Closing brackets for one string, so that a message full of '[' stays linear.
let bracketData: string | undefined;
let bracketClose: Int32Array | undefined;

/** Python-Markdown's LinkInlineProcessor.getText: the bracketed text, with nesting. */
function getLinkText(data: string, index: number): [string, number, boolean] {
  if (bracketData !== data) {
    bracketData = data;
    bracketClose = new Int32Array(data.length + 1).fill(-1);
    const open: number[] = [];
    for (let i = 0; i < data.length; i++) {
      if (data[i] === '[') open.push(i);
      else if (data[i] === ']' && open.length) bracketClose[open.pop()!] = i;
    }
  }
  const close = bracketClose![index - 1]!;
  if (close < 0) return ['', data.length, false];
  return [data.slice(index, close), close + 1, true];
}

const RE_LINK = /\(\s*(?:(<[^<>]*>)\s*(?:('[^']*'|"[^"]*")\s*)?\))?/y;

/** Python-Markdown's LinkInlineProcessor.getLink: href and optional title after the text. */
function getLink(data: string, index: number, unescapeText: (v: string) => string): [string, string | null, number, boolean] {
  let href = '';
  let title: string | null = null;
  let handled = false;
  RE_LINK.lastIndex = index;
  const m = RE_LINK.exec(data);
  if (m && m[1]) {
    href = m[1].slice(1, -1).trim();
    if (m[2]) title = m[2].slice(1, -1);
    index = m.index + m[0].length;
    handled = true;
  } else if (m) {
    let bracketCount = 1;
    let backtrackCount = 1;
    const startIndex = m.index + m[0].length;
    index = startIndex;
    let lastBracket = -1;
    let quote: string | null = null;
    let startQuote = -1;
    let exitQuote = -1;
    let ignoreMatches = false;
    let altQuote: string | null = null;
    let startAltQuote = -1;
    let exitAltQuote = -1;
    let last = '';
    for (let pos = index; pos < data.length; pos++) {
      const c = data[pos]!;
      if (c === '(') {
        if (!ignoreMatches) bracketCount++;
        else if (backtrackCount > 0) backtrackCount--;
      } else if (c === ')') {
        if ((exitQuote !== -1 && quote === last) || (exitAltQuote !== -1 && altQuote === last)) bracketCount = 0;
        else if (!ignoreMatches) bracketCount--;
        else if (backtrackCount > 0) {
          backtrackCount--;
          if (backtrackCount === 0) lastBracket = index + 1;
        }
      } else if (c === "'" || c === '"') {
        if (!quote) {
          ignoreMatches = true;
          backtrackCount = bracketCount;
          bracketCount = 1;
          startQuote = index + 1;
          quote = c;
        } else if (c !== quote && !altQuote) {
          startAltQuote = index + 1;
          altQuote = c;
        } else if (c === quote) {
          exitQuote = index + 1;
        } else if (altQuote && c === altQuote) {
          exitAltQuote = index + 1;
        }
      }
      index++;
      if (bracketCount === 0) {
        if (exitQuote >= 0 && quote === last) {
          href = data.slice(startIndex, startQuote - 1);
          title = data.slice(startQuote, exitQuote - 1);
        } else if (exitAltQuote >= 0 && altQuote === last) {
          href = data.slice(startIndex, startAltQuote - 1);
          title = data.slice(startAltQuote, exitAltQuote - 1);
        } else {
          href = data.slice(startIndex, index - 1);
        }
        break;
      }
      if (c !== ' ') last = c;
    }
    if (bracketCount !== 0 && backtrackCount === 0) {
      href = data.slice(startIndex, lastBracket - 1);
      index = lastBracket;
      bracketCount = 0;
    }
    handled = bracketCount === 0;
  }
  if (title !== null)
    title = unescapeText(title.trim())
      .replace(/^(["'])(.*)\1$/s, '$2')
      .replace(/\s/g, ' ');
  href = unescapeText(href).trim();
  return [href, title, index, handled];
}

function legacy(name: string, regex: RegExp, handle: (m: RegExpExecArray) => EtElement | string | null): InlinePattern {
  return { kind: 'legacy', name, regex, handle };
}

function simpleTag(name: string, regex: RegExp, tag: string): InlinePattern {
  return legacy(name, regex, (m) => etElement(tag, {}, m[2]!));
}

const MENTION_RE = new RegExp(MENTIONS_SOURCE, 'gu');
const GROUP_MENTION_RE = new RegExp(USER_GROUP_MENTIONS_SOURCE, 'gu');
const STREAM_TOPIC_MESSAGE_RE = new RegExp(STREAM_TOPIC_MESSAGE_LINK_SOURCE, 'gu');
const STREAM_TOPIC_RE = new RegExp(STREAM_TOPIC_LINK_SOURCE, 'gu');
const STREAM_RE = new RegExp(STREAM_LINK_SOURCE, 'gu');

function mentionPatterns(): InlinePattern[] {
  const userMention: InlinePattern = {
    kind: 'search',
    name: 'usermention',
    regex: MENTION_RE,
    handle: (m) => {
      const { ctx, collected } = env();
      let name = m[3]!;
      let silent = m[1] === '_';
      const topicWildcard = TOPIC_WILDCARDS.has(name);
      const streamWildcard = STREAM_WILDCARDS.has(name);
      let user: MentionUser | undefined;
      const idSyntax = ID_SYNTAX_RE.exec(name);
      if (idSyntax) {
        user = ctx.users.byId(Number(idSyntax[2]));
        if (idSyntax[1] && user && user.fullName !== idSyntax[1]) return null;
      } else {
        user = findUserByName(ctx, name);
      }
      let userId: string | null = null;
      if (streamWildcard) {
        if (!silent) collected.wildcardMention = true;
        userId = '*';
      } else if (topicWildcard) {
        if (!silent) collected.topicWildcardMention = true;
      } else if (user) {
        if (!user.isActive) silent = true;
        if (!silent) collected.mentionedUserIds.add(user.id);
        name = user.fullName;
        userId = String(user.id);
      } else {
        return null;
      }
      const attrib: Record<string, string> = {};
      if (userId) attrib['data-user-id'] = userId;
      let cls = topicWildcard ? 'topic-mention' : streamWildcard ? 'user-mention channel-wildcard-mention' : 'user-mention';
      if (silent) cls += ' silent';
      attrib.class = cls;
      return { node: atomicEl('span', attrib, silent ? name : `@${name}`), start: m.index, end: m.index + m[0].length };
    },
  };
  const groupMention: InlinePattern = {
    kind: 'search',
    name: 'usergroupmention',
    regex: GROUP_MENTION_RE,
    handle: (m) => {
      const { ctx, collected } = env();
      const group = ctx.groups.byName(m[3]!);
      if (!group) return null;
      const silent = m[1] === '_' || !!group.deactivated;
      if (!silent) collected.mentionedGroupIds.add(group.id);
      const attrib = { 'data-user-group-id': String(group.id), class: silent ? 'user-group-mention silent' : 'user-group-mention' };
      return { node: atomicEl('span', attrib, silent ? group.name : `@${group.name}`), start: m.index, end: m.index + m[0].length };
    },
  };
  return [userMention, groupMention];
}

function channelPatterns(): InlinePattern[] {
  const topicLinkContent = (el: EtElement, prefix: string, topic: string, suffix: string) => {
    if (topic === '') {
      el.text = prefix;
      const em = etElement('em', {}, EMPTY_TOPIC_FALLBACK_NAME, true);
      if (suffix) {
        em.tail = suffix;
        em.tailAtomic = true;
      }
      el.children.push(em);
    } else {
      el.text = prefix + topic + suffix;
    }
    el.atomic = true;
  };
  const message: InlinePattern = {
    kind: 'search',
    name: 'stream_topic_message',
    regex: STREAM_TOPIC_MESSAGE_RE,
    handle: (m) => {
      const { ctx } = env();
      const [, name, topic, messageId] = m as unknown as [string, string, string, string];
      const channel = ctx.channels.byName(name);
      if (!channel) return null;
      const href = `/#narrow/channel/${encodeStream(channel.id, name)}/topic/${hashUtilEncode(topic)}/near/${messageId}`;
      const a = etElement('a', { class: 'message-link', href });
      topicLinkContent(a, `#${name} > `, topic, ' @ 💬');
      return { node: a, start: m.index, end: m.index + m[0].length };
    },
  };
  const topic: InlinePattern = {
    kind: 'search',
    name: 'topic',
    regex: STREAM_TOPIC_RE,
    handle: (m) => {
      const { ctx } = env();
      const [, name, topicName] = m as unknown as [string, string, string];
      const channel = ctx.channels.byName(name);
      if (!channel) return null;
      let href = `/#narrow/channel/${encodeStream(channel.id, name)}/topic/${hashUtilEncode(topicName)}`;
      const withId = ctx.channels.topicMessageId?.(channel.id, topicName);
      if (withId !== undefined) href += `/with/${withId}`;
      const a = etElement('a', { class: 'stream-topic', 'data-stream-id': String(channel.id), href });
      topicLinkContent(a, `#${name} > `, topicName, '');
      return { node: a, start: m.index, end: m.index + m[0].length };
    },
  };
  const stream: InlinePattern = {
    kind: 'search',
    name: 'stream',
    regex: STREAM_RE,
    handle: (m) => {
      const { ctx } = env();
      const name = m[1]!;
      const channel = ctx.channels.byName(name);
      if (!channel) return null;
      const attrib = { class: 'stream', 'data-stream-id': String(channel.id), href: `/#narrow/channel/${encodeStream(channel.id, name)}` };
      return { node: atomicEl('a', attrib, `#${name}`), start: m.index, end: m.index + m[0].length };
    },
  };
  return [message, topic, stream];
}

function linkPattern(): InlinePattern {
  return {
    kind: 'search',
    name: 'link',
    regex: LINK_RE,
    handle: (m, data) => {
      const [text, afterText, textHandled] = getLinkText(data, m.index + m[0].length);
      if (!textHandled) return null;
      const { engine, ctx } = env();
      const unescapeText = (v: string) => engine.unescape(v);
      const [rawHref, title, end, handled] = getLink(data, afterText, unescapeText);
      if (!handled) return null;
      let href = sanitizeUrl(unescapeText(rawHref.trim()));
      if (href === null) return null;
      href = rewriteLocalLinkToRelative(ctx.realmUrl, href);
      const attrib: Record<string, string> = { href };
      if (title !== null) attrib.title = title;
      return { node: atomicEl('a', attrib, text.trim() ? text : href), start: m.index, end };
    },
  };
}

const IMAGE_LINK_RE = /!\[/g;
const SPINNER = '/static/images/loading/loader-black.svg';
/** Python's mimetypes (with Zulip's additions) for the audio types browsers play (AUDIO_INLINE_MIME_TYPES). */
const AUDIO_EXTENSIONS = new Set(['.aac', '.flac', '.m4a', '.mp2', '.mp3', '.wav', '.weba']);

function isAudioUrl(url: string): boolean {
  let path: string;
  try {
    path = urlsplit(url).path.toLowerCase();
  } catch {
    // Not a URL Python could split: no type to guess.
    return false;
  }
  const dot = path.lastIndexOf('.');
  return dot > path.lastIndexOf('/') && AUDIO_EXTENSIONS.has(path.slice(dot));
}

/** `![text](url)`: the bracketed text and the link after it, as Python-Markdown's image processor reads them. */
function imageSyntax(m: RegExpExecArray, data: string): { text: string; href: string; title: string | null; end: number } | null {
  const [text, afterText, textHandled] = getLinkText(data, m.index + m[0].length);
  if (!textHandled) return null;
  const unescapeText = (v: string) => env().engine.unescape(v);
  const [href, title, end, handled] = getLink(data, afterText, unescapeText);
  return handled ? { text, href, title, end } : null;
}

/** Zulip's AudioInlineProcessor: `![title](url)` of an audio file is a player. */
function audioPattern(): InlinePattern {
  return {
    kind: 'search',
    name: 'audio',
    regex: IMAGE_LINK_RE,
    handle: (m, data) => {
      const found = imageSyntax(m, data);
      if (!found || found.title !== null) return null;
      const { ctx, engine } = env();
      let src = sanitizeUrl(engine.unescape(found.href.trim()));
      if (src === null) return null;
      src = rewriteLocalLinkToRelative(ctx.realmUrl, src);
      if (src.startsWith('/user_uploads/')) {
        if (!ctx.uploads?.isAudio(src.slice('/user_uploads/'.length))) return null;
      } else if (!isAudioUrl(src)) {
        return null;
      }
      const shown = mediaSource(ctx, src);
      const attrib: Record<string, string> = { src: shown, controls: 'controls', preload: 'metadata' };
      const title = found.text.trim();
      if (title) attrib.title = title;
      if (shown !== src) attrib['data-original-url'] = src;
      return { node: etElement('audio', attrib), start: m.index, end: found.end };
    },
  };
}

/**
 * Zulip's ImageInlineProcessor: `![alt](url "title")` is an image; an upload shows its thumbnail
 * (or the spinner while it is being made), and an upload that is no image is left as text.
 */
function imagePattern(): InlinePattern {
  return {
    kind: 'search',
    name: 'image',
    regex: IMAGE_LINK_RE,
    handle: (m, data) => {
      const found = imageSyntax(m, data);
      if (!found) return null;
      const { ctx, engine } = env();
      let src = sanitizeUrl(engine.unescape(found.href.trim()));
      if (src === null) return null;
      src = rewriteLocalLinkToRelative(ctx.realmUrl, src);
      const alt = engine.unescape(found.text);
      if (!src.startsWith('/user_uploads/')) {
        // Camo, when configured, comes after, for every image of the message.
        const attrib: Record<string, string> = { src, alt, 'data-original-src': src };
        if (found.title !== null) attrib.title = found.title;
        return { node: etElement('img', attrib), start: m.index, end: found.end };
      }
      const image = ctx.uploads?.imageByPathId(src.slice('/user_uploads/'.length));
      if (!image) return null;
      const dimensions = `${image.width}x${image.height}`;
      let node: EtElement;
      if (image.thumbnailUrl === null) {
        const attrib: Record<string, string> = {
          src: SPINNER,
          alt,
          'data-original-src': src,
          class: 'inline-image image-loading-placeholder',
          'data-original-dimensions': dimensions,
        };
        if (found.title !== null) attrib.title = found.title;
        if (image.contentType) attrib['data-original-content-type'] = image.contentType;
        node = etElement('img', attrib);
      } else {
        const attrib: Record<string, string> = { alt };
        if (image.contentType) attrib['data-original-content-type'] = image.contentType;
        attrib['data-original-dimensions'] = dimensions;
        attrib['data-original-src'] = src;
        attrib.src = image.thumbnailUrl;
        if (found.title !== null) attrib.title = found.title;
        attrib.class = 'inline-image';
        if (image.animated) attrib['data-animated'] = 'true';
        if (image.transcodedImage) attrib['data-transcoded-image'] = image.transcodedImage;
        node = etElement('img', attrib);
      }
      return { node, start: m.index, end: found.end };
    },
  };
}

function linkifierPatterns(linkifiers: CompiledLinkifiers): InlinePattern[] {
  return linkifiers.list.map((linkifier) => ({
    kind: 'search' as const,
    name: `linkifiers/${linkifier.pattern}`,
    regex: linkifier.regex,
    handle: (m: RegExpExecArray) => {
      const groups = m.groups!;
      const a = urlToA(expandLinkifier(linkifier, groups), groups[ACTUAL_GROUP]!);
      if (typeof a === 'string') return null;
      const start = m.index + groups[BEFORE_GROUP]!.length;
      return { node: a, start, end: start + groups[ACTUAL_GROUP]!.length };
    },
  }));
}

function emojiPatterns(): InlinePattern[] {
  const emoji = legacy('emoji', EMOJI_RE, (m) => {
    const { ctx } = env();
    const syntax = m[1]!;
    const name = syntax.slice(1, -1);
    const realm = ctx.realmEmoji.byName(name);
    if (realm && !realm.deactivated) return makeRealmEmoji(realm.url, syntax);
    if (name === 'zulip') return makeRealmEmoji('/static/generated/emoji/images/emoji/unicode/zulip.png', syntax);
    const code = emojiCodeByName(name);
    return code ? makeEmoji(code, syntax) : syntax;
  });
  const emoticons = legacy('translate_emoticons', EMOTICON_RE, (m) => {
    if (!env().ctx.translateEmoticons) return null;
    const translated = EMOTICON_CONVERSIONS[m[1]!]!;
    return makeEmoji(emojiCodeByName(translated.slice(1, -1))!, translated);
  });
  const br: InlinePattern = { kind: 'search', name: 'nl2br', regex: BR_RE, handle: (m) => ({ node: etElement('br'), start: m.index, end: m.index + 1 }) };
  const unicode: InlinePattern = {
    kind: 'search',
    name: 'unicodeemoji',
    regex: POSSIBLE_EMOJI_RE,
    batch: true,
    handle: (m) => {
      const syntax = m[1]!;
      if (TEXT_PRESENTATION_RE.test(syntax)) return null;
      const code = emojiCodeOfText(syntax);
      const name = emojiNameByCode(code);
      if (!name) return null;
      return { node: makeEmoji(code, `:${name}:`), start: m.index, end: m.index + m[0].length };
    },
  };
  return [emoji, emoticons, br, unicode];
}

const patternCache = new WeakMap<CompiledLinkifiers, InlinePattern[]>();

/** The full pattern list for an organization's linkifiers, built once per linkifier set. */
export function inlinePatterns(linkifiers: CompiledLinkifiers): InlinePattern[] {
  let patterns = patternCache.get(linkifiers);
  if (!patterns) {
    patterns = buildPatterns(linkifiers);
    patternCache.set(linkifiers, patterns);
  }
  return patterns;
}

function buildPatterns(linkifiers: CompiledLinkifiers): InlinePattern[] {
  const backtick: InlinePattern = {
    kind: 'search',
    name: 'backtick',
    regex: BACKTICK_RE,
    handle: (m) => {
      const end = m.index + m[0].length;
      if (m[3]) return { node: atomicEl('code', {}, m[3]), start: m.index, end };
      return { node: m[1]!.replace(/\\\\/g, '\u000292\u0003'), start: m.index, end };
    },
  };
  const strongEm = legacy('strong_em', STRONG_EM_RE, (m) => {
    const strong = etElement('strong');
    strong.children.push(etElement('em', {}, m[2]!));
    return strong;
  });
  const tex = legacy('tex', TEX_RE, (m) => {
    const html = renderTex(m[1]!, true);
    if (html !== null) return env().stash.store(html);
    return atomicEl('span', { class: 'tex-error' }, `$$${m[1]}$$`);
  });
  const timestamp = legacy('timestamp', TIMESTAMP_RE, (m) => {
    const input = m[1]!;
    const iso = parseTimestamp(input);
    // Zulip leaves a time it cannot read as the text it was, with no Markdown inside.
    if (iso === null) return m[0];
    return atomicEl('time', { datetime: iso }, input);
  });
  const autolink = legacy('autolink', webLinkRegex(), (m) => urlToA(m.groups!.url!));
  const entity: InlinePattern = {
    kind: 'search',
    name: 'entity',
    regex: ENTITY_RE,
    handle: (m) => ({ node: env().stash.store(m[1]!), start: m.index, end: m.index + m[0].length }),
  };
  const notStrong: InlinePattern = {
    kind: 'search',
    name: 'not_strong',
    regex: NOT_STRONG_RE,
    handle: (m) => ({ node: m[1]!, start: m.index, end: m.index + m[0].length }),
  };
  const [userMention, groupMention] = mentionPatterns() as [InlinePattern, InlinePattern];
  return [
    backtick,
    strongEm,
    userMention,
    tex,
    ...channelPatterns(),
    timestamp,
    groupMention,
    linkPattern(),
    audioPattern(),
    imagePattern(),
    autolink,
    ...linkifierPatterns(linkifiers),
    entity,
    simpleTag('strong', STRONG_RE, 'strong'),
    simpleTag('emphasis', EMPHASIS_RE, 'em'),
    simpleTag('del', DEL_RE, 'del'),
    notStrong,
    ...emojiPatterns(),
  ];
}
