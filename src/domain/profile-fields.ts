// Custom profile fields (Zulip's CustomProfileField): the field types, the external accounts an
// organization can pick from, and the rules for field definitions and for users' values, with
// Zulip's error messages.
import { badRequest } from '../errors.ts';
import { isValidUrl } from './url-validation.ts';

export const FieldType = {
  SHORT_TEXT: 1,
  LONG_TEXT: 2,
  SELECT: 3,
  DATE: 4,
  URL: 5,
  USER: 6,
  EXTERNAL_ACCOUNT: 7,
  PRONOUNS: 8,
} as const;

/** `custom_profile_field_types` of register: each type under its constant name, with its label. */
export const CUSTOM_PROFILE_FIELD_TYPES = {
  SHORT_TEXT: { id: FieldType.SHORT_TEXT, name: 'Text (short)' },
  LONG_TEXT: { id: FieldType.LONG_TEXT, name: 'Text (long)' },
  SELECT: { id: FieldType.SELECT, name: 'List of options' },
  DATE: { id: FieldType.DATE, name: 'Date' },
  URL: { id: FieldType.URL, name: 'Link' },
  USER: { id: FieldType.USER, name: 'Users' },
  EXTERNAL_ACCOUNT: { id: FieldType.EXTERNAL_ACCOUNT, name: 'External account' },
  PRONOUNS: { id: FieldType.PRONOUNS, name: 'Pronouns' },
};

const FIELD_TYPES = new Set<number>(Object.values(FieldType));

/** Types whose values are Markdown, stored with their rendering (`rendered_value`). */
export const isRenderedType = (type: number) => type === FieldType.SHORT_TEXT || type === FieldType.LONG_TEXT;

export const NAME_MAX_LENGTH = 40;
export const HINT_MAX_LENGTH = 80;
export const MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS = 2;
const SHORT_VALUE_MAX_LENGTH = 50;
const LONG_VALUE_MAX_LENGTH = 500;

interface ExternalAccount {
  text: string;
  url_pattern: string;
  name: string;
  hint: string;
}

const account = (text: string, url_pattern: string, name: string, hint = ''): ExternalAccount => ({ text, url_pattern, name, hint });

/**
 * The external accounts an administrator picks by subtype (`realm_default_external_accounts`):
 * the field takes its name and hint from here. An empty pattern makes a plain text field; a bare
 * `%(username)s` takes a whole URL.
 */
export const DEFAULT_EXTERNAL_ACCOUNTS: Record<string, ExternalAccount> = {
  behance: account('Behance', 'https://www.behance.net/%(username)s', 'Behance username'),
  bitbucket: account('Bitbucket', 'https://bitbucket.org/%(username)s', 'Bitbucket username'),
  bluesky: account('Bluesky', 'https://bsky.app/profile/%(username)s', 'Bluesky handle'),
  codeberg: account('Codeberg', 'https://codeberg.org/%(username)s', 'Codeberg username'),
  discord: account('Discord', '', 'Discord tag'),
  dribbble: account('Dribbble', 'https://dribbble.com/%(username)s', 'Dribbble username'),
  facebook: account('Facebook', 'https://www.facebook.com/%(username)s', 'Facebook username'),
  github: account('GitHub', 'https://github.com/%(username)s', 'GitHub username'),
  gitlab: account('GitLab', 'https://gitlab.com/%(username)s', 'GitLab username'),
  instagram: account('Instagram', 'https://www.instagram.com/%(username)s', 'Instagram username'),
  linkedin: account('LinkedIn', 'https://www.linkedin.com/in/%(username)s', 'LinkedIn profile name'),
  mastodon: account('Mastodon', '%(username)s', 'Mastodon profile', 'The full URL to your profile'),
  medium: account('Medium', 'https://%(username)s.medium.com', 'Medium username'),
  pinterest: account('Pinterest', 'https://www.pinterest.com/%(username)s', 'Pinterest username'),
  reddit: account('Reddit', 'https://www.reddit.com/user/%(username)s', 'Reddit username'),
  snapchat: account('Snapchat', 'https://www.snapchat.com/@%(username)s', 'Snapchat username'),
  threads: account('Threads', 'https://www.threads.com/@%(username)s', 'Threads username'),
  tiktok: account('TikTok', 'https://www.tiktok.com/@%(username)s', 'TikTok username'),
  twitch: account('Twitch', 'https://www.twitch.tv/%(username)s', 'Twitch username'),
  x: account('X', 'https://x.com/%(username)s', 'X username'),
  youtube: account('YouTube', 'https://www.youtube.com/%(username)s', 'YouTube handle'),
};

/** `field_data` as sent: for SELECT, option key -> {text, order}; for EXTERNAL_ACCOUNT, subtype and url_pattern. */
export type FieldData = Record<string, string | Record<string, string>>;

const codePoints = (s: string) => [...s].length;
const isDict = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function checkString(name: string, value: unknown): string {
  if (typeof value !== 'string') throw badRequest(`${name} is not a string`);
  return value;
}

function checkRequiredString(name: string, value: unknown): string {
  const s = checkString(name, value);
  if (s.trim() === '') throw badRequest(`${name} cannot be blank.`);
  return s;
}

function checkCappedString(name: string, value: unknown, max: number): string {
  const s = checkString(name, value);
  if (codePoints(s) > max) throw badRequest(`${name} is too long (limit: ${max} characters)`);
  return s;
}

