// Inline previews of linked images, videos and YouTube videos, the way Zulip's
// InlineInterestingLinkProcessor adds them after the inline patterns have run: a
// `message_inline_image` block after the paragraph (or inside the list item) that holds the link,
// each URL once, none for links inside a quote, none at all past 24 distinct URLs. Previews that
// need the network (oEmbed, Open Graph, tweets) are what Zulip shows when the fetch is not done:
// nothing. External image and video sources go through Camo when it is configured.
import { createHmac } from 'node:crypto';
import { urlsplit, urlunsplit, type SplitUrl } from './links.ts';
import { el, type ElementNode } from './tree.ts';
import type { MarkdownContext, UploadImage } from './types.ts';

const PREVIEW_LIMIT_PER_MESSAGE = 24;
const IMAGE_EXTENSIONS = ['.bmp', '.gif', '.jpe', '.jpeg', '.jpg', '.png', '.webp'];
const VIDEO_EXTENSIONS = ['.mp4', '.webm'];
const INLINE_IMAGE_CLASSES = new Set(['message_inline_image', 'message_inline_ref', 'inline-preview-twitter']);
const SPINNER = '/static/images/loading/loader-black.svg';
const STATIC_PREFIX = '/static/';

interface FoundLink {
  a: ElementNode;
  parent: ElementNode;
  grandparent: ElementNode | undefined;
  inBlockquote: boolean;
  url: string;
  /** The link's own text (ElementTree's `text`), null when it has none. */
  text: string | null;
}

interface Placement {
  parent: ElementNode;
  title: string | null;
  /** Where among the parent's child elements the preview goes; null: at the end. */
  index: number | null;
  remove: ElementNode | null;
}

function split(url: string): SplitUrl | null {
  try {
    return urlsplit(url);
  } catch {
    // An unparsable URL (unbalanced IPv6 bracket) previews as nothing.
    return null;
  }
}

function leadingText(node: ElementNode): string | null {
  let out = '';
  for (const child of node.children) {
    if (child.type === 'element') break;
    out += child.value;
  }
  return out === '' ? null : out;
}

function elementIndices(node: ElementNode): number[] {
  const out: number[] = [];
  node.children.forEach((c, i) => c.type === 'element' && out.push(i));
  return out;
}

/** The text after a child element up to the next element (its `tail`), null when empty. */
function tailOf(parent: ElementNode, child: ElementNode): string | null {
  const i = parent.children.indexOf(child);
  let out = '';
  for (let j = i + 1; j < parent.children.length; j++) {
    const n = parent.children[j]!;
    if (n.type === 'element') break;
    out += n.value;
  }
  return out === '' ? null : out;
}

/** ElementTree's insert(index, node): before the index-th child element, after its predecessor's tail. */
function insertAt(parent: ElementNode, index: number | null, node: ElementNode): void {
  const positions = elementIndices(parent);
  if (index === null || index >= positions.length) parent.children.push(node);
  else parent.children.splice(positions[index]!, 0, node);
}

/** ElementTree's remove(child): the element goes, and its tail with it. */
function removeWithTail(parent: ElementNode, child: ElementNode): void {
  const i = parent.children.indexOf(child);
  let j = i + 1;
  while (j < parent.children.length && parent.children[j]!.type !== 'element') j++;
  parent.children.splice(i, j - i);
}

/** Breadth-first, as Zulip's walk_tree_with_family, every link with its parent and grandparent. */
function findLinks(root: ElementNode): FoundLink[] {
  const found: FoundLink[] = [];
  const queue: Array<{ node: ElementNode; parent: ElementNode | undefined; inBlockquote: boolean }> = [{ node: root, parent: undefined, inBlockquote: false }];
  for (let q = 0; q < queue.length; q++) {
    const { node, parent, inBlockquote } = queue[q]!;
    const quoted = inBlockquote || node.tagName === 'blockquote';
    for (const child of node.children) {
      if (child.type !== 'element') continue;
      queue.push({ node: child, parent: node, inBlockquote: quoted });
      if (child.tagName === 'a' && child.properties.href !== undefined) {
        found.push({ a: child, parent: node, grandparent: parent, inBlockquote: quoted, url: child.properties.href, text: leadingText(child) });
      }
    }
  }
  return found;
}

