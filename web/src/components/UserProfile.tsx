// A person's profile card (Zulip's user card, at `#user/<id>`), loaded the first time one opens:
// name, role, address, status, presence, local time, the organization's custom profile fields,
// and where to go next (a direct message, their messages, managing them).
import { isAdmin } from '../channels.ts';
import type { ChatClient } from '../client.ts';
import { roleLabel, type ProfileField } from '../organization.ts';
import { presenceStatus, type AppState } from '../state.ts';
import type { User } from '../types.ts';
import { Avatar } from './Avatar.tsx';
import { useCloseOnEscape } from './OverlayKeys.ts';
import { StatusText } from './StatusText.tsx';

/** Zulip's field types whose value is not shown as it is stored. */
const FieldType = { CHOICE: 3, USERS: 6 } as const;

interface Props {
  client: ChatClient;
  state: AppState;
  userId: number;
  closeHref: string;
}

/** What a field's stored value means on screen: a choice's label, people's names, or the server's rendering. */
function FieldValue({ state, field, value }: { state: AppState; field: ProfileField; value: { value: string; rendered_value?: string } }) {
  if (field.type === FieldType.CHOICE) {
    const choices = JSON.parse(field.field_data || '{}') as Record<string, { text: string }>;
    return <>{choices[value.value]?.text ?? value.value}</>;
  }
  if (field.type === FieldType.USERS) {
    const ids = JSON.parse(value.value) as number[];
    return <>{ids.map((id) => state.users.get(id)?.full_name ?? `User ${id}`).join(', ')}</>;
  }
  // The server's rendering of long text and links (Markdown), as every Zulip client shows it.
  if (value.rendered_value) return <span class="rendered" dangerouslySetInnerHTML={{ __html: value.rendered_value }} />;
  return <>{value.value}</>;
}

function localTime(timezone: string | undefined): string | null {
  if (!timezone) return null;
  try {
    return new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit', timeZone: timezone, timeZoneName: 'short' }).format(new Date());
  } catch {
    return null;
  }
}

const PRESENCE_WORDS = { active: 'Active now', idle: 'Idle', offline: 'Offline' } as const;

export function UserProfile({ client, state, userId, closeHref }: Props) {
  useCloseOnEscape(closeHref);
  const user: User | undefined = state.users.get(userId);
  if (!user) {
    return (
      <div class="overlay" role="dialog" aria-modal="true" aria-label="Profile">
        <div class="dialog">
          <p class="hint">This person is not in your organization, or you cannot see them.</p>
          <a class="button button-small" href={closeHref}>
            Close
          </a>
        </div>
      </div>
    );
  }
  const fields = [...state.org.profileFields].sort((a, b) => a.order - b.order).filter((f) => user.profile_data?.[f.id]?.value);
  const time = localTime(user.timezone);
  const joined = user.date_joined ? new Date(user.date_joined).toLocaleDateString(undefined, { dateStyle: 'long' }) : null;
  return (
    <div class="overlay" role="dialog" aria-modal="true" aria-labelledby="profile-name">
      <div class="dialog profile-card" data-user-id={user.user_id}>
        <header class="profile-header">
          <Avatar user={user} />
          <div>
            <h2 id="profile-name">{user.full_name}</h2>
            <p class="hint">
              {user.is_bot ? 'Bot' : roleLabel(user.role)}
              {!user.is_active && ' · Deactivated'}
              {!user.is_bot && ` · ${PRESENCE_WORDS[presenceStatus(state.presence.get(userId), Date.now() / 1000)]}`}
            </p>
          </div>
          <a class="icon-button" href={closeHref} aria-label="Close">
            ✕
          </a>
        </header>
        <StatusText status={state.org.statuses.get(userId)} />
        <dl class="profile-fields">
          <dt>Email</dt>
          <dd>{user.delivery_email ?? user.email}</dd>
          {time && (
            <>
              <dt>Local time</dt>
              <dd>{time}</dd>
            </>
          )}
          {joined && (
            <>
              <dt>Joined</dt>
              <dd>{joined}</dd>
            </>
          )}
          {fields.map((f) => (
            <div key={f.id} class="profile-field" data-field={f.name}>
              <dt>{f.name}</dt>
              <dd>
                <FieldValue state={state} field={f} value={user.profile_data![f.id]!} />
              </dd>
            </div>
          ))}
        </dl>
        <div class="actions">
          {userId !== state.me.userId && (
            <a class="button button-small" href={client.hashOf({ kind: 'dm', userIds: [userId] })}>
              Send direct message
            </a>
          )}
          <a class="button button-small button-secondary" href={client.hashOf({ kind: 'search', query: `sender:${user.email}` })}>
            View messages sent
          </a>
          {userId === state.me.userId && (
            <a class="button button-small button-secondary" href="#settings/profile">
              Edit your profile
            </a>
          )}
          {userId !== state.me.userId && isAdmin(state) && !user.is_bot && (
            <a class="button button-small button-secondary" href="#organization/users">
              Manage this user
            </a>
          )}
        </div>
      </div>
    </div>
  );
}
