// Linkifiers: a regex with named groups and an RFC 6570 URL template.
// Patterns are RE2 syntax and run in RE2, as in Zulip; templates are expanded
// with the `url-template` library.
import { parseTemplate, type Template } from 'url-template';
import { LinearRegExp, RegExpSyntaxError } from './linear-regexp.ts';
import { sanitizeUrl, urlsplit, urlunsplit, webLinkRegex } from './links.ts';

export interface Linkifier {
  id: number;
  pattern: string;
  url_template: string;
  example_input?: string | null;
  reverse_template?: string | null;
  alternative_url_templates?: string[] | null;
}

export interface CompiledLinkifier {
  id: number;
  pattern: string;
  urlTemplate: string;
  /** The pattern wrapped the way Zulip wraps it: start/whitespace before, no letter or digit after. */
  regex: LinearRegExp;
  template: Template;
}

export interface CompiledLinkifiers {
  readonly list: readonly CompiledLinkifier[];
}

export class LinkifierValidationError extends Error {
  constructor(
    message: string,
    /** Which field is wrong, for APIs that report it. */
    readonly field: 'pattern' | 'url_template' | 'example_input' | 'reverse_template' | 'alternative_url_templates',
  ) {
    super(message);
    this.name = 'LinkifierValidationError';
  }
}

export const BEFORE_GROUP = 'linkifier_before_match';
export const ACTUAL_GROUP = 'linkifier_actual_match';
export const AFTER_GROUP = 'linkifier_after_match';

function compilePattern(pattern: string): { regex: LinearRegExp; groups: Set<string> } {
  try {
    // The pattern alone first, as Zulip validates it, so a syntax error quotes the user's pattern.
    const groups = new Set(new LinearRegExp(pattern).groupNames());
    const source = String.raw`(?P<${BEFORE_GROUP}>^|\s|\x{85}|\p{Z}|['"(,:<])(?P<${ACTUAL_GROUP}>${pattern})(?P<${AFTER_GROUP}>$|[^\pL\pN])`;
    return { regex: new LinearRegExp(source), groups };
  } catch (error) {
    if (error instanceof RegExpSyntaxError) throw new LinkifierValidationError(`Bad regular expression: ${error.message}`, 'pattern');
    throw error;
  }
}

interface TemplateExpression {
  operator: string;
  variables: Array<{ name: string; explode: boolean; prefix?: number }>;
}

type TemplatePart = string | TemplateExpression;

