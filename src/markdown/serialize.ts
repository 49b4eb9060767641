// Layout newlines and HTML serialization, byte-compatible with what
// Python-Markdown's prettify treeprocessor and html serializer write:
// attributes sorted by name, `<br>` without a slash, `&` left alone when it
// already starts an entity, and stashed raw HTML that replaces its paragraph
// when it is block-level.
import { BLOCK_LEVEL, type ElementNode, type Node } from './tree.ts';

const VOID = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
  'embed',
]);

/** Every tag we ever emit; anything else is dropped with its content escaped as text. */
const ALLOWED_TAGS = new Set([
  'a',
  'blockquote',
  'br',
  'code',
  'del',
  'div',
  'em',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'img',
  'li',
  'ol',
  'p',
  'pre',
  'span',
  'strong',
  'table',
  'tbody',
  'td',
  'th',
  'thead',
  'time',
  'tr',
  'ul',
  'video',
  'audio',
]);
const ALLOWED_ATTRIBUTES = new Set([
  'href',
  'title',
  'class',
  'src',
  'alt',
  'role',
  'aria-label',
  'aria-hidden',
  'datetime',
  'start',
  'style',
  'data-user-id',
  'data-user-group-id',
  'data-stream-id',
  'data-code-language',
  'data-id',
  'data-src-fullsize',
  'data-video-original-url',
  'preload',
  'data-original-dimensions',
  'data-original-content-type',
  'data-animated',
  'data-transcoded-image',
  'data-original-src',
  'data-original-url',
  'controls',
]);

const RE_AMP = /&(?!(?:#[0-9]+|#x[0-9a-f]+|[0-9a-z]+);)/gi;

function escapeText(value: string): string {
  if (value.includes('&')) value = value.replace(RE_AMP, '&amp;');
  if (value.includes('<')) value = value.replace(/</g, '&lt;');
  if (value.includes('>')) value = value.replace(/>/g, '&gt;');
  return value;
}

function escapeAll(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttribute(value: string): string {
  return escapeText(value).replace(/"/g, '&quot;');
}

/** Merge neighbouring text nodes so that "text" and "tail" look as in ElementTree. */
export function mergeText(node: ElementNode): void {
  const out: Node[] = [];
  for (const child of node.children) {
    const prev = out[out.length - 1];
    if (child.type === 'text' && prev && prev.type === 'text' && !child.atomic === !prev.atomic) {
      out[out.length - 1] = { ...prev, value: prev.value + child.value };
    } else {
      if (child.type === 'element') mergeText(child);
      out.push(child);
    }
  }
  node.children = out.filter((c) => c.type !== 'text' || c.value !== '');
}

function isBlank(nodes: Node[], from: number): boolean {
  for (let i = from; i < nodes.length; i++) {
    const n = nodes[i]!;
    if (n.type === 'element') return true;
    if (n.type === 'raw' || n.value.trim() !== '') return false;
  }
  return true;
}

/** Replace the whitespace-only run of text after index i (its "tail") with a newline. */
function setTailNewline(children: Node[], i: number): void {
  if (!isBlank(children, i + 1)) return;
  let j = i + 1;
  while (j < children.length && children[j]!.type !== 'element') j++;
  children.splice(i + 1, j - i - 1, { type: 'text', value: '\n' });
}

function prettifyBlock(elem: ElementNode): void {
  if (elem.tagName === 'code' || elem.tagName === 'pre') return;
  const firstEl = elem.children.findIndex((c) => c.type === 'element');
  if (firstEl >= 0 && isBlank(elem.children.slice(0, firstEl), 0)) {
    const first = elem.children[firstEl] as ElementNode;
    if (BLOCK_LEVEL.has(first.tagName)) elem.children.splice(0, firstEl, { type: 'text', value: '\n' });
  }
  for (let i = 0; i < elem.children.length; i++) {
    const child = elem.children[i]!;
    if (child.type === 'element' && BLOCK_LEVEL.has(child.tagName)) {
      prettifyBlock(child);
      setTailNewline(elem.children, i);
    }
  }
}

function prettifyBreaks(elem: ElementNode): void {
  const children = elem.children;
  for (let i = 0; i < children.length; i++) {
    const child = children[i]!;
    if (child.type !== 'element') continue;
    if (child.tagName === 'br') {
      const next = children[i + 1];
      if (!next || next.type !== 'text' || next.value.trim() === '') {
        if (next && next.type === 'text') children[i + 1] = { type: 'text', value: '\n' };
        else children.splice(i + 1, 0, { type: 'text', value: '\n' });
      } else {
        children[i + 1] = { ...next, value: '\n' + next.value };
      }
    } else {
      prettifyBreaks(child);
    }
  }
}

/** Python-Markdown's PrettifyTreeprocessor, on the document root. */
export function prettify(root: ElementNode): void {
  mergeText(root);
  prettifyBlock(root);
  prettifyBreaks(root);
}

/** Python-Markdown's RawHtmlPostprocessor.isblocklevel. */
export function isBlockLevelHtml(html: string): boolean {
  const m = /^<\/?([^ >]+)/.exec(html);
  if (!m) return false;
  const tag = m[1]!;
  if ('!?@%'.includes(tag[0]!)) return true;
  return BLOCK_LEVEL.has(tag.toLowerCase());
}

function serializeNode(node: Node, out: string[], inCode: boolean): void {
  if (node.type === 'text') {
    out.push(inCode ? escapeAll(node.value) : escapeText(node.value));
    return;
  }
  if (node.type === 'raw') {
    out.push(node.value);
    return;
  }
  const tag = node.tagName;
  if (!ALLOWED_TAGS.has(tag)) {
    for (const child of node.children) serializeNode(child, out, inCode);
    return;
  }
  if (tag === 'p' && node.children.length === 1) {
    const only = node.children[0]!;
    if (only.type === 'raw' && isBlockLevelHtml(only.value)) {
      out.push(only.value);
      return;
    }
  }
  out.push('<', tag);
  for (const name of Object.keys(node.properties).sort()) {
    if (!ALLOWED_ATTRIBUTES.has(name)) continue;
    const value = node.properties[name]!;
    // Python-Markdown writes an attribute whose value is its name as a bare boolean attribute.
    if (value === name) out.push(' ', name);
    else out.push(' ', name, '="', escapeAttribute(value), '"');
  }
  out.push('>');
  if (VOID.has(tag)) return;
  const childInCode = inCode || tag === 'code';
  for (const child of node.children) serializeNode(child, out, childInCode);
  out.push('</', tag, '>');
}

/** Serialize the children of the document root, as Markdown.convert() returns them. */
export function serialize(root: ElementNode): string {
  const out: string[] = [];
  for (const child of root.children) serializeNode(child, out, false);
  return out.join('').trim();
}
