// Patterns that organization administrators write (linkifiers) run in RE2, a linear-time engine,
// as they do in Zulip: JavaScript's backtracking RegExp takes exponential time on patterns such as
// `(a+)+b`, and one such render would stall every request and long-poll of the process.
import { type Matcher, RE2JS, RE2JSException, RE2JSSyntaxException } from 're2js';

/** re2js speaks Go's error texts; Zulip answers with RE2's (C++), which clients may show. */
const RE2_ERROR_TEXTS: Record<string, string> = {
  'missing closing )': 'missing )',
  'missing closing ]': 'missing ]',
  'invalid nested repetition operator': 'bad repetition operator',
  'invalid repeat count': 'invalid repetition size',
  'missing argument to repetition operator': 'no argument for repetition operator',
  'invalid or unsupported Perl syntax': 'invalid perl operator',
  'invalid named capture': 'invalid named capture group',
  'trailing backslash at end of expression': 'trailing \\',
};

export class RegExpSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RegExpSyntaxError';
  }
}

/** RE2's message for a pattern it refuses, e.g. `missing ): (foo`. */
function re2ErrorText(error: RE2JSException): string {
  if (!(error instanceof RE2JSSyntaxException)) return error.message;
  const arg = error.getPattern();
  // RE2 names a lookbehind as the operator it does not support, not as a bad group name.
  const lookbehind = arg && /^\(\?<[=!]/.exec(arg);
  if (lookbehind) return `invalid perl operator: ${lookbehind[0]}`;
  const text = RE2_ERROR_TEXTS[error.getDescription()] ?? error.getDescription();
  return arg ? `${text}: ${arg}` : text;
}

/** Compile RE2 syntax; a pattern RE2 refuses throws RegExpSyntaxError with RE2's message. */
export function compileRe2(source: string): RE2JS {
  try {
    return RE2JS.compile(source);
  } catch (error) {
    if (error instanceof RE2JSException) throw new RegExpSyntaxError(re2ErrorText(error));
    throw error;
  }
}

/**
 * An RE2 pattern behind the part of RegExp our callers use: `exec` from `lastIndex`, giving the
 * match, its numbered and named groups and its index (in UTF-16 units, as JavaScript counts).
 *
 * Each search first asks the DFA whether the rest of the input matches at all, which stops at the
 * first match and answers most inputs (that contain no match) quickly. That test sees only the
 * text from `lastIndex` on, so it must not miss a match that depends on text before it: true of
 * patterns whose matches assert nothing about their left context but `^`, such as linkifiers
 * (their first group consumes the delimiter before the match).
 */
export class LinearRegExp {
  lastIndex = 0;
  private readonly re: RE2JS;
  private readonly names: Array<[string, number]>;

  constructor(source: string) {
    this.re = compileRe2(source);
    this.names = Object.entries(this.re.namedGroups());
  }

  /** The names of the pattern's named groups. */
  groupNames(): string[] {
    return this.names.map(([name]) => name);
  }

  exec(input: string): RegExpExecArray | null {
    const from = this.lastIndex;
    let matcher: Matcher | null = null;
    if (from <= input.length && this.re.test(from ? input.slice(from) : input)) {
      matcher = this.re.matcher(input);
      if (!matcher.find(from)) matcher = null;
    }
    if (!matcher) {
      this.lastIndex = 0;
      return null;
    }
    const values: Array<string | undefined> = [];
    for (let i = 0; i <= matcher.groupCount(); i++) values.push(matcher.group(i) ?? undefined);
    const groups: Record<string, string | undefined> = {};
    for (const [name, index] of this.names) groups[name] = values[index];
    this.lastIndex = matcher.end();
    return Object.assign(values, { index: matcher.start(), input, groups }) as RegExpExecArray;
  }
}