/** Zulip's generate_camo_url: the HMAC-SHA1 of the URL and the URL in hex. */
export function camoUrl(camo: { uri: string; key: string }, url: string): string {
  const bytes = Buffer.from(url, 'utf8');
  return `${camo.uri}${createHmac('sha1', camo.key).update(bytes).digest('hex')}/${bytes.toString('hex')}`;
}

/** The organization's host and scheme, for the URL it was last worked out from. */
let realmParts: { url: string; host: string; scheme: string } | undefined;

function realmOf(realmUrl: string): { host: string; scheme: string } {
  if (realmParts?.url !== realmUrl) {
    const realm = split(realmUrl);
    realmParts = { url: realmUrl, host: realm?.netloc ?? '', scheme: realm?.scheme ?? '' };
  }
  return realmParts;
}

class Previewer {
  private readonly realmHost: string;
  private readonly realmScheme: string;

  constructor(
    private readonly root: ElementNode,
    private readonly ctx: MarkdownContext,
  ) {
    const realm = realmOf(ctx.realmUrl);
    this.realmHost = realm.host;
    this.realmScheme = realm.scheme;
  }

  private get enabled(): boolean {
    return this.ctx.inlineImagePreview !== false;
  }

  private uploadOf(url: string): UploadImage | undefined {
    return url.startsWith('/user_uploads/') ? this.ctx.uploads?.imageByPathId(url.slice('/user_uploads/'.length)) : undefined;
  }

  private isImage(url: string, parts: SplitUrl): boolean {
    if (!this.enabled || parts.netloc === 'pasteboard.co') return false;
    if (url.startsWith('/user_uploads/')) return this.uploadOf(url) !== undefined;
    const path = parts.path.toLowerCase();
    return IMAGE_EXTENSIONS.some((ext) => path.endsWith(ext));
  }

  private isVideo(parts: SplitUrl): boolean {
    if (!this.enabled) return false;
    const path = parts.path.toLowerCase();
    return VIDEO_EXTENSIONS.some((ext) => path.endsWith(ext));
  }

