// URL handling as Zulip does it: the autolink regex (with its TLD list and
// nested parentheses), sanitize_url on top of a port of Python's urlsplit,
// and rewriting of links into the realm to relative ones.
import tldList from 'tlds' with { type: 'json' };

/** Python's `\w` for str patterns. */
export const WORD = String.raw`\p{L}\p{N}_`;

const COMMON_FALSE_POSITIVES = new Set(['java', 'md', 'mov', 'py', 'zip']);

/** Desktop apps' link schemes Zulip links, in text as well as in `[text](url)`. */
const APP_SCHEMES = ['hansoft', 'obsidian', 'zotero', 'asanadesktop'];

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

function buildWebLinkSource(): string {
  const tlds = (tldList as string[])
    .filter((t) => !COMMON_FALSE_POSITIVES.has(t))
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
    .join('|');
  const inner = String.raw`[^\s()"]*`;
  const parenGroup = String.raw`[^\s()"]*?(?:\(%s\)[^\s()"]*?)*`;
  let nested = parenGroup;
  for (let i = 0; i < 6; i++) nested = nested.replace('%s', parenGroup);
  nested = nested.replace('%s', inner);
  return (
    // Letters of other scripts may run straight into a link ("日本語https://…").
    String.raw`(?<![^\s'"(,:<\x80-\u{10FFFF}])` +
    '(?<url>' +
    // After the host: a path, or a query (whose `?` is not trailing punctuation).
    String.raw`(?:(?:(?:https?|${APP_SCHEMES.join('|')})://[${WORD}.:@-]+?|(?:(?:[${WORD}-]+\.)+(?:${tlds})))(?:/${nested}|\?(?![)"\s]|$)${nested})?)` +
    String.raw`|(?:[${WORD}.-]+@[${WORD}.-]+\.[${WORD}]+)` +
    String.raw`|(?:bitcoin:[13][a-km-zA-HJ-NP-Z1-9]{25,34})` +
    ')' +
    String.raw`(?=[!:;?),.'">]*(?:$|\s))`
  );
}

let webLinkRe: RegExp | undefined;

/** The autolink regex, built once (it holds the whole TLD list). */
export function webLinkRegex(): RegExp {
  webLinkRe ??= new RegExp(buildWebLinkSource(), 'u');
  return webLinkRe;
}

export interface SplitUrl {
  scheme: string;
  netloc: string;
  path: string;
  query: string;
  fragment: string;
}

const SCHEME_CHARS = /^[A-Za-z0-9+.-]+$/;

/** Python's urllib.parse.urlsplit; throws on an unbalanced IPv6 bracket as Python does. */
export function urlsplit(url: string): SplitUrl {
  url = url.replace(/[\t\r\n]/g, '').replace(/^[\u0000-\u0020]+/, '');
  let scheme = '';
  let netloc = '';
  let query = '';
  let fragment = '';
  const i = url.indexOf(':');
  if (i > 0 && /^[A-Za-z]/.test(url) && SCHEME_CHARS.test(url.slice(0, i))) {
    scheme = url.slice(0, i).toLowerCase();
    url = url.slice(i + 1);
  }
  if (url.startsWith('//')) {
    let delim = url.length;
    for (const c of '/?#') {
      const w = url.indexOf(c, 2);
      if (w >= 0) delim = Math.min(delim, w);
    }
    netloc = url.slice(2, delim);
    url = url.slice(delim);
    if (netloc.includes('[') !== netloc.includes(']')) throw new Error('Invalid IPv6 URL');
  }
  const hash = url.indexOf('#');
  if (hash >= 0) {
    fragment = url.slice(hash + 1);
    url = url.slice(0, hash);
  }
  const q = url.indexOf('?');
  if (q >= 0) {
    query = url.slice(q + 1);
    url = url.slice(0, q);
  }
  return { scheme, netloc, path: url, query, fragment };
}

const USES_NETLOC = new Set([
  '',
  'ftp',
  'http',
  'gopher',
  'nntp',
  'telnet',
  'imap',
  'wais',
  'file',
  'mms',
  'https',
  'shttp',
  'snews',
  'prospero',
  'rtsp',
  'rtsps',
  'rtspu',
  'rsync',
  'svn',
  'svn+ssh',
  'sftp',
  'nfs',
  'git',
  'git+ssh',
  'ws',
  'wss',
  'itms-services',
]);

export function urlunsplit({ scheme, netloc, path, query, fragment }: SplitUrl): string {
  let url = path;
  if (netloc) {
    if (url && !url.startsWith('/')) url = '/' + url;
    url = '//' + netloc + url;
  } else if (url.startsWith('//')) {
    url = '//' + url;
  } else if (scheme && USES_NETLOC.has(scheme) && (!url || url.startsWith('/'))) {
    url = '//' + url;
  }
  if (scheme) url = scheme + ':' + url;
  if (query) url += '?' + query;
  if (fragment) url += '#' + fragment;
  return url;
}

const SAFELISTED_SCHEMES = [
  'bitcoin',
  'geo',
  'im',
  'irc',
  'ircs',
  'magnet',
  'mailto',
  'matrix',
  'mms',
  'news',
  'nntp',
  'openpgp4fpr',
  'sip',
  'sms',
  'smsto',
  'ssh',
  'tel',
  'urn',
  'webcal',
  'wtai',
  'xmpp',
];
const ALLOWED_SCHEMES = new Set(['http', 'https', 'ftp', 'file', 'mid', ...SAFELISTED_SCHEMES, ...APP_SCHEMES]);

/** Zulip's sanitize_url: null means "not a link, leave the text alone". */
export function sanitizeUrl(url: string): string | null {
  let parts: SplitUrl;
  try {
    parts = urlsplit(url.replace(/ /g, '%20'));
  } catch {
    // Python's urlsplit raised: Zulip keeps the link with an empty href.
    return '';
  }
  let { scheme } = parts;
  const { netloc, path, query, fragment } = parts;
  if (scheme === '' && netloc === '' && path.includes('@')) {
    scheme = 'mailto';
  } else if (scheme === '' && netloc === '' && path.startsWith('/')) {
    return urlunsplit({ scheme: '', netloc: '', path, query, fragment });
  } else if (scheme === '' && netloc === '' && path === '' && query === '' && fragment.length > 0) {
    return urlunsplit({ scheme: '', netloc: '', path: '', query: '', fragment });
  }
  if (!scheme) return sanitizeUrl('http://' + url);
  if (!ALLOWED_SCHEMES.has(scheme)) return null;
  return urlunsplit({ scheme, netloc, path, query, fragment });
}

/** Links into the realm's own narrows and uploads become relative. */
export function rewriteLocalLinkToRelative(realmUrl: string, link: string): string {
  const prefix = realmUrl + '/';
  if (link.startsWith(prefix + '#') || link.startsWith(prefix + 'user_uploads/')) return link.slice(prefix.length);
  return link;
}

/** Python's urllib.parse.quote(value, safe=''): UTF-8 percent-encoding of all but unreserved characters. */
export function quote(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
}

/** Zulip's hash_util_encode (the frontend's encodeHashComponent). */
export function hashUtilEncode(value: string): string {
  return quote(value).replace(/\./g, '%2E').replace(/%/g, '.');
}

/** Zulip's encode_stream: "99-Verona". */
export function encodeStream(streamId: number, name: string): string {
  return `${streamId}-${hashUtilEncode(name.replace(/ /g, '-'))}`;
}
