// Block structure the way Python-Markdown's BlockParser builds it with
// Zulip's processor set: blocks are split on blank lines and each processor,
// in priority order, may claim the first one. Lists nest by two spaces,
// headings need a space after '#', a blockquote silences its mentions.
import { MENTIONS_RE, USER_GROUP_MENTIONS_RE } from './mention-syntax.ts';
import { el, type ElementNode, lastElement, text } from './tree.ts';

type State = 'list' | 'looselist' | 'detabbed' | 'blockquote';

interface BlockProcessor {
  test(parent: ElementNode, block: string): boolean;
  run(parent: ElementNode, blocks: string[]): boolean | void;
}

const LIST_TAB = 2;
const CODE_TAB = 4;

/** The "text" of an element in ElementTree terms: leading text before the first child element. */
function leadingText(node: ElementNode): string {
  let out = '';
  for (const child of node.children) {
    if (child.type === 'element') break;
    if (child.type === 'text') out += child.value;
  }
  return out;
}

function takeLeadingText(node: ElementNode): string {
  const value = leadingText(node);
  const idx = node.children.findIndex((c) => c.type === 'element');
  node.children.splice(0, idx < 0 ? node.children.length : idx);
  return value;
}

/** The "tail" of the last child element: the text after it. */
function trailingTextIndex(node: ElementNode): number {
  let i = node.children.length;
  while (i > 0 && node.children[i - 1]!.type !== 'element') i--;
  return i;
}

function detab(block: string, length: number): [string, string] {
  const lines = block.split('\n');
  const out: string[] = [];
  for (const line of lines) {
    if (line.startsWith(' '.repeat(length))) out.push(line.slice(length));
    else if (!line.trim()) out.push('');
    else break;
  }
  return [out.join('\n'), lines.slice(out.length).join('\n')];
}

function looseDetab(block: string, level: number, tab: number): string {
  const prefix = ' '.repeat(tab * level);
  return block
    .split('\n')
    .map((line) => (line.startsWith(prefix) ? line.slice(prefix.length) : line))
    .join('\n');
}

function isCodeBlock(node: ElementNode | undefined): node is ElementNode {
  return !!node && node.tagName === 'pre' && node.children[0]?.type === 'element' && node.children[0].tagName === 'code';
}

function codeText(pre: ElementNode): string {
  const code = pre.children[0] as ElementNode;
  return code.children.map((c) => (c.type === 'text' ? c.value : '')).join('');
}

function setCodeText(pre: ElementNode, value: string): void {
  (pre.children[0] as ElementNode).children = [text(value, true)];
}

export class BlockParser {
  private readonly states: State[] = [];
  private readonly processors: BlockProcessor[];

  constructor() {
    this.processors = [
      this.emptyProcessor(),
      this.listIndentProcessor(),
      this.codeProcessor(),
      this.hashHeaderProcessor(),
      this.tableProcessor(),
      this.hrProcessor(),
      this.listProcessor('ol'),
      this.listProcessor('ul'),
      this.blockQuoteProcessor(),
      this.paragraphProcessor(),
    ];
  }

  parseDocument(lines: string[]): ElementNode {
    this.states.length = 0;
    const root = el('div');
    this.parseChunk(root, lines.join('\n'));
    return root;
  }

  parseChunk(parent: ElementNode, chunk: string): void {
    this.parseBlocks(parent, chunk.split('\n\n'));
  }

  parseBlocks(parent: ElementNode, blocks: string[]): void {
    while (blocks.length) {
      for (const processor of this.processors) {
        if (processor.test(parent, blocks[0]!)) {
          if (processor.run(parent, blocks) !== false) break;
        }
      }
    }
  }

  private isState(state: State): boolean {
    return this.states[this.states.length - 1] === state;
  }

  private emptyProcessor(): BlockProcessor {
    return {
      test: (_parent, block) => !block || block.startsWith('\n'),
      run: (parent, blocks) => {
        const block = blocks.shift()!;
        let filler = '\n\n';
        if (block) {
          filler = '\n';
          const rest = block.slice(1);
          if (rest) blocks.unshift(rest);
        }
        const sibling = lastElement(parent);
        if (isCodeBlock(sibling)) setCodeText(sibling, codeText(sibling) + filler);
      },
    };
  }

