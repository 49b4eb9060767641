// A person's status as others see it beside their name: its emoji and its words.
import type { UserStatus } from '../organization.ts';
import { Emoji } from './Emoji.tsx';

export function StatusText({ status }: { status: UserStatus | undefined }) {
  if (!status?.status_text && !status?.emoji_name) return null;
  const unicode = status.reaction_type === 'unicode_emoji' && status.emoji_code;
  return (
    <span class="user-status">
      {unicode && <Emoji name={status.emoji_name ?? ''} code={status.emoji_code} />} {status.status_text}
    </span>
  );
}
