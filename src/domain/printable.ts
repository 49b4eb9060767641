// Zulip's check_string_is_printable: names refuse control, surrogate and unassigned characters.

/** The 1-based position of the first unprintable character, or null when there is none. */
export function unprintablePosition(text: string): number | null {
  let position = 0;
  for (const ch of text) {
    position++;
    if (/[\p{Cc}\p{Cs}\p{Cn}]/u.test(ch)) return position;
  }
  return null;
}
