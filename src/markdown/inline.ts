// The inline engine: Python-Markdown's InlineProcessor, ported closely because
// Zulip's output depends on its exact behaviour. Patterns run in priority
// order over a string; each match is replaced by a placeholder for the node it
// produced, so later patterns cannot see inside it. Works on an
// ElementTree-like model (text and tail) and converts back at the end.
import { el, type ElementNode, text as textNode } from './tree.ts';

export interface EtElement {
  tag: string;
  attrib: Record<string, string>;
  text: string | null;
  tail: string | null;
  /** Atomic text is never processed by patterns (placeholders are still expanded). */
  atomic?: boolean;
  tailAtomic?: boolean;
  children: EtElement[];
}

export function etElement(tag: string, attrib: Record<string, string> = {}, text: string | null = null, atomic = false): EtElement {
  return { tag, attrib, text, tail: null, atomic, children: [] };
}

/** A new-style InlineProcessor: every match is offered in turn; null rejects it. */
export interface SearchPattern {
  kind: 'search';
  name: string;
  /** A RegExp, or a linear-time one for administrators' patterns. */
  regex: Pick<RegExp, 'exec' | 'lastIndex'>;
  handle(m: RegExpExecArray, data: string): { node: EtElement | string; start: number; end: number } | null;
  /**
   * Every match can be replaced in one pass, with the same result as one at a time: true when
   * the pattern never matches placeholder characters nor looks outside its match.
   */
  batch?: boolean;
}

/** A legacy Pattern: only the first match is offered; null ends this pattern for the text. */
export interface LegacyPattern {
  kind: 'legacy';
  name: string;
  regex: RegExp;
  handle(m: RegExpExecArray): EtElement | string | null;
}

export type InlinePattern = SearchPattern | LegacyPattern;

const PREFIX = '\u0002klzzwxh:';
const PLACEHOLDER_RE = /\u0002klzzwxh:([0-9]{4})\u0003/;
const PLACEHOLDER_RE_G = /\u0002klzzwxh:([0-9]{4})\u0003/g;

export class InlineEngine {
  private stashed = new Map<string, EtElement | string>();

  constructor(private readonly patterns: InlinePattern[]) {}

  private stash(node: EtElement | string): string {
    const id = String(this.stashed.size).padStart(4, '0');
    this.stashed.set(id, node);
    return `${PREFIX}${id}\u0003`;
  }

  /** Replace inline placeholders by their text, as InlineProcessor.unescape does for link hrefs. */
  unescape(value: string): string {
    return value.replace(PLACEHOLDER_RE_G, (whole, id: string) => {
      const node = this.stashed.get(id);
      if (node === undefined) return whole;
      return typeof node === 'string' ? node : itertext(node);
    });
  }

  private handleInline(data: string, patternIndex = 0): string {
    let startIndex = 0;
    while (patternIndex < this.patterns.length) {
      const [next, matched, nextStart] = this.applyPattern(this.patterns[patternIndex]!, data, patternIndex, startIndex);
      data = next;
      startIndex = nextStart;
      if (!matched) patternIndex++;
    }
    return data;
  }

  /** The first match a search pattern accepts, scanning from startIndex. */
  private searchMatch(pattern: SearchPattern, data: string, startIndex: number): { node: EtElement | string; start: number; end: number } | null {
    const re = pattern.regex;
    re.lastIndex = startIndex;
    for (let m = re.exec(data); m; m = re.exec(data)) {
      if (m[0] === '') re.lastIndex++;
      const result = pattern.handle(m, data);
      if (result) return result;
    }
    return null;
  }

  /** A matched node's own text goes through the later patterns, then the node is stashed. */
  private placeholderFor(node: EtElement | string, patternIndex: number): string {
    if (typeof node !== 'string' && !node.atomic) {
      for (const child of [node, ...node.children]) {
        if (child.text && !child.atomic) child.text = this.handleInline(child.text, patternIndex + 1);
        if (child !== node && child.tail && !child.tailAtomic) child.tail = this.handleInline(child.tail, patternIndex);
      }
    }
    return this.stash(node);
  }

  /**
   * A batch pattern's matches, all replaced at once: one at a time, each replacement copies the
   * text and the next search flattens it again, quadratic in the matches (10,000 emoji took 4 s).
   */
  private applyAll(pattern: SearchPattern, data: string, patternIndex: number, startIndex: number): [string, boolean, number] {
    const pieces = [data.slice(0, startIndex)];
    let pos = startIndex;
    for (let result = this.searchMatch(pattern, data, pos); result; result = this.searchMatch(pattern, data, pos)) {
      pieces.push(data.slice(pos, result.start), this.placeholderFor(result.node, patternIndex));
      pos = result.end;
    }
    pieces.push(data.slice(pos));
    // Where a one-at-a-time pass ends: no further match, the next pattern starts from the beginning.
    return [pieces.join(''), false, 0];
  }

