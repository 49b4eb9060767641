// A person's status as others see it beside their name: its emoji and its words.
import { emojiFromCode } from '../content.ts';
import type { UserStatus } from '../organization.ts';

export function StatusText({ status }: { status: UserStatus | undefined }) {
  if (!status?.status_text && !status?.emoji_name) return null;
  const emoji = status.reaction_type === 'unicode_emoji' && status.emoji_code ? emojiFromCode(status.emoji_code) : null;
  return (
    <span class="user-status">
      {emoji && <span class="emoji" aria-label={`:${status.emoji_name}:`}>{emoji}</span>} {status.status_text}
    </span>
  );
}
