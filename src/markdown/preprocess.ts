// Line preprocessors, in Zulip's order: hanging lists, whitespace
// normalization, then fenced blocks (code, quote, spoiler, math).
import { renderCodeBlock } from './code.ts';
import { djangoEscape, renderTex } from './tex.ts';

/** Stash of trusted HTML; paragraphs hold placeholders until serialization. */
export class HtmlStash {
  readonly blocks: string[] = [];
  store(html: string): string {
    this.blocks.push(html);
    return `\u0002wzxhzdk:${this.blocks.length - 1}\u0003`;
  }
}

export const STASH_PLACEHOLDER_RE = /\u0002wzxhzdk:([0-9]+)\u0003/g;

// `[+-.]` in Zulip's Python class is a range, so ',' is a language character too.
export const FENCE_RE = /^(?<fence>~{3,}|`{3,})[ ]*(?:\{?\.?(?<lang>[a-zA-Z0-9_+,\-./#]+)[ ]*(?<header>[^ ~`][^~`]*)?\}?)?$/;

const LI_RE = /^[ ]*([*+-]|\d\.)[ ]+(.*)/;

/** Insert a blank line between a paragraph and a list hanging off it (outside code fences). */
export function hangingLists(lines: string[]): string[] {
  const copy = lines.slice();
  let inserts = 0;
  let inCodeFence = false;
  const openFences: Array<{ fence: string; isCode: boolean }> = [];
  for (let i = 0; i < lines.length - 1; i++) {
    const line = lines[i]!;
    const m = FENCE_RE.exec(line);
    if (m) {
      const fence = m.groups!.fence!;
      const lang = m.groups!.lang;
      const isCode = lang !== 'quote' && lang !== 'quoted';
      const matchesLast = openFences.length > 0 && openFences[openFences.length - 1]!.fence === fence;
      if (!lang && matchesLast) openFences.pop();
      else openFences.push({ fence, isCode });
      inCodeFence = openFences.some((f) => f.isCode);
    }
    const li1 = LI_RE.exec(line);
    const li2 = LI_RE.exec(lines[i + 1]!);
    if (!inCodeFence && line && ((li2 && !li1) || (li1 && li2 && (li1[1]!.length === 1) !== (li2[1]!.length === 1)))) {
      copy.splice(i + inserts + 1, 0, '');
      inserts++;
    }
  }
  return copy;
}

function expandTabs(line: string, size: number): string {
  if (!line.includes('\t')) return line;
  let out = '';
  for (const ch of line) {
    if (ch === '\t') out += ' '.repeat(size - (out.length % size));
    else out += ch;
  }
  return out;
}

/** Python-Markdown's NormalizeWhitespace. */
export function normalizeWhitespace(lines: string[]): string[] {
  let source = lines.join('\n');
  // Each step only when its characters occur: most messages have none of them.
  if (source.includes('\u0002') || source.includes('\u0003')) source = source.replace(/[\u0002\u0003]/g, '');
  if (source.includes('\r')) source = source.replace(/\r\n/g, '\n').replace(/\r/g, '\n');
  source += '\n\n';
  if (source.includes('\t'))
    source = source
      .split('\n')
      .map((l) => expandTabs(l, 4))
      .join('\n');
  if (source.includes(' \n')) source = source.replace(/(?<=\n) +\n/g, '\n');
  return source.split('\n');
}

interface Handler {
  handleLine(line: string): void;
  done(): void;
}

/**
 * A block's lines, a nested block's kept whole with the prefix each of its lines takes (`> ` in
 * a quote). Zulip joins and splits every level's text again, which is quadratic in the nesting:
 * 900 nested spoilers (a 10,000-character message) took 1.4 s that way.
 */
type Lines = Array<string | { prefix: string; lines: Lines }>;

function flatten(lines: Lines, prefix = '', out: string[] = []): string[] {
  for (const line of lines) {
    if (typeof line === 'string') out.push(prefix + line);
    else flatten(line.lines, prefix + line.prefix, out);
  }
  return out;
}

/** Zulip's FencedBlockPreprocessor: a stack of handlers fed one line at a time. */
export class FencedBlocks {
  private handlers: Handler[] = [];

  constructor(
    private readonly stash: HtmlStash,
    private readonly defaultLanguage: string | undefined,
  ) {}

  run(lines: string[]): string[] {
    const blocks: Lines = [];
    this.handlers = [];
    this.push(this.outerHandler(blocks));
    for (const line of lines) this.handlers[this.handlers.length - 1]!.handleLine(line);
    while (this.handlers.length) this.handlers[this.handlers.length - 1]!.done();
    const output = flatten(blocks);
    if (output.length > 2 && output[output.length - 2] !== '') output.push('');
    return output;
  }

  private push(h: Handler): void {
    this.handlers.push(h);
  }

  private pop(): void {
    this.handlers.pop();
  }

  private outerHandler(output: Lines): Handler {
    return {
      handleLine: (line) => this.checkForNewFence(output, line, this.defaultLanguage),
      done: () => this.pop(),
    };
  }

  private checkForNewFence(output: Lines, line: string, defaultLanguage: string | undefined): void {
    const m = FENCE_RE.exec(line);
    if (!m) {
      output.push(line);
      return;
    }
    const fence = m.groups!.fence!;
    let lang = m.groups!.lang;
    const header = m.groups!.header;
    if (!lang && defaultLanguage) lang = defaultLanguage;
    this.push(this.genericHandler(output, fence, lang, header, defaultLanguage));
  }

  private genericHandler(output: Lines, fence: string, lang: string | undefined, header: string | undefined, defaultLanguage: string | undefined): Handler {
    const lower = lang?.toLowerCase();
    if (lower === 'quote' || lower === 'quoted') {
      return this.blockHandler(output, fence, true, (lines) => [{ prefix: '> ', lines }], defaultLanguage);
    }
    if (lower === 'spoiler') {
      return this.blockHandler(output, fence, true, (lines) => this.formatSpoiler(header, lines), undefined);
    }
    const html = lower === 'math' ? formatTex : (text: string) => renderCodeBlock(lower, text);
    return this.blockHandler(output, fence, false, (lines) => [this.stash.store(html(flatten(lines).join('\n')))], undefined);
  }

  /**
   * Quote and spoiler contents stay Markdown (and may hold further fences);
   * code and math become one stashed HTML block.
   */
  private blockHandler(output: Lines, fence: string, processContents: boolean, format: (lines: Lines) => Lines, defaultLanguage: string | undefined): Handler {
    const lines: Lines = [];
    const handler: Handler = {
      handleLine: (line) => {
        if (line.trimEnd() === fence) handler.done();
        else if (processContents) this.checkForNewFence(lines, line, defaultLanguage);
        else lines.push(line.trimEnd());
      },
      done: () => {
        if (lines.length) {
          output.push('');
          for (const line of format(lines)) output.push(line);
          output.push('');
        }
        this.pop();
      },
    };
    return handler;
  }

  private formatSpoiler(header: string | undefined, lines: Lines): Lines {
    const open = this.stash.store('<div class="spoiler-block"><div class="spoiler-header">');
    const content = this.stash.store('</div><div class="spoiler-content" aria-hidden="true">');
    const close = this.stash.store('</div></div>');
    return [open, '', ...(header === undefined ? [] : [header, '']), content, '', { prefix: '', lines }, '', close];
  }
}

function formatTex(text: string): string {
  return text
    .split('\n\n')
    .map((paragraph) => renderTex(paragraph, false) ?? '<span class="tex-error">' + djangoEscape(paragraph) + '</span>')
    .join('\n\n');
}