  private listIndentProcessor(): BlockProcessor {
    const indentRe = /^((?:[ ]{2})+)/;
    const getLevel = (parent: ElementNode, block: string): [number, ElementNode] => {
      const m = indentRe.exec(block);
      const indentLevel = m ? m[1]!.length / LIST_TAB : 0;
      let level = this.isState('list') ? 1 : 0;
      let node = parent;
      while (indentLevel > level) {
        const child = lastElement(node);
        if (child && (child.tagName === 'ul' || child.tagName === 'ol' || child.tagName === 'li')) {
          if (child.tagName === 'ul' || child.tagName === 'ol') level++;
          node = child;
        } else {
          break;
        }
      }
      return [level, node];
    };
    return {
      test: (parent, block) => {
        if (!block.startsWith(' '.repeat(LIST_TAB)) || this.isState('detabbed')) return false;
        if (parent.tagName === 'li') return true;
        const last = lastElement(parent);
        return !!last && (last.tagName === 'ul' || last.tagName === 'ol');
      },
      run: (parent, blocks) => {
        let block = blocks.shift()!;
        const [level, sibling] = getLevel(parent, block);
        block = looseDetab(block, level, LIST_TAB);
        this.states.push('detabbed');
        if (parent.tagName === 'li') {
          const last = lastElement(parent);
          if (last && (last.tagName === 'ul' || last.tagName === 'ol')) this.parseBlocks(last, [block]);
          else this.parseBlocks(parent, [block]);
        } else if (sibling.tagName === 'li') {
          this.parseBlocks(sibling, [block]);
        } else if (lastElement(sibling)?.tagName === 'li') {
          const li = lastElement(sibling)!;
          if (leadingText(li)) {
            const p = el('p', {}, [text(takeLeadingText(li))]);
            li.children.unshift(p);
          }
          this.parseChunk(li, block);
        } else {
          const li = el('li');
          sibling.children.push(li);
          this.parseBlocks(li, [block]);
        }
        this.states.pop();
      },
    };
  }

  private codeProcessor(): BlockProcessor {
    return {
      test: (_parent, block) => block.startsWith(' '.repeat(CODE_TAB)),
      run: (parent, blocks) => {
        const sibling = lastElement(parent);
        let block = blocks.shift()!;
        let rest = '';
        if (isCodeBlock(sibling)) {
          [block, rest] = detab(block, CODE_TAB);
          setCodeText(sibling, `${codeText(sibling)}\n${block.trimEnd()}\n`);
        } else {
          [block, rest] = detab(block, CODE_TAB);
          parent.children.push(el('pre', {}, [el('code', {}, [text(block.trimEnd() + '\n', true)])]));
        }
        if (rest) blocks.unshift(rest);
      },
    };
  }