  private applyPattern(pattern: InlinePattern, data: string, patternIndex: number, startIndex: number): [string, boolean, number] {
    if (pattern.kind === 'search' && pattern.batch) return this.applyAll(pattern, data, patternIndex, startIndex);
    let node: EtElement | string;
    let start: number;
    let end: number;
    if (pattern.kind === 'search') {
      const result = this.searchMatch(pattern, data, startIndex);
      if (!result) return [data, false, 0];
      ({ node, start, end } = result);
    } else {
      const m = pattern.regex.exec(data.slice(startIndex));
      if (!m) return [data, false, 0];
      const handled = pattern.handle(m);
      if (handled === null) return [data, true, data.length + 1];
      node = handled;
      start = startIndex + m.index;
      end = start + m[0].length;
    }
    const placeholder = this.placeholderFor(node, patternIndex);
    // Python-Markdown rescans from 0 after a match; a search pattern resumes at the
    // placeholder instead, which finds the same matches without quadratic rescans.
    return [data.slice(0, start) + placeholder + data.slice(end), true, pattern.kind === 'search' ? start : 0];
  }

  /** Split text at placeholders into stashed nodes; text goes into `parent.text`/`parent.tail`. */
  private processPlaceholders(data: string | null, parent: EtElement, isText: boolean): EtElement[] {
    const result: EtElement[] = [];
    let startIndex = 0;
    while (data) {
      const index = data.indexOf(PREFIX, startIndex);
      if (index === -1) {
        appendText(result, parent, isText, data.slice(startIndex));
        data = '';
        continue;
      }
      const m = PLACEHOLDER_RE.exec(data.slice(index));
      const id = m && m.index === 0 ? m[1]! : undefined;
      const node = id !== undefined ? this.stashed.get(id) : undefined;
      if (node === undefined) {
        const stop = index + PREFIX.length;
        appendText(result, parent, isText, data.slice(startIndex, stop));
        startIndex = stop;
        continue;
      }
      const phEnd = index + m![0].length;
      if (index > 0) appendText(result, parent, isText, data.slice(startIndex, index));
      if (typeof node === 'string') {
        appendText(result, parent, isText, node);
        startIndex = phEnd;
        continue;
      }
      for (const child of [node, ...node.children]) {
        if (child.tail && child.tail.trim()) this.processElementText(node, child, false);
        if (child.text && child.text.trim()) this.processElementText(child, child, true);
      }
      startIndex = phEnd;
      result.push(node);
    }
    return result;
  }

  private processElementText(node: EtElement, subnode: EtElement, isText: boolean): void {
    let value: string | null;
    if (isText) {
      value = subnode.text;
      subnode.text = null;
    } else {
      value = subnode.tail;
      subnode.tail = null;
    }
    const childResult = this.processPlaceholders(value, subnode, isText);
    const pos = !isText && node !== subnode ? node.children.indexOf(subnode) + 1 : 0;
    node.children.splice(pos, 0, ...childResult);
  }

  /** InlineProcessor.run over a whole tree. */
  run(tree: EtElement): void {
    this.stashed = new Map();
    const stack: EtElement[] = [tree];
    while (stack.length) {
      const current = stack.pop()!;
      const insertQueue: Array<[EtElement, EtElement[]]> = [];
      // Live iteration: nodes inserted from a tail are visited (and reprocessed) too.
      for (let i = 0; i < current.children.length; i++) {
        const child = current.children[i]!;
        if (child.text && !child.atomic) {
          const value = child.text;
          child.text = null;
          const lst = this.processPlaceholders(this.handleInline(value), child, true);
          stack.push(...lst);
          insertQueue.push([child, lst]);
        }
        if (child.tail) {
          const tail = child.tailAtomic ? child.tail : this.handleInline(child.tail);
          const dummy = etElement('d');
          child.tail = null;
          const tailResult = this.processPlaceholders(tail, dummy, false);
          if (dummy.tail) child.tail = dummy.tail;
          const pos = current.children.indexOf(child) + 1;
          current.children.splice(pos, 0, ...tailResult);
        }
        if (child.children.length) stack.push(child);
      }
      for (const [element, lst] of insertQueue) element.children.splice(0, 0, ...lst);
    }
  }
}

/** Text after the last stashed node, or into the parent's text or tail when there is none yet. */
function appendText(result: EtElement[], parent: EtElement, isText: boolean, value: string): void {
  if (!value) return;
  if (result.length) {
    const last = result[result.length - 1]!;
    last.tail = (last.tail ?? '') + value;
  } else if (!isText) {
    parent.tail = (parent.tail ?? '') + value;
  } else {
    parent.text = (parent.text ?? '') + value;
  }
}

function itertext(node: EtElement): string {
  let out = node.text ?? '';
  for (const child of node.children) out += itertext(child) + (child.tail ?? '');
  return out;
}

/** Block tree (children model) to the ElementTree-like model. */
export function toEt(node: ElementNode): EtElement {
  const out = etElement(node.tagName, { ...node.properties });
  let target: 'text' | EtElement = 'text';
  for (const child of node.children) {
    if (child.type === 'element') {
      const converted = toEt(child);
      out.children.push(converted);
      target = converted;
    } else if (child.type === 'text') {
      if (target === 'text') {
        out.text = (out.text ?? '') + child.value;
        if (child.atomic) out.atomic = true;
      } else {
        target.tail = (target.tail ?? '') + child.value;
      }
    }
  }
  return out;
}

/** Back to the children model; `code` text is marked atomic so it is escaped fully. */
export function fromEt(node: EtElement): ElementNode {
  const out = el(node.tag, node.attrib);
  if (node.text) out.children.push(textNode(node.text));
  for (const child of node.children) {
    out.children.push(fromEt(child));
    if (child.tail) out.children.push(textNode(child.tail));
  }
  return out;
}
