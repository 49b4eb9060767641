// A user's picture when the server holds one, else their initials: no image comes from elsewhere.
import { initials, userHue } from '../format.ts';

export function Avatar({ user, size = 'normal' }: { user: { user_id: number; full_name: string; avatar_url: string | null }; size?: 'normal' | 'small' }) {
  const local = user.avatar_url?.startsWith('/') ? user.avatar_url : null;
  if (local) return <img class={`avatar avatar-${size}`} src={local} alt="" />;
  return (
    <span class={`avatar avatar-${size}`} style={{ '--avatar-hue': userHue(user.user_id) }} aria-hidden="true">
      {initials(user.full_name)}
    </span>
  );
}