/** Parse an RFC 6570 (level 4) template; null if it is not one. */
export function parseUriTemplate(template: string): TemplatePart[] | null {
  const parts: TemplatePart[] = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    const close = template.indexOf('}', i);
    if (close >= 0 && (open < 0 || close < open)) return null;
    if (open < 0) {
      parts.push(template.slice(i));
      break;
    }
    if (open > i) parts.push(template.slice(i, open));
    const end = template.indexOf('}', open);
    if (end < 0) return null;
    let body = template.slice(open + 1, end);
    let operator = '';
    if (/^[+#./;?&]/.test(body)) {
      operator = body[0]!;
      body = body.slice(1);
    } else if (/^[=,!@|]/.test(body)) {
      return null;
    }
    const variables: TemplateExpression['variables'] = [];
    for (const spec of body.split(',')) {
      const m = /^((?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*)(?:(\*)|:([1-9][0-9]{0,3}))?$/.exec(spec);
      if (!m) return null;
      variables.push({ name: m[1]!, explode: !!m[2], ...(m[3] ? { prefix: Number(m[3]) } : {}) });
    }
    parts.push({ operator, variables });
    i = end + 1;
  }
  for (const part of parts) {
    if (typeof part === 'string' && /[\s"'<>\\^`|]/.test(part)) return null;
  }
  return parts;
}

function templateVariables(parts: TemplatePart[]): Set<string> {
  const names = new Set<string>();
  for (const part of parts) if (typeof part !== 'string') for (const v of part.variables) names.add(v.name);
  return names;
}

/** The variables of an RFC 6570 template (uri_template's variable_names); null if it is not one. */
export function uriTemplateVariables(template: string): Set<string> | null {
  const parts = parseUriTemplate(template);
  return parts && templateVariables(parts);
}

function sortedFirst(values: Iterable<string>): string {
  return [...values].sort()[0]!;
}

function checkTemplate(template: string, groups: Set<string>, field: 'url_template' | 'alternative_url_templates'): TemplatePart[] {
  const parts = parseUriTemplate(template);
  if (!parts) throw new LinkifierValidationError('Invalid URL template.', field);
  const variables = templateVariables(parts);
  const missingInPattern = [...variables].filter((v) => !groups.has(v));
  if (missingInPattern.length) {
    throw new LinkifierValidationError(`Group '${sortedFirst(missingInPattern)}' in URL template is not present in linkifier pattern.`, field);
  }
  const missingInTemplate = [...groups].filter((g) => !variables.has(g));
  if (missingInTemplate.length && field === 'url_template') {
    throw new LinkifierValidationError(`Group '${sortedFirst(missingInTemplate)}' in linkifier pattern is not present in URL template.`, field);
  }
  return parts;
}

function matchGroups(regex: LinearRegExp, input: string): Record<string, string | undefined> | null {
  regex.lastIndex = 0;
  for (let m = regex.exec(input); m; m = regex.exec(input)) {
    const g = m.groups!;
    if (g[BEFORE_GROUP] === '' && g[AFTER_GROUP] === '' && g[ACTUAL_GROUP] === input) return g;
    if (m[0] === '') regex.lastIndex++;
  }
  return null;
}

/** The variables of a URL a template produced, or null if it does not fit the template. */
export function reverseTemplate(parts: TemplatePart[], url: string): Record<string, string> | null {
  const names: string[] = [];
  let source = '^';
  for (const part of parts) {
    if (typeof part === 'string') {
      source += part.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
      continue;
    }
    const reserved = part.operator === '+' || part.operator === '#';
    const value = reserved ? '(?s:.)*?' : '[^/?#&=,;]*?';
    const prefix = part.operator === '+' ? '' : part.operator === '?' ? '\\?' : part.operator === '&' ? '&' : part.operator ? '\\' + part.operator : '';
    const sep =
      part.operator === '?' || part.operator === '&'
        ? '&'
        : part.operator === '/' || part.operator === '.' || part.operator === ';'
          ? '\\' + part.operator
          : ',';
    const named = part.operator === '?' || part.operator === '&' || part.operator === ';';
    const pieces = part.variables.map((v) => {
      names.push(v.name);
      return (named ? `${v.name}=` : '') + `(${value})`;
    });
    source += `(?:${prefix}${pieces.join(sep)})?`;
  }
  // Lazy groups backtrack polynomially in a RegExp; the template is an administrator's input.
  const m = new LinearRegExp(source + '$').exec(url);
  if (!m) return null;
  const out: Record<string, string> = {};
  names.forEach((name, i) => {
    const raw = m[i + 1];
    if (raw === undefined) return;
    try {
      out[name] = decodeURIComponent(raw);
    } catch {
      // Not valid percent-encoding: the URL is not one this template made.
      out[name] = raw;
    }
  });
  return out;
}

/** Expand a reverse template: `{name}` is a variable, `{{` and `}}` are literal braces. */
export function expandReverseTemplate(template: string, values: Record<string, string>): string | null {
  let out = '';
  for (let i = 0; i < template.length; i++) {
    const c = template[i]!;
    if (c === '{' && template[i + 1] === '{') {
      out += '{';
      i++;
    } else if (c === '}' && template[i + 1] === '}') {
      out += '}';
      i++;
    } else if (c === '{') {
      const end = template.indexOf('}', i);
      if (end < 0) return null;
      const name = template.slice(i + 1, end);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || !(name in values)) return null;
      out += values[name];
      i = end;
    } else if (c === '}') {
      return null;
    } else {
      out += c;
    }
  }
  return out;
}

function reverseTemplateVariables(template: string): string[] | null {
  const names: string[] = [];
  const stripped = template.replace(/\{\{|\}\}/g, '');
  if (/\{(?![A-Za-z_][A-Za-z0-9_]*\})|(?<!\{[A-Za-z_][A-Za-z0-9_]*)\}/.test(stripped)) return null;
  for (const m of stripped.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) names.push(m[1]!);
  return names;
}

/**
 * Check a linkifier as Zulip's model validation does, plus the example and
 * reverse-template round trip. Throws LinkifierValidationError.
 */
export function validateLinkifier(input: Omit<Linkifier, 'id'> & { id?: number }): void {
  const { regex, groups } = compilePattern(input.pattern);
  const urlParts = checkTemplate(input.url_template, groups, 'url_template');
  const alternatives = (input.alternative_url_templates ?? []).map((t) => {
    try {
      return checkTemplate(t, groups, 'alternative_url_templates');
    } catch (error) {
      if (error instanceof LinkifierValidationError && error.message === 'Invalid URL template.') {
        throw new LinkifierValidationError(`Invalid alternative URL template: ${t}`, 'alternative_url_templates');
      }
      throw error;
    }
  });
  const example = input.example_input ?? null;
  const reverse = input.reverse_template ?? null;
  if (alternatives.length && !reverse) {
    throw new LinkifierValidationError('Alternative URL templates require a reverse template.', 'alternative_url_templates');
  }
  if (reverse !== null) {
    const names = reverseTemplateVariables(reverse);
    if (!names) throw new LinkifierValidationError('Invalid reverse template.', 'reverse_template');
    const unknown = names.filter((n) => !groups.has(n));
    if (unknown.length) {
      throw new LinkifierValidationError(`Group '${sortedFirst(unknown)}' in reverse template is not present in linkifier pattern.`, 'reverse_template');
    }
    if (example === null) throw new LinkifierValidationError('A reverse template requires an example input.', 'example_input');
  }
  if (example === null) return;
  const values = matchGroups(regex, example);
  if (!values) throw new LinkifierValidationError('The example input does not match the linkifier pattern.', 'example_input');
  const userValues = Object.fromEntries([...groups].filter((g) => values[g] !== undefined).map((g) => [g, values[g]!]));
  const url = parseTemplate(input.url_template).expand(userValues);
  if (sanitizeUrl(url) === null) throw new LinkifierValidationError(`The URL for the example input is not a valid link: ${url}`, 'url_template');
  if (reverse === null) return;
  const templates: Array<[string, TemplatePart[], 'url_template' | 'alternative_url_templates']> = [
    [input.url_template, urlParts, 'url_template'],
    ...alternatives.map((parts, i): [string, TemplatePart[], 'alternative_url_templates'] => [
      input.alternative_url_templates![i]!,
      parts,
      'alternative_url_templates',
    ]),
  ];
  for (const [template, parts, field] of templates) {
    const expanded = parseTemplate(template).expand(userValues);
    const reversed = reverseTemplate(parts, expanded);
    const text = reversed ? expandReverseTemplate(reverse, reversed) : null;
    if (text !== example) {
      throw new LinkifierValidationError(
        `The reverse template does not turn ${expanded} back into the example input: got ${text === null ? 'no match' : `'${text}'`}, expected '${example}'.`,
        field,
      );
    }
  }
}

const compiledCache = new Map<string, CompiledLinkifiers>();
const CACHE_LIMIT = 256;

/**
 * Compile an organization's linkifiers (in their processing order). Results
 * are cached by content, so callers may call this on every render.
 */
export function compileLinkifiers(list: readonly Linkifier[]): CompiledLinkifiers {
  const key = JSON.stringify(list.map((l) => [l.id, l.pattern, l.url_template]));
  const hit = compiledCache.get(key);
  if (hit) return hit;
  const compiled: CompiledLinkifier[] = [];
  for (const l of list) {
    try {
      compiled.push({
        id: l.id,
        pattern: l.pattern,
        urlTemplate: l.url_template,
        regex: compilePattern(l.pattern).regex,
        template: parseTemplate(l.url_template),
      });
    } catch (error) {
      // A stored linkifier that no longer compiles is skipped, as Zulip's topic_links does.
      if (!(error instanceof LinkifierValidationError)) throw error;
    }
  }
  const result: CompiledLinkifiers = { list: compiled };
  if (compiledCache.size >= CACHE_LIMIT) compiledCache.clear();
  compiledCache.set(key, result);
  return result;
}

export const NO_LINKIFIERS: CompiledLinkifiers = { list: [] };

/** The URL a linkifier makes from a match's groups. */
export function expandLinkifier(linkifier: CompiledLinkifier, groups: Record<string, string | undefined>): string {
  const values: Record<string, string> = {};
  for (const [k, v] of Object.entries(groups)) if (v !== undefined) values[k] = v;
  return linkifier.template.expand(values);
}

interface TopicLinkMatch {
  url: string;
  text: string;
  index: number;
  precedence: number | null;
}

const BASIC_LINK_SPLITTER = /[ !;),'"]/g;

/** Zulip's topic_links: linkifier matches (by precedence) and raw URLs in a topic name. */
export function topicLinks(topic: string, linkifiers: CompiledLinkifiers): Array<{ text: string; url: string }> {
  const matches: TopicLinkMatch[] = [];
  linkifiers.list.forEach((linkifier, precedence) => {
    const re = linkifier.regex;
    let pos = 0;
    while (pos < topic.length) {
      re.lastIndex = pos;
      const m = re.exec(topic);
      if (!m) break;
      const g = m.groups!;
      const next = m.index + m[0].length - g[AFTER_GROUP]!.length;
      pos = next > pos ? next : pos + 1;
      matches.push({ url: expandLinkifier(linkifier, g), text: g[ACTUAL_GROUP]!, index: m.index, precedence });
    }
  });
  matches.sort((a, b) => a.precedence! - b.precedence! || a.index - b.index);

  let pos = 0;
  while (pos < topic.length) {
    BASIC_LINK_SPLITTER.lastIndex = pos;
    const split = BASIC_LINK_SPLITTER.exec(topic);
    const end = split ? split.index : topic.length;
    const m = webLinkRegex().exec(topic.slice(pos, end));
    if (m) {
      const actual = m.groups!.url!;
      let url = actual;
      const parts = urlsplit(actual);
      if (!parts.scheme) {
        if (!parts.netloc) {
          const i = (parts.path + '/').indexOf('/');
          parts.netloc = parts.path.slice(0, i);
          parts.path = parts.path.slice(i);
        }
        url = urlunsplit({ ...parts, scheme: 'https' });
      }
      matches.push({ url, text: actual, index: pos, precedence: null });
    }
    pos = end + 1;
  }

  const overlaps = (a: TopicLinkMatch, b: TopicLinkMatch) =>
    (b.index <= a.index && a.index < b.index + b.text.length) || (a.index <= b.index && b.index < a.index + a.text.length);
  const applied: TopicLinkMatch[] = [];
  for (const current of matches) if (applied.every((old) => !overlaps(old, current))) applied.push(current);
  applied.sort((a, b) => a.index - b.index);
  return applied.map((m) => ({ text: m.text, url: m.url }));
}
