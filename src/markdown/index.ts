// Zulip-flavoured Markdown: the public entry points.
//
// The pipeline follows Zulip's (Python-Markdown with Zulip's extensions), so
// that clients get the HTML the real server would send: line preprocessors,
// the block parser, code highlighting wrappers, the inline patterns,
// layout newlines, and serialization with stashed HTML put back.
import { BlockParser } from './blocks.ts';
import { renderIndentedCodeBlock } from './code.ts';
import { fromEt, InlineEngine, toEt } from './inline.ts';
import { urlsplit } from './links.ts';
import { type Collected, inlinePatterns, withPatternEnv } from './patterns.ts';
import { FencedBlocks, hangingLists, HtmlStash, normalizeWhitespace, STASH_PLACEHOLDER_RE } from './preprocess.ts';
import { addPreviews, rewriteThroughCamo } from './previews.ts';
import { prettify, serialize } from './serialize.ts';
import { asBeautifulSoupWrites } from './soup.ts';
import { type ElementNode, type Node, el, text } from './tree.ts';
import type { MarkdownContext, RenderResult } from './types.ts';

export type { MarkdownContext, MentionChannel, MentionGroup, MentionUser, RealmEmojiInfo, RenderResult, UploadImage } from './types.ts';
export {
  compileLinkifiers,
  LinkifierValidationError,
  NO_LINKIFIERS,
  topicLinks,
  uriTemplateVariables,
  validateLinkifier,
  type CompiledLinkifiers,
  type Linkifier,
} from './linkifiers.ts';
export { encodeStream, hashUtilEncode } from './links.ts';

const blockParser = new BlockParser();

/** Zulip refuses to store a rendering larger than 100 times its message size limit. */
const MAX_RENDERED_LENGTH = 10000 * 100;

export class MarkdownRenderingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MarkdownRenderingError';
  }
}

/** codehilite's treeprocessor: indented code blocks become stashed highlight markup. */
function hiliteIndentedCode(node: ElementNode, stash: HtmlStash): void {
  node.children = node.children.map((child) => {
    if (child.type !== 'element') return child;
    const code = child.children[0];
    if (child.tagName === 'pre' && child.children.length === 1 && code?.type === 'element' && code.tagName === 'code') {
      const value = code.children.map((c) => (c.type === 'text' ? c.value : '')).join('');
      return el('p', {}, [text(stash.store(renderIndentedCodeBlock(value)))]);
    }
    hiliteIndentedCode(child, stash);
    return child;
  });
}

/** Text holding stash placeholders is split into trusted raw HTML nodes. */
function restoreStash(node: ElementNode, stash: HtmlStash): void {
  const out: Node[] = [];
  for (const child of node.children) {
    if (child.type === 'element') {
      restoreStash(child, stash);
      out.push(child);
    } else if (child.type === 'text' && child.value.includes('\u0002wzxhzdk:')) {
      let last = 0;
      for (const m of child.value.matchAll(STASH_PLACEHOLDER_RE)) {
        const html = stash.blocks[Number(m[1])];
        if (html === undefined) continue;
        if (m.index > last) out.push(text(child.value.slice(last, m.index)));
        out.push({ type: 'raw', value: html });
        last = m.index + m[0].length;
      }
      if (last < child.value.length) out.push(text(child.value.slice(last)));
    } else {
      out.push(child);
    }
  }
  node.children = out;
}

/** Python-Markdown's UnescapeTreeprocessor: backslash-escape placeholders back to characters. */
function unescapeText(node: ElementNode): void {
  if (node.tagName === 'code') return;
  for (const child of node.children) {
    if (child.type === 'element') unescapeText(child);
    else if (child.type === 'text' && child.value.includes('\u0002')) {
      child.value = child.value.replace(/\u0002([0-9]+)\u0003/g, (_m, n: string) => String.fromCodePoint(Number(n)));
    }
  }
}

/** Link hrefs, and the sources of `![…](…)` images and audio, which may be uploads too. */
function collectLinks(node: ElementNode, out: string[], media: string[]): void {
  for (const child of node.children) {
    if (child.type !== 'element') continue;
    const p = child.properties;
    if (child.tagName === 'a' && p.href !== undefined) out.push(p.href);
    else if (child.tagName === 'img' && p['data-original-src'] !== undefined) media.push(p['data-original-src']);
    else if (child.tagName === 'audio' && p.src !== undefined) media.push(p['data-original-url'] ?? p.src);
    collectLinks(child, out, media);
  }
}