  private youtubeId(parts: SplitUrl): string | null {
    if (!this.enabled || (parts.scheme !== 'http' && parts.scheme !== 'https')) return null;
    const host = hostname(parts.netloc);
    let id: string | undefined;
    if (
      host === 'm.youtube.com' ||
      host === 'www.youtube.com' ||
      host === 'www.youtube-nocookie.com' ||
      host === 'youtube.com' ||
      host === 'youtube-nocookie.com'
    ) {
      const query = parseQuery(parts.query);
      if ((parts.path === '/watch' || parts.path === '/watch_popup') && query.has('v')) id = query.get('v');
      else if (parts.path === '/watch_videos' && query.has('video_ids')) id = query.get('video_ids')!.split(',')[0];
      else if (/^\/(?:embed|shorts|v)\//.test(parts.path)) id = parts.path.split('/')[2];
    } else if (host === 'youtu.be' && parts.path.startsWith('/')) {
      id = parts.path.slice(1);
    }
    return id !== undefined && /^[0-9A-Za-z_-]+$/.test(id) ? id : null;
  }

  /** GitHub "blob" pages of images point at the raw file. */
  private actualImageUrl(url: string, parts: SplitUrl): string {
    if (parts.netloc === 'github.com' || parts.netloc.endsWith('.github.com')) {
      const segments = parts.path.split('/');
      if (segments.length > 3 && segments[3] === 'blob') return 'https://raw.githubusercontent.com' + [...segments.slice(0, 3), ...segments.slice(4)].join('/');
    }
    return url;
  }

  /** Wikipedia file pages and linx.li links, rewritten to the image itself. */
  private correctedImageSource(parts: SplitUrl): string | null {
    if (parts.netloc.toLowerCase().endsWith('.wikipedia.org') && parts.path.startsWith('/wiki/File:')) {
      return urlunsplit({ ...parts, path: parts.path.replace('/wiki/File:', '/wiki/Special:FilePath/File:') });
    }
    if (parts.netloc === 'linx.li') return 'https://linx.li/s' + parts.path;
    return null;
  }

  /**
   * A Dropbox share link to an image file previews the file itself (`?raw=1`). Zulip also reads
   * the page's Open Graph image for albums and other files; without that fetch they preview as nothing.
   */
  private dropboxImage(url: string, parts: SplitUrl): string | null {
    if (parts.netloc !== 'dropbox.com' && !parts.netloc.endsWith('.dropbox.com')) return null;
    const isAlbum = parts.path.startsWith('/sc/') || parts.path.startsWith('/photos/');
    if (!(parts.path.startsWith('/s/') || parts.path.startsWith('/sh/') || isAlbum)) return null;
    if (isAlbum || !this.isImage(url, parts)) return null;
    return urlunsplit({ ...parts, query: 'raw=1' });
  }

  private placement(found: FoundLink): Placement {
    const urlEqText = found.text === null || found.url === found.text;
    const info: Placement = { parent: this.root, title: urlEqText ? null : found.text, index: null, remove: null };
    const { parent, grandparent, a } = found;
    if (parent.tagName === 'li') {
      info.parent = parent;
      if (leadingText(parent) === null && tailOf(parent, a) === null && urlEqText) info.remove = a;
    } else if (parent.tagName === 'p' && grandparent) {
      info.parent = grandparent;
      const text = leadingText(parent);
      if (elementIndices(parent).length === 1 && (text === null || text === '\n') && tailOf(parent, a) === null && urlEqText) info.remove = parent;
      const parentIndex = grandparent.children.filter((c) => c.type === 'element').indexOf(parent);
      if (parentIndex >= 0) info.index = this.insertionIndex(grandparent, parent, parentIndex);
    }
    return info;
  }

  /** After the previews already added for the same paragraph, so that they keep their order. */
  private insertionIndex(grandparent: ElementNode, parent: ElementNode, parentIndex: number): number {
    const parentLinks = new Set<string>();
    collectHrefs(parent, parentLinks);
    const uncles = grandparent.children.filter((c): c is ElementNode => c.type === 'element');
    let index = parentIndex;
    for (;;) {
      index++;
      if (index >= uncles.length) return index;
      const uncle = uncles[index]!;
      const classes = (uncle.properties.class ?? '').split(/\s+/);
      if (uncle.tagName !== 'div' || uncle.properties.class === undefined || !classes.some((c) => INLINE_IMAGE_CLASSES.has(c))) return index;
      const link = uncle.children.find((c): c is ElementNode => c.type === 'element' && c.tagName === 'a');
      if (!link || !parentLinks.has(link.properties.href ?? '')) return index;
    }
  }

  private addImage(
    parent: ElementNode,
    imageUrl: string,
    link: string,
    opts: { title?: string | null; cls?: string; dataId?: string; index?: number | null } = {},
  ): void {
    const a = el('a', { href: link });
    if (opts.title !== undefined && opts.title !== null) a.properties.title = opts.title;
    if (opts.dataId !== undefined) a.properties['data-id'] = opts.dataId;
    const upload = imageUrl.startsWith('/user_uploads/') ? this.uploadOf(imageUrl) : undefined;
    a.children.push(upload ? uploadImage(upload) : el('img', { src: imageUrl }));
    insertAt(parent, opts.index ?? null, el('div', { class: opts.cls ?? 'message_inline_image' }, [a]));
  }

  run(): void {
    const found = findLinks(this.root);
    if (found.length === 0) return;
    const previewable = new Set(found.filter((f) => !f.inBlockquote).map((f) => f.url));
    if (previewable.size > PREVIEW_LIMIT_PER_MESSAGE) return;
    const processed = new Set<string>();
    for (const link of found) {
      const { url } = link;
      if (!previewable.has(url) || processed.has(url)) continue;
      processed.add(url);
      const parts = split(url);
      if (!parts) continue;
      if (this.isVideo(parts)) {
        const info = this.placement(link);
        const a = el('a', { href: url }, [el('video', { preload: 'metadata', src: url })]);
        if (info.title) a.properties.title = info.title;
        insertAt(info.parent, info.index, el('div', { class: 'message_inline_image message_inline_video' }, [a]));
        if (info.remove) this.remove(info);
        continue;
      }
      const dropbox = this.dropboxImage(url, parts);
      if (dropbox !== null) {
        this.addImage(this.root, dropbox, url);
        continue;
      }
      if (this.isImage(url, parts)) {
        const corrected = this.correctedImageSource(parts);
        const target = corrected === null ? link : { ...link, url: corrected, text: corrected };
        const info = this.placement(target);
        this.addImage(info.parent, this.actualImageUrl(target.url, split(target.url) ?? parts), target.url, { title: info.title, index: info.index });
        if (info.remove) this.remove(info);
        continue;
      }
      if (parts.netloc === '' || parts.netloc === this.realmHost) continue;
      const youtube = this.youtubeId(parts);
      if (youtube !== null) {
        const info = this.placement(link);
        this.addImage(info.parent, `https://i.ytimg.com/vi/${youtube}/mqdefault.jpg`, url, {
          cls: 'youtube-video message_inline_image',
          dataId: youtube,
          index: info.index,
        });
      }
    }
  }

  private remove(info: Placement): void {
    removeWithTail(info.parent, info.remove!);
  }

  /** Zulip's InlineImageProcessor and InlineVideoProcessor: external media through Camo. */
  rewriteThroughCamo(): void {
    const camo = this.ctx.camo;
    if (!camo) return;
    const visit = (node: ElementNode) => {
      for (const child of node.children) {
        if (child.type !== 'element') continue;
        const src = child.properties.src;
        if ((child.tagName === 'img' || child.tagName === 'video') && src !== undefined && !this.isLocal(src)) {
          // A video's link keeps the original URL, which clients play from.
          child.properties.src = camoUrl(camo, src);
        }
        visit(child);
      }
    };
    visit(this.root);
  }

  private isLocal(url: string): boolean {
    return isLocalUrl(url, this.realmHost, this.realmScheme);
  }
}

/** Zulip's is_static_or_current_realm_url: what needs no Camo. */
function isLocalUrl(url: string, realmHost: string, realmScheme: string): boolean {
  const parts = split(url);
  if (!parts) return false;
  if (parts.netloc === '' && url.startsWith(STATIC_PREFIX)) return true;
  if (parts.netloc === realmHost && parts.scheme === realmScheme) return true;
  return parts.netloc === '' && parts.scheme === '';
}

/** A media source as the message shows it: through Camo when configured, unless it is local. */
export function mediaSource(ctx: MarkdownContext, url: string): string {
  if (!ctx.camo) return url;
  const realm = realmOf(ctx.realmUrl);
  return isLocalUrl(url, realm.host, realm.scheme) ? url : camoUrl(ctx.camo, url);
}

function collectHrefs(node: ElementNode, out: Set<string>): void {
  for (const child of node.children) {
    if (child.type !== 'element') continue;
    if (child.tagName === 'a' && child.properties.href !== undefined) out.add(child.properties.href);
    collectHrefs(child, out);
  }
}

/** Python's urlsplit().hostname: no user info, no port, lower case. */
function hostname(netloc: string): string {
  const host = netloc.slice(netloc.lastIndexOf('@') + 1);
  const bracket = /^\[([^\]]*)\]/.exec(host);
  if (bracket) return bracket[1]!.toLowerCase();
  const colon = host.indexOf(':');
  return (colon < 0 ? host : host.slice(0, colon)).toLowerCase();
}