  private hashHeaderProcessor(): BlockProcessor {
    const re = /(?:^|\n)(#{1,6})\s((?:\\.|[^\\])*?)#*(?:\n|$)/;
    return {
      test: (_parent, block) => re.test(block),
      run: (parent, blocks) => {
        const block = blocks.shift()!;
        const m = re.exec(block)!;
        const before = block.slice(0, m.index);
        const after = block.slice(m.index + m[0].length);
        if (before) this.parseBlocks(parent, [before]);
        parent.children.push(el('h' + m[1]!.length, {}, [text(m[2]!.trim())]));
        if (after) blocks.unshift(after);
      },
    };
  }

  private tableProcessor(): BlockProcessor {
    let separator: string[] = [];
    let border = 0;
    const endBorder = /(?<!\\)(?:\\\\)*\|$/;
    const splitRow = (row: string): string[] => {
      if (border) {
        if (row.startsWith('|')) row = row.slice(1);
        row = row.replace(endBorder, '');
      }
      return splitCells(row);
    };
    const buildRow = (row: string, tag: 'th' | 'td', align: Array<string | null>): ElementNode => {
      const cells = splitRow(row);
      const tr = el('tr');
      align.forEach((a, i) => {
        const cell = el(tag, a ? { style: `text-align: ${a};` } : {}, [text(stripSpaces(cells[i] ?? ''))]);
        tr.children.push(cell);
      });
      return tr;
    };
    return {
      test: (_parent, block) => {
        const rows = block.split('\n').map(stripSpaces);
        if (rows.length <= 1) return false;
        const header0 = rows[0]!;
        border = 0;
        if (header0.startsWith('|')) border |= 1;
        if (endBorder.test(header0)) border |= 2;
        const row0 = splitRow(header0);
        let isTable = row0.length > 1;
        if (!isTable && row0.length === 1 && border) {
          for (let i = 1; i < rows.length; i++) {
            isTable = rows[i]!.startsWith('|') || endBorder.test(rows[i]!);
            if (!isTable) break;
          }
        }
        if (isTable) {
          const row = splitRow(rows[1]!);
          isTable = row.length === row0.length && /^[|:\- ]*$/.test(row.join(''));
          if (isTable) separator = row;
        }
        return isTable;
      },
      run: (parent, blocks) => {
        const lines = blocks.shift()!.split('\n');
        const header = stripSpaces(lines[0]!);
        const rows = lines.length < 3 ? [] : lines.slice(2);
        const align = separator.map((c) => {
          c = stripSpaces(c);
          if (c.startsWith(':') && c.endsWith(':')) return 'center';
          if (c.startsWith(':')) return 'left';
          if (c.endsWith(':')) return 'right';
          return null;
        });
        const thead = el('thead', {}, [buildRow(header, 'th', align)]);
        const tbody = el('tbody');
        if (rows.length === 0)
          tbody.children.push(
            el(
              'tr',
              {},
              align.map(() => el('td')),
            ),
          );
        else for (const row of rows) tbody.children.push(buildRow(stripSpaces(row), 'td', align));
        parent.children.push(el('table', {}, [thead, tbody]));
      },
    };
  }

  private hrProcessor(): BlockProcessor {
    const re = /^[ ]{0,3}(?=(?<g>(?:-+[ ]{0,2}){3,}|(?:_+[ ]{0,2}){3,}|(?:\*+[ ]{0,2}){3,}))\k<g>[ ]*$/m;
    return {
      test: (_parent, block) => re.test(block),
      run: (parent, blocks) => {
        const block = blocks.shift()!;
        const m = re.exec(block)!;
        const pre = block.slice(0, m.index).replace(/\n+$/, '');
        if (pre) this.parseBlocks(parent, [pre]);
        parent.children.push(el('hr'));
        const post = block.slice(m.index + m[0].length).replace(/^\n+/, '');
        if (post) blocks.unshift(post);
      },
    };
  }

  /** Python-Markdown's sane-lists O/UListProcessor, built with a two-space tab. */
  private listProcessor(tag: 'ol' | 'ul'): BlockProcessor {
    const re = tag === 'ol' ? /^[ ]?\d+\.[ ]+(.*)/ : /^[ ]?[*+-][ ]+(.*)/;
    const childRe = tag === 'ol' ? /^[ ]?((\d+\.))[ ]+(.*)/ : /^[ ]?(([*+-]))[ ]+(.*)/;
    const indentRe = /^[ ]{2,3}((\d+\.)|[*+-])[ ]+.*/;
    const getItems = (block: string): [string[], string] => {
      const items: string[] = [];
      let startsWith = '1';
      for (const line of block.split('\n')) {
        const m = childRe.exec(line);
        if (m) {
          if (!items.length && tag === 'ol') startsWith = /\d+/.exec(m[1]!)![0];
          items.push(m[3]!);
        } else if (indentRe.test(line)) {
          if (items[items.length - 1]!.startsWith(' '.repeat(LIST_TAB))) items[items.length - 1] += '\n' + line;
          else items.push(line);
        } else {
          items[items.length - 1] += '\n' + line;
        }
      }
      return [items, startsWith];
    };
    return {
      test: (_parent, block) => re.test(block),
      run: (parent, blocks) => {
        const [items, startsWith] = getItems(blocks.shift()!);
        const sibling = lastElement(parent);
        let lst: ElementNode;
        if (sibling && sibling.tagName === tag) {
          lst = sibling;
          const lastLi = lastElement(lst)!;
          if (leadingText(lastLi)) lastLi.children.unshift(el('p', {}, [text(takeLeadingText(lastLi))]));
          const tailIdx = trailingTextIndex(lastLi);
          if (tailIdx > 0 && tailIdx < lastLi.children.length) {
            const tail = lastLi.children
              .splice(tailIdx)
              .map((c) => (c.type === 'text' ? c.value : ''))
              .join('');
            if (tail) lastLi.children.push(el('p', {}, [text(tail.trimStart())]));
          }
          const li = el('li');
          lst.children.push(li);
          this.states.push('looselist');
          this.parseBlocks(li, [items.shift()!]);
          this.states.pop();
        } else if (parent.tagName === 'ol' || parent.tagName === 'ul') {
          lst = parent;
        } else {
          lst = el(tag, tag === 'ol' && startsWith !== '1' ? { start: startsWith } : {});
          parent.children.push(lst);
        }
        this.states.push('list');
        for (const item of items) {
          if (item.startsWith(' '.repeat(LIST_TAB))) {
            this.parseBlocks(lastElement(lst)!, [item]);
          } else {
            const li = el('li');
            lst.children.push(li);
            this.parseBlocks(li, [item]);
          }
        }
        this.states.pop();
      },
    };
  }

  private blockQuoteProcessor(): BlockProcessor {
    // Zulip's regex: a quote of nothing but empty '>' lines is not a quote.
    const re = /(^|\n)(?!(?:[ ]{0,3}>\s*(?:$|\n))*(?:$|\n))[ ]{0,3}>[ ]?(.*)/;
    const lineRe = /^(?!(?:[ ]{0,3}>\s*(?:$|\n))*(?:$|\n))[ ]{0,3}>[ ]?(.*)/;
    const clean = (line: string): string => {
      line = line.replace(MENTIONS_RE(), (_m, _silent, _full, match: string) => `@_**${match}**`);
      line = line.replace(USER_GROUP_MENTIONS_RE(), (_m, _silent, _full, match: string) => `@_*${match}*`);
      const m = lineRe.exec(line);
      if (line.trim() === '>') return '';
      if (m) return m[1]!;
      return line;
    };
    return {
      test: (_parent, block) => re.test(block),
      run: (parent, blocks) => {
        let block = blocks.shift()!;
        const m = re.exec(block);
        if (m) {
          const before = block.slice(0, m.index);
          this.parseBlocks(parent, [before]);
          block = block.slice(m.index).split('\n').map(clean).join('\n');
        }
        const quote = el('blockquote');
        parent.children.push(quote);
        this.states.push('blockquote');
        this.parseChunk(quote, block);
        this.states.pop();
      },
    };
  }

  private paragraphProcessor(): BlockProcessor {
    return {
      test: () => true,
      run: (parent, blocks) => {
        const block = blocks.shift()!;
        if (!block.trim()) return;
        if (this.isState('list')) {
          // A tight list item: the block extends the item's text (or the tail of its last child).
          if (lastElement(parent) || leadingText(parent)) {
            parent.children.push(text('\n' + block));
          } else {
            parent.children.push(text(block.trimStart()));
          }
        } else {
          parent.children.push(el('p', {}, [text(block.trimStart())]));
        }
      },
    };
  }
}

function stripSpaces(value: string): string {
  return value.replace(/^ +| +$/g, '');
}

/** Split a table row on pipes that are neither escaped nor inside a code span. */
function splitCells(row: string): string[] {
  const pipes: number[] = [];
  const tics: number[] = [];
  const ticPoints: Array<[number, number, number]> = [];
  const re = /(\\\\)|(\\`+)|(`+)|(\\\|)|(\|)/g;
  for (let m = re.exec(row); m; m = re.exec(row)) {
    if (m[2]) {
      tics.push(m[2].length - 1);
      ticPoints.push([m.index, m.index + m[2].length - 1, 1]);
    } else if (m[3]) {
      tics.push(m[3].length);
      ticPoints.push([m.index, m.index + m[3].length - 1, 0]);
    } else if (m[5]) {
      pipes.push(m.index);
    }
  }
  const regions: Array<[number, number]> = [];
  let pos = 0;
  while (pos < tics.length) {
    const size = tics[pos]! - ticPoints[pos]![2];
    const index = size === 0 ? -1 : tics.slice(pos + 1).indexOf(size);
    if (index < 0) {
      pos++;
      continue;
    }
    regions.push([ticPoints[pos]![0], ticPoints[pos + index + 1]![1]]);
    pos += index + 2;
  }
  const good = pipes.filter((pipe) => {
    for (const [start, end] of regions) {
      if (pipe < start) return true;
      if (start <= pipe && pipe <= end) return false;
    }
    return true;
  });
  const cells: string[] = [];
  let start = 0;
  for (const pipe of good) {
    cells.push(row.slice(start, pipe));
    start = pipe + 1;
  }
  cells.push(row.slice(start));
  return cells;
}
