// The server's message HTML, prepared once per message for this page: emoji as the characters
// they name (no image sprites to download), times in the reader's time zone, links to
// conversations kept inside the app, other links opening a new tab, spoilers operable by
// keyboard, and mentions of the reader marked.

/** `1f44d` or `1f1e9-1f1ea` (Zulip's emoji codes) as the emoji itself. */
export function emojiFromCode(code: string): string | null {
  const points = code.split('-').map((hex) => Number.parseInt(hex, 16));
  if (points.some((p) => !Number.isInteger(p) || p < 0 || p > 0x10ffff)) return null;
  return String.fromCodePoint(...points);
}

const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function prepareContent(html: string, myId: number): string {
  const template = document.createElement('template');
  template.innerHTML = html;
  const root = template.content;
  for (const mention of root.querySelectorAll(`.user-mention[data-user-id="${myId}"]:not(.silent)`)) mention.classList.add('user-mention-me');
  for (const span of root.querySelectorAll<HTMLElement>('span.emoji')) {
    const code = [...span.classList].find((c) => c.startsWith('emoji-'))?.slice('emoji-'.length);
    const text = code ? emojiFromCode(code) : null;
    if (text) span.textContent = text;
  }
  for (const time of root.querySelectorAll('time[datetime]')) {
    const date = new Date(time.getAttribute('datetime')!);
    if (!Number.isNaN(date.getTime())) time.textContent = timeFormat.format(date);
  }
  for (const link of root.querySelectorAll('a[href]')) {
    const href = link.getAttribute('href')!;
    if (href.startsWith('/#narrow/')) link.setAttribute('href', href.slice(1));
    else if (!href.startsWith('#') && !href.startsWith('/user_uploads/')) {
      link.setAttribute('target', '_blank');
      link.setAttribute('rel', 'noopener noreferrer');
    }
  }
  for (const header of root.querySelectorAll('.spoiler-header')) {
    header.setAttribute('role', 'button');
    header.setAttribute('tabindex', '0');
    header.setAttribute('aria-expanded', 'false');
  }
  return template.innerHTML;
}

/** Opens or closes the spoiler whose header was activated; false when `target` is not in a spoiler header. */
export function toggleSpoiler(target: Element): boolean {
  const header = target.closest('.spoiler-header');
  const block = header?.closest('.spoiler-block');
  if (!header || !block) return false;
  const open = block.classList.toggle('spoiler-open');
  header.setAttribute('aria-expanded', String(open));
  block.querySelector('.spoiler-content')?.setAttribute('aria-hidden', String(!open));
  return true;
}
