// Zulip's check_string_is_printable: names refuse control, surrogate and unassigned characters.

const UNPRINTABLE = /[\p{Cc}\p{Cs}\p{Cn}]/u;

/** The 1-based position (in code points) of the first unprintable character, or null when there is none. */
export function unprintablePosition(text: string): number | null {
  const found = UNPRINTABLE.exec(text);
  return found === null ? null : [...text.slice(0, found.index)].length + 1;
}
