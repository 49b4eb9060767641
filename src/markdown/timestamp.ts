// <time:...> parsing in the spirit of python-dateutil's parser (which Zulip
// uses): ISO 8601, Unix timestamps, and free-form dates such as
// "Jun 5th 2017, 10:30PM" or "31 Dec 2017 5:30 am IST". Returns the ISO string
// Zulip puts in the datetime attribute, or null when the input is not a time.

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH_NAMES = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const WEEKDAYS = [
  'mon',
  'tue',
  'wed',
  'thu',
  'fri',
  'sat',
  'sun',
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
  'sunday',
  'tues',
  'thur',
  'thurs',
];
const SKIP_WORDS = new Set(['at', 'on', 'of', 'and', 'the', 'st', 'nd', 'rd', 'th']);

/** Offsets in minutes of the abbreviations in Zulip's common_timezones. */
const TIMEZONES: Record<string, number> = {
  utc: 0,
  gmt: 0,
  z: 0,
  ut: 0,
  wet: 0,
  west: 60,
  bst: 60,
  cet: 60,
  cest: 120,
  eet: 120,
  eest: 180,
  msk: 180,
  ist: 330,
  pkt: 300,
  ict: 420,
  wib: 420,
  sgt: 480,
  hkt: 480,
  awst: 480,
  jst: 540,
  kst: 540,
  acst: 570,
  aest: 600,
  aedt: 660,
  nzst: 720,
  nzdt: 780,
  hst: -600,
  akst: -540,
  akdt: -480,
  pst: -480,
  pdt: -420,
  mst: -420,
  mdt: -360,
  cst: -360,
  cdt: -300,
  est: -300,
  edt: -240,
  ast: -240,
  adt: -180,
  nst: -210,
  ndt: -150,
  brt: -180,
  art: -180,
};

const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,6}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

function offsetMinutes(value: string): number {
  if (/^z$/i.test(value)) return 0;
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(value)!;
  const minutes = Number(m[2]) * 60 + Number(m[3] ?? 0);
  return m[1] === '-' ? -minutes : minutes;
}

function isoString(ms: number, micros: number): string | null {
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return null;
  const year = date.getUTCFullYear();
  if (year < 1 || year > 9999) return null;
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  let out = `${pad(year, 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}T${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
  if (micros) out += '.' + pad(micros, 6);
  return out + 'Z';
}

function build(year: number, month: number, day: number, hour: number, minute: number, second: number, micros: number, offset: number): string | null {
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  // Python refuses a UTC offset of a day or more when converting to UTC.
  if (Math.abs(offset) >= 24 * 60) return null;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return null;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return isoString(date.getTime() - offset * 60000, micros);
}

function parseIso(input: string): string | null | undefined {
  const m = ISO_RE.exec(input);
  if (!m) return undefined;
  const micros = m[7] ? Number(m[7].padEnd(6, '0')) : 0;
  return build(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0), micros, m[8] ? offsetMinutes(m[8]) : 0);
}

/** Free-form dates: tokens are classified the way dateutil does for the common cases. */
function parseFreeForm(input: string, now: Date): string | null {
  const tokens = input.toLowerCase().match(/[a-z]+|\d+(?::\d+)*(?:\.\d+)?|[+-]\d{2}:?\d{2}|[^\s\w]/g);
  if (!tokens) return null;
  let year: number | undefined;
  let month: number | undefined;
  let day: number | undefined;
  let hour: number | undefined;
  let minute = 0;
  let second = 0;
  let offset = 0;
  let ampm: 'am' | 'pm' | undefined;
  const numbers: number[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (/^[,./-]$/.test(t)) continue;
    if (/^[a-z]+$/.test(t)) {
      const mi = MONTHS.indexOf(t.slice(0, 3));
      if ((MONTHS.includes(t) || MONTH_NAMES.includes(t) || t === 'sept') && mi >= 0) month = mi + 1;
      else if (WEEKDAYS.includes(t)) continue;
      else if (t === 'am' || t === 'pm' || t === 'a' || t === 'p') ampm = t.startsWith('a') ? 'am' : 'pm';
      else if (t in TIMEZONES) offset = TIMEZONES[t]!;
      else if (SKIP_WORDS.has(t)) continue;
      else return null;
      continue;
    }
    if (/^[+-]\d{2}:?\d{2}$/.test(t)) {
      offset = offsetMinutes(t);
      continue;
    }
    if (t.includes(':')) {
      const parts = t.split(':').map(Number);
      hour = parts[0]!;
      minute = parts[1] ?? 0;
      second = Math.floor(parts[2] ?? 0);
      continue;
    }
    if (/^\d+$/.test(t)) {
      numbers.push(Number(t));
      if (t.length === 4) year = Number(t);
      continue;
    }
    return null;
  }
  const rest = numbers.filter((n) => n !== year || year === undefined);
  if (year === undefined && rest.length === 3) year = rest.pop()!;
  if (year !== undefined) {
    const idx = rest.indexOf(year);
    if (idx >= 0) rest.splice(idx, 1);
  }
  if (month === undefined && rest.length >= 2) {
    month = rest.shift()!;
    day = rest.shift()!;
  } else if (rest.length) {
    day = rest.shift()!;
  }
  if (rest.length) {
    if (hour !== undefined || !ampm) return null;
    hour = rest.shift()!;
  }
  if (rest.length) return null;
  if (month === undefined && day === undefined && year === undefined && hour === undefined) return null;
  if (hour !== undefined && ampm) {
    if (hour > 12 || hour === 0) return null;
    hour = (hour % 12) + (ampm === 'pm' ? 12 : 0);
  }
  return build(
    year ?? now.getUTCFullYear(),
    month ?? now.getUTCMonth() + 1,
    day ?? (month === undefined ? now.getUTCDate() : 1),
    hour ?? 0,
    minute,
    second,
    0,
    offset,
  );
}

export function parseTimestamp(input: string, now: Date = new Date()): string | null {
  const trimmed = input.trim();
  if (!trimmed) return null;
  const iso = parseIso(trimmed);
  if (iso !== undefined) return iso;
  if (/^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(trimmed)) {
    if (/^\d{8}$/.test(trimmed) || /^\d{14}$/.test(trimmed)) {
      // dateutil reads YYYYMMDD(hhmmss) as a date before trying a Unix time.
      const d = trimmed;
      return build(
        Number(d.slice(0, 4)),
        Number(d.slice(4, 6)),
        Number(d.slice(6, 8)),
        Number(d.slice(8, 10) || 0),
        Number(d.slice(10, 12) || 0),
        Number(d.slice(12, 14) || 0),
        0,
        0,
      );
    }
    const seconds = Number(trimmed);
    const micros = Math.round((seconds - Math.floor(seconds)) * 1e6);
    return isoString(Math.floor(seconds) * 1000, micros === 1e6 ? 0 : micros);
  }
  return parseFreeForm(trimmed, now);
}