/** Whether an uploaded image is shown by its thumbnail: a spinner Zulip has replaced. */
function showsThumbnail(node: ElementNode): boolean {
  return node.children.some((child) => {
    if (child.type !== 'element') return false;
    const p = child.properties;
    if (child.tagName === 'img' && p['data-original-dimensions'] !== undefined && !(p.class ?? '').split(' ').includes('image-loading-placeholder'))
      return true;
    return showsThumbnail(child);
  });
}

let lastRealmHost: [url: string, host: string] | undefined;

function realmHost(realmUrl: string): string {
  if (lastRealmHost?.[0] !== realmUrl) {
    let host = '';
    try {
      host = new URL(realmUrl).host;
    } catch {
      // Not an absolute URL: only relative upload links count.
    }
    lastRealmHost = [realmUrl, host];
  }
  return lastRealmHost[1];
}

/** Zulip's maybe_add_attachment_path_id for each distinct link. */
function uploadPathIds(links: string[], realmUrl: string): string[] {
  if (links.length === 0) return [];
  const host = realmHost(realmUrl);
  const out: string[] = [];
  for (const link of new Set(links)) {
    const absolute = /^[A-Za-z][A-Za-z0-9+.-]*:/.test(link) || link.startsWith('/') ? link : '/' + link;
    let parts;
    try {
      parts = urlsplit(absolute);
    } catch {
      // An unparsable href cannot point at an upload.
      continue;
    }
    if (parts.netloc !== '' && parts.netloc !== host) continue;
    if (!parts.path.startsWith('/user_uploads/')) continue;
    out.push(parts.path.slice('/user_uploads/'.length));
  }
  return out;
}

function emptyResult(isMeMessage: boolean): RenderResult {
  return {
    html: '',
    mentionedUserIds: new Set(),
    mentionedGroupIds: new Set(),
    wildcardMention: false,
    topicWildcardMention: false,
    uploadPathIds: [],
    links: [],
    isMeMessage,
    alertWordText: '',
  };
}

/** Render a message's Markdown to the HTML Zulip clients expect, with its mention and link metadata. */
export function renderMarkdown(content: string, ctx: MarkdownContext): RenderResult {
  try {
    return render(content, ctx);
  } catch (error) {
    // Nesting deep enough to exhaust the stack (10,000 `>`): Zulip's parser fails the same way,
    // and it refuses the message as unrenderable rather than failing the request.
    if (error instanceof RangeError) throw new MarkdownRenderingError(error.message);
    throw error;
  }
}

function render(content: string, ctx: MarkdownContext): RenderResult {
  const isMeMessage = content.startsWith('/me ');
  if (!content.trim()) return emptyResult(isMeMessage);
  const stash = new HtmlStash();
  let lines = hangingLists(content.split('\n'));
  lines = normalizeWhitespace(lines);
  lines = new FencedBlocks(stash, ctx.defaultCodeBlockLanguage).run(lines);
  const alertWordText = lines.join('\n');
  const root = blockParser.parseDocument(lines);
  hiliteIndentedCode(root, stash);

  const collected: Collected = { mentionedUserIds: new Set(), mentionedGroupIds: new Set(), wildcardMention: false, topicWildcardMention: false };
  const engine = new InlineEngine(inlinePatterns(ctx.linkifiers));
  const et = toEt(root);
  withPatternEnv({ ctx, stash, collected, engine }, () => engine.run(et));
  const tree = fromEt(et);
  restoreStash(tree, stash);
  prettify(tree);
  unescapeText(tree);

  const links: string[] = [];
  const media: string[] = [];
  collectLinks(tree, links, media);
  // The previews' links repeat ones already found.
  if (links.length) addPreviews(tree, ctx);
  rewriteThroughCamo(tree, ctx);
  const uploads = uploadPathIds(media.length ? [...links, ...media] : links, ctx.realmUrl);
  let html = serialize(tree);
  // Zulip puts thumbnails in by parsing the message and writing it back whole.
  if (uploads.length && showsThumbnail(tree)) html = asBeautifulSoupWrites(html);
  if (html.length > MAX_RENDERED_LENGTH) throw new MarkdownRenderingError(`Rendered content exceeds ${MAX_RENDERED_LENGTH} characters`);
  return {
    html,
    ...collected,
    uploadPathIds: uploads,
    links: [...new Set(links)],
    isMeMessage,
    alertWordText,
  };
}
