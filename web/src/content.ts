// The server's message HTML, prepared once per message for this page: emoji shown by Zulip's
// images (emoji.ts; their `:name:` text stays, for copying and screen readers), uploaded images
// left for uploads.ts to fetch, times in the reader's time zone, links to conversations kept
// inside the app, other links opening a new tab, spoilers operable by keyboard, and mentions of
// the reader marked.
import { emojiImageUrl } from './emoji.ts';

const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function prepareContent(html: string, myId: number): string {
  const template = document.createElement('template');
  template.innerHTML = html;
  const root = template.content;
  for (const mention of root.querySelectorAll(`.user-mention[data-user-id="${myId}"]:not(.silent)`)) mention.classList.add('user-mention-me');
  for (const span of root.querySelectorAll<HTMLElement>('span.emoji')) {
    const code = [...span.classList].find((c) => c.startsWith('emoji-'))?.slice('emoji-'.length);
    if (code && /^[0-9a-f-]+$/.test(code)) span.style.backgroundImage = `url(${emojiImageUrl(code)})`;
  }
  // Uploaded images need the credentials: uploads.ts fetches them once the message is on screen.
  for (const img of root.querySelectorAll('img[src^="/user_uploads/"]')) {
    img.setAttribute('data-upload-src', img.getAttribute('src')!);
    img.removeAttribute('src');
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
