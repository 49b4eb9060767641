// Alert words (Zulip's AlertWordNotificationProcessor): a word or phrase occurs in a message when
// it appears, ignoring case, in the source after the line preprocessors (so not inside fenced
// code), with the text's edge or one of a few characters on each side. The words are user input,
// so no RegExp: one Aho-Corasick pass finds every occurrence of every word in time linear in the
// text, as Zulip's pyahocorasick automaton does.

const ALLOWED_BEFORE = new Set([' ', '\n', '(', '"', '.', ',', "'", ';', '[', '*', '`', '>']);
// Zulip's set also lists '",', two characters, which no single character equals.
const ALLOWED_AFTER = new Set([' ', '\n', ')', '?', ':', '.', ',', "'", ';', ']', '!', '*', '`']);

interface TrieNode {
  next: Map<string, number>;
  /** The longest proper suffix of this node's string that is also in the trie. */
  fail: number;
  /** The word ending exactly here, or -1. */
  word: number;
  /** The nearest node along the fail chain where a word ends, or -1. */
  output: number;
}

/**
 * Zulip tests the character before a word at `start - 1` but lets any index up to 0 pass, so a
 * word starting at the second character matches whatever the first is. Kept: the same message
 * alerts the same people here.
 */
function validStart(text: string, start: number): boolean {
  if (start === 0) return true;
  const first = text.codePointAt(0)! > 0xffff ? 2 : 1;
  return start === first || ALLOWED_BEFORE.has(text[start - 1]!);
}

const validEnd = (text: string, end: number) => end >= text.length || ALLOWED_AFTER.has(text[end]!);

/** The lowercased words of a set found in message texts. */
export class AlertWordMatcher {
  private readonly words: string[];
  private readonly nodes: TrieNode[] = [{ next: new Map(), fail: 0, word: -1, output: -1 }];

  constructor(words: Iterable<string>) {
    this.words = [...new Set([...words].map((w) => w.toLowerCase()).filter((w) => w !== ''))];
    this.words.forEach((word, i) => this.insert(word, i));
    this.link();
  }

  private insert(word: string, index: number): void {
    let node = 0;
    for (const ch of word.split('')) {
      let child = this.nodes[node]!.next.get(ch);
      if (child === undefined) {
        child = this.nodes.push({ next: new Map(), fail: 0, word: -1, output: -1 }) - 1;
        this.nodes[node]!.next.set(ch, child);
      }
      node = child;
    }
    this.nodes[node]!.word = index;
  }

  /** Breadth first: each node's fail link points at a shallower node, already linked. */
  private link(): void {
    const queue = [...this.nodes[0]!.next.values()];
    for (let i = 0; i < queue.length; i++) {
      const node = this.nodes[queue[i]!]!;
      for (const [ch, child] of node.next) {
        let fail = node.fail;
        while (fail !== 0 && !this.nodes[fail]!.next.has(ch)) fail = this.nodes[fail]!.fail;
        const target = this.nodes[fail]!.next.get(ch);
        const childNode = this.nodes[child]!;
        childNode.fail = target ?? 0;
        const failNode = this.nodes[childNode.fail]!;
        childNode.output = failNode.word >= 0 ? childNode.fail : failNode.output;
        queue.push(child);
      }
    }
  }

  /** The words (lowercased) that occur in `source`. */
  find(source: string): Set<string> {
    const found = new Set<string>();
    if (this.words.length === 0) return found;
    const text = source.toLowerCase();
    let node = 0;
    for (let i = 0; i < text.length; i++) {
      const ch = text[i]!;
      while (node !== 0 && !this.nodes[node]!.next.has(ch)) node = this.nodes[node]!.fail;
      node = this.nodes[node]!.next.get(ch) ?? 0;
      for (let at = this.nodes[node]!.word >= 0 ? node : this.nodes[node]!.output; at >= 0; at = this.nodes[at]!.output) {
        const word = this.words[this.nodes[at]!.word]!;
        if (!found.has(word) && validStart(text, i + 1 - word.length) && validEnd(text, i + 1)) found.add(word);
      }
    }
    return found;
  }
}
