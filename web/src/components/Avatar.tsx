// A user's picture when the server holds one, else (or when it fails to load) their initials: no
// image comes from elsewhere.
import { useState } from 'preact/hooks';
import { initials, userHue } from '../format.ts';

export function Avatar({ user, size = 'normal' }: { user: { user_id: number; full_name: string; avatar_url: string | null }; size?: 'normal' | 'small' }) {
  const [failed, setFailed] = useState(false);
  const local = user.avatar_url?.startsWith('/') ? user.avatar_url : null;
  if (local && !failed) return <img class={`avatar avatar-${size}`} src={local} alt="" onError={() => setFailed(true)} />;
  return (
    <span class={`avatar avatar-${size}`} style={{ '--avatar-hue': userHue(user.user_id) }} aria-hidden="true">
      {initials(user.full_name)}
    </span>
  );
}