/** Zulip's check_dict_only: the required keys, the optional ones, and nothing else. */
function checkDictOnly(
  name: string,
  value: unknown,
  required: Record<string, (n: string, v: unknown) => unknown>,
  optional: Record<string, (n: string, v: unknown) => unknown> = {},
) {
  if (!isDict(value)) throw badRequest(`${name} is not a dict`);
  for (const [key, check] of Object.entries(required)) {
    if (!(key in value)) throw badRequest(`${key} key is missing from ${name}`);
    check(`${name}["${key}"]`, value[key]);
  }
  for (const [key, check] of Object.entries(optional)) if (key in value) check(`${name}["${key}"]`, value[key]);
  const unexpected = Object.keys(value).filter((k) => !(k in required) && !(k in optional));
  if (unexpected.length) throw badRequest(`Unexpected arguments: ${unexpected.join(', ')}`);
}

function checkUrl(name: string, value: unknown): string {
  const s = checkString(name, value);
  if (!isValidUrl(s)) throw badRequest(`${name} is not a URL`);
  return s;
}

function checkUrlPattern(name: string, value: unknown): void {
  const s = checkString(name, value);
  if (s.split('%(username)s').length !== 2) throw badRequest("URL pattern must contain '%(username)s'.");
  checkUrl(name, s.replace('%(username)s', 'username'));
}

function checkSelectFieldData(data: FieldData): void {
  if (Object.keys(data).length < 1) throw badRequest('Field must have at least one choice.');
  const texts = new Set<string>();
  for (const [key, option] of Object.entries(data)) {
    if (key.trim() === '') throw badRequest("'value' cannot be blank.");
    checkDictOnly('field_data', option, { text: checkRequiredString, order: checkRequiredString });
    texts.add((option as Record<string, string>).text!);
  }
  if (texts.size !== Object.keys(data).length) throw badRequest('Field must not have duplicate choices.');
}

function checkExternalAccountFieldData(data: FieldData): void {
  checkDictOnly('field_data', data, { subtype: checkRequiredString }, { url_pattern: checkUrlPattern });
  if (!(String(data.subtype) in DEFAULT_EXTERNAL_ACCOUNTS) && data.subtype !== 'custom') throw badRequest('Invalid external account type');
}

/** An external account of a predefined kind: its name and hint come from DEFAULT_EXTERNAL_ACCOUNTS. */
export function predefinedAccount(type: number, data: FieldData): ExternalAccount | null {
  if (type !== FieldType.EXTERNAL_ACCOUNT || typeof data.subtype !== 'string') return null;
  return Object.hasOwn(DEFAULT_EXTERNAL_ACCOUNTS, data.subtype) ? DEFAULT_EXTERNAL_ACCOUNTS[data.subtype]! : null;
}

export interface FieldDefinition {
  name: string;
  hint: string;
  type: number;
  fieldData: FieldData;
  displayInProfileSummary: boolean;
}

/** Zulip's validate_custom_profile_field: the type's data, then name and hint, the type, the summary rule. */
export function checkFieldDefinition(d: FieldDefinition): void {
  if (d.type === FieldType.SELECT) checkSelectFieldData(d.fieldData);
  if (d.type === FieldType.EXTERNAL_ACCOUNT) checkExternalAccountFieldData(d.fieldData);
  // A predefined external account brings its own name and hint.
  if (!predefinedAccount(d.type, d.fieldData)) {
    if (d.name.trim() === '') throw badRequest('Label cannot be blank.');
    checkCappedString('hint', d.hint, HINT_MAX_LENGTH);
    checkCappedString('name', d.name, NAME_MAX_LENGTH);
  }
  if (!FIELD_TYPES.has(d.type)) throw badRequest('Invalid field type.');
  if (d.displayInProfileSummary && (d.type === FieldType.LONG_TEXT || d.type === FieldType.USER)) {
    throw badRequest('Field type not supported for display in profile summary.');
  }
}

/** What is stored as `field_data`: JSON for the two types that have data, else nothing. */
export const storedFieldData = (type: number, data: FieldData): string =>
  type === FieldType.SELECT || type === FieldType.EXTERNAL_ACCOUNT ? JSON.stringify(data) : '';

/** A stored `field_data` read back (an empty string is no data). */
export const parseFieldData = (stored: string): FieldData => (stored === '' ? {} : (JSON.parse(stored) as FieldData));

function checkDate(name: string, value: unknown): string {
  const s = checkString(name, value);
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  const [year, month, day] = match ? [Number(match[1]), Number(match[2]), Number(match[3])] : [0, 0, 0];
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  // Python's date.fromisoformat round trip: a real calendar day from year 1, written in full.
  const real = match !== null && year >= 1 && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  if (!real) throw badRequest(`${name} is not a date`);
  return s;
}

/** A value for a field of any type but USER, checked by its type's rule (the field's name names it in errors). */
export function checkTextValue(field: { name: string; fieldType: number; fieldData: string }, value: unknown): string {
  switch (field.fieldType) {
    case FieldType.LONG_TEXT:
      return checkCappedString(field.name, value, LONG_VALUE_MAX_LENGTH);
    case FieldType.DATE:
      return checkDate(field.name, value);
    case FieldType.URL:
      return checkUrl(field.name, value);
    case FieldType.SELECT: {
      const choice = checkString(field.name, value);
      if (!Object.hasOwn(parseFieldData(field.fieldData), choice)) throw badRequest(`'${choice}' is not a valid choice for '${field.name}'.`);
      return choice;
    }
    default:
      return checkCappedString(field.name, value, SHORT_VALUE_MAX_LENGTH);
  }
}

/** Zulip's var_name of a field (how LDAP's attribute map names it): its name in lower case, spaces as underscores. */
export const profileFieldVarName = (name: string) => name.toLowerCase().split(' ').join('_');
