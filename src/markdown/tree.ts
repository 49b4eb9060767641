// A small element tree shaped like hast (element / text / raw), which the
// block parser builds, the inline engine fills and the serializer writes out.

export interface TextNode {
  type: 'text';
  value: string;
  /** Atomic text is never run through the inline patterns (code, link text). */
  atomic?: boolean;
}

/** Trusted HTML produced by us (KaTeX, entity references, stashed code blocks). */
export interface RawNode {
  type: 'raw';
  value: string;
}

export interface ElementNode {
  type: 'element';
  tagName: string;
  properties: Record<string, string>;
  children: Node[];
}

export type Node = TextNode | RawNode | ElementNode;

export function el(tagName: string, properties: Record<string, string> = {}, children: Node[] = []): ElementNode {
  return { type: 'element', tagName, properties, children };
}

export function text(value: string, atomic = false): TextNode {
  return atomic ? { type: 'text', value, atomic: true } : { type: 'text', value };
}

/** Python-Markdown's notion of block-level tags (used for layout newlines and raw HTML). */
export const BLOCK_LEVEL = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'details',
  'div',
  'dl',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hgroup',
  'hr',
  'main',
  'menu',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'table',
  'ul',
  'canvas',
  'colgroup',
  'dd',
  'body',
  'dt',
  'group',
  'html',
  'iframe',
  'li',
  'legend',
  'math',
  'map',
  'noscript',
  'output',
  'object',
  'option',
  'progress',
  'script',
  'style',
  'summary',
  'tbody',
  'td',
  'textarea',
  'tfoot',
  'th',
  'thead',
  'tr',
  'video',
]);

export function lastElement(parent: ElementNode): ElementNode | undefined {
  const last = parent.children[parent.children.length - 1];
  return last && last.type === 'element' ? last : undefined;
}