/** Python's parse_qs: first value of each name, blank values dropped. */
function parseQuery(query: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    const decode = (s: string) => {
      try {
        return decodeURIComponent(s.replace(/\+/g, ' '));
      } catch {
        // Python's unquote leaves bad percent-escapes as they are.
        return s.replace(/\+/g, ' ');
      }
    };
    const name = decode(pair.slice(0, eq));
    const value = decode(pair.slice(eq + 1));
    if (value !== '' && !out.has(name)) out.set(name, value);
  }
  return out;
}

/**
 * An uploaded image as Zulip writes it once its thumbnail exists (rewrite_thumbnailed_images on
 * the placeholder spinner), or the spinner itself while it does not.
 */
function uploadImage(image: UploadImage): ElementNode {
  const dimensions = `${image.width}x${image.height}`;
  if (image.thumbnailUrl === null) {
    const props: Record<string, string> = { class: 'image-loading-placeholder', src: SPINNER, 'data-original-dimensions': dimensions };
    if (image.contentType) props['data-original-content-type'] = image.contentType;
    return el('img', props);
  }
  const props: Record<string, string> = {};
  if (image.contentType) props['data-original-content-type'] = image.contentType;
  props['data-original-dimensions'] = dimensions;
  props.src = image.thumbnailUrl;
  if (image.animated) props['data-animated'] = 'true';
  if (image.transcodedImage) props['data-transcoded-image'] = image.transcodedImage;
  return el('img', props);
}

/** Add the inline previews of a rendered message's links. */
export function addPreviews(root: ElementNode, ctx: MarkdownContext): void {
  new Previewer(root, ctx).run();
}

/** Send the message's external images and videos through Camo, when it is configured. */
export function rewriteThroughCamo(root: ElementNode, ctx: MarkdownContext): void {
  if (ctx.camo) new Previewer(root, ctx).rewriteThroughCamo();
}
