// Whether a string is a URL by the rules Zulip's validators apply (Django's URLValidator): an
// http(s) or ftp(s) scheme, a host that is an IPv4 or bracketed IPv6 address, `localhost` or a
// dotted name with a top-level domain, an optional port, and no whitespace anywhere.

const SCHEMES = new Set(['http', 'https', 'ftp', 'ftps']);
const MAX_URL_LENGTH = 2048;

const UNICODE = '\\u00a1-\\uffff';
const IPV4 = '(?:0|25[0-5]|2[0-4]\\d|1\\d?\\d?|[1-9]\\d?)(?:\\.(?:0|25[0-5]|2[0-4]\\d|1\\d?\\d?|[1-9]\\d?)){3}';
const IPV6 = '\\[[0-9a-f:.]+\\]';
const HOSTNAME = `[a-z${UNICODE}0-9](?:[a-z${UNICODE}0-9-]{0,61}[a-z${UNICODE}0-9])?`;
const DOMAIN = `(?:\\.(?!-)[a-z${UNICODE}0-9-]{1,63}(?<!-))*`;
const TLD = `\\.(?!-)(?:[a-z${UNICODE}-]{2,63}|xn--[a-z0-9]{1,59})(?<!-)\\.?`;
const HOST = `(?:${HOSTNAME}${DOMAIN}${TLD}|localhost)`;
const URL_RE = new RegExp(`^(?:[a-z0-9.+-]*)://(?:[^\\s:@/]+(?::[^\\s:@/]*)?@)?(?:${IPV4}|${IPV6}|${HOST})(?::\\d{1,5})?(?:[/?#][^\\s]*)?$`, 'i');

export function isValidUrl(value: string): boolean {
  if (value.length > MAX_URL_LENGTH || /\s/.test(value)) return false;
  const scheme = value.split('://')[0]!.toLowerCase();
  if (!SCHEMES.has(scheme) || !URL_RE.test(value)) return false;
  // A bracketed host must really be an IPv6 address.
  const bracketed = /^[^:]+:\/\/(?:[^@/]*@)?\[([^\]]+)\]/.exec(value);
  return !bracketed || URL.canParse(`http://[${bracketed[1]}]/`);
}
