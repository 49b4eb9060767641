// One emoji as an image: a custom emoji's own, or Zulip's image of a Unicode emoji by its code.
import { emojiImageUrl } from '../emoji.ts';

export function Emoji({ name, code, url }: { name: string; code?: string; url?: string }) {
  if (url) return <img class="emoji" src={url} alt={`:${name}:`} />;
  return <span class="emoji" role="img" aria-label={name} style={{ backgroundImage: `url(${emojiImageUrl(code ?? '')})` }} />;
}
