// Personal settings (Zulip's #settings), loaded the first time they open: the name, the avatar
// and a status; the password; Enter-to-send, the time format and zone, the theme and notifications. Each change goes through the API
// and comes back as an event, so every open client of the user shows it.
import { useState } from 'preact/hooks';
import type { ChatClient } from '../client.ts';
import { askPermission } from '../notifications.ts';
import { setStatus, updateSettings, uploadAvatar, type SettingsTab } from '../settings.ts';
import type { AppState } from '../state.ts';
import { COLOR_SCHEMES } from '../theme.ts';
import { useCloseOnEscape } from './OverlayKeys.ts';
import { Avatar } from './Avatar.tsx';
import { Outcome, useSave } from './settings/SaveOutcome.tsx';
import { EmailNotifications } from './settings/EmailNotifications.tsx';
import { Bots } from './settings/Bots.tsx';

interface Props {
  client: ChatClient;
  state: AppState;
  tab: SettingsTab;
  closeHref: string;
}

const TAB_LABELS: Record<SettingsTab, string> = {
  profile: 'Profile',
  account: 'Account',
  preferences: 'Preferences',
  notifications: 'Notifications',
  'your-bots': 'Bots',
};

export function SettingsOverlay({ client, state, tab, closeHref }: Props) {
  useCloseOnEscape(closeHref);
  return (
    <div class="overlay" role="dialog" aria-modal="true" aria-labelledby="settings-title">
      <div class="overlay-panel settings-overlay">
        <header class="overlay-header">
          <h1 id="settings-title">Personal settings</h1>
          <nav class="tabs" aria-label="Settings sections">
            {(Object.keys(TAB_LABELS) as SettingsTab[]).map((t) => (
              <a key={t} href={`#settings/${t}`} aria-current={t === tab ? 'page' : undefined}>
                {TAB_LABELS[t]}
              </a>
            ))}
          </nav>
          <a class="icon-button" href={closeHref} aria-label="Close">
            ✕
          </a>
        </header>
        <div class="overlay-detail settings-body">
          {tab === 'profile' && <Profile client={client} state={state} />}
          {tab === 'account' && <Account client={client} />}
          {tab === 'preferences' && <Preferences client={client} state={state} />}
          {tab === 'notifications' && <EmailNotifications client={client} state={state} />}
          {tab === 'your-bots' && <Bots client={client} state={state} />}
        </div>
      </div>
    </div>
  );
}

function Profile({ client, state }: { client: ChatClient; state: AppState }) {
  const me = state.users.get(state.me.userId);
  const [name, setName] = useState(state.me.fullName);
  const [status, setStatusText] = useState('');
  const [outcome, save] = useSave();
  return (
    <>
      <form
        class="channel-form"
        aria-label="Your name"
        onSubmit={(e) => (e.preventDefault(), save(() => updateSettings(client.api, { full_name: name.trim() })))}
      >
        <label for="settings-name">Full name</label>
        <input id="settings-name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit" class="button button-small" disabled={!name.trim() || name.trim() === state.me.fullName}>
          Change name
        </button>
      </form>
      <div class="channel-form">
        <span>Avatar</span>
        {me && <Avatar user={me} />}
        <label for="settings-avatar">Upload a new avatar</label>
        <input
          id="settings-avatar"
          type="file"
          accept="image/*"
          onChange={(e) => {
            const file = e.currentTarget.files?.[0];
            if (file) void save(() => uploadAvatar(client.api, file));
          }}
        />
      </div>
      <form class="channel-form" aria-label="Your status" onSubmit={(e) => (e.preventDefault(), save(() => setStatus(client.api, status.trim())))}>
        <label for="settings-status">Status</label>
        <input id="settings-status" maxLength={60} placeholder="What are you up to?" value={status} onInput={(e) => setStatusText(e.currentTarget.value)} />
        <div class="actions">
          <button type="submit" class="button button-small">
            Set status
          </button>
          <button type="button" class="button button-small button-secondary" onClick={() => (setStatusText(''), save(() => setStatus(client.api, '')))}>
            Clear status
          </button>
        </div>
      </form>
      <Outcome outcome={outcome} />
    </>
  );
}

function Account({ client }: { client: ChatClient }) {
  const [passwords, setPasswords] = useState({ old: '', next: '' });
  const [outcome, save] = useSave();
  function submit(e: Event) {
    e.preventDefault();
    void save(() => updateSettings(client.api, { old_password: passwords.old, new_password: passwords.next })).then(() => setPasswords({ old: '', next: '' }));
  }
  return (
    <form class="channel-form" aria-label="Change password" onSubmit={submit}>
      <label for="settings-old-password">Current password</label>
      <input
        id="settings-old-password"
        type="password"
        autocomplete="current-password"
        required
        value={passwords.old}
        onInput={(e) => setPasswords({ ...passwords, old: e.currentTarget.value })}
      />
      <label for="settings-new-password">New password</label>
      <input
        id="settings-new-password"
        type="password"
        autocomplete="new-password"
        required
        value={passwords.next}
        onInput={(e) => setPasswords({ ...passwords, next: e.currentTarget.value })}
      />
      <button type="submit" class="button button-small" disabled={!passwords.old || !passwords.next}>
        Change password
      </button>
      <Outcome outcome={outcome} />
    </form>
  );
}

/** The browser's list of time zones, where it has one. */
const timeZones = (): string[] => (Intl as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];

function Preferences({ client, state }: { client: ChatClient; state: AppState }) {
  const [outcome, save] = useSave();
  const zones = timeZones();
  return (
    <div class="channel-form">
      <label>
        <input
          type="checkbox"
          checked={state.settings.enter_sends}
          onChange={(e) => save(() => updateSettings(client.api, { enter_sends: e.currentTarget.checked }))}
        />{' '}
        Enter sends a message (Shift+Enter starts a new line)
      </label>
      <label for="settings-time-format">Time format</label>
      <select
        id="settings-time-format"
        value={String(state.settings.twenty_four_hour_time)}
        onChange={(e) => save(() => updateSettings(client.api, { twenty_four_hour_time: e.currentTarget.value === 'true' }))}
      >
        <option value="false">12-hour clock (5:00 PM)</option>
        <option value="true">24-hour clock (17:00)</option>
      </select>
      <label for="settings-timezone">Time zone</label>
      <select
        id="settings-timezone"
        value={state.settings.timezone}
        onChange={(e) => save(() => updateSettings(client.api, { timezone: e.currentTarget.value }))}
      >
        {!zones.includes(state.settings.timezone) && <option value={state.settings.timezone}>{state.settings.timezone || 'Not set'}</option>}
        {zones.map((z) => (
          <option key={z} value={z}>
            {z}
          </option>
        ))}
      </select>
      <label for="settings-theme">Theme</label>
      <select
        id="settings-theme"
        value={state.settings.color_scheme}
        onChange={(e) => save(() => updateSettings(client.api, { color_scheme: Number(e.currentTarget.value) }))}
      >
        {COLOR_SCHEMES.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
      <Notifications client={client} state={state} save={save} />
      <Outcome outcome={outcome} />
    </div>
  );
}

/** Desktop notifications and sounds (Zulip's notification settings); the browser's permission is asked from the click that turns them on. */
function Notifications({ client, state, save }: { client: ChatClient; state: AppState; save: (action: () => Promise<unknown>) => Promise<void> }) {
  const [permission, setPermission] = useState(typeof Notification === 'undefined' ? 'unsupported' : Notification.permission);
  const toggle = (name: keyof AppState['settings'], on: boolean) => save(() => updateSettings(client.api, { [name]: on }));
  async function desktop(on: boolean) {
    if (on) {
      await askPermission();
      setPermission(Notification.permission);
    }
    await toggle('enable_desktop_notifications', on);
  }
  const s = state.settings;
  return (
    <fieldset class="choices">
      <legend>Notifications</legend>
      <label>
        <input type="checkbox" checked={s.enable_desktop_notifications} onChange={(e) => desktop(e.currentTarget.checked)} /> Desktop notifications for direct
        messages and mentions
      </label>
      <label>
        <input type="checkbox" checked={s.enable_sounds} onChange={(e) => toggle('enable_sounds', e.currentTarget.checked)} /> Sound for direct messages and
        mentions
      </label>
      <label>
        <input
          type="checkbox"
          checked={s.enable_stream_desktop_notifications}
          onChange={(e) => toggle('enable_stream_desktop_notifications', e.currentTarget.checked)}
        />{' '}
        Desktop notifications for channel messages
      </label>
      <label>
        <input
          type="checkbox"
          checked={s.enable_stream_audible_notifications}
          onChange={(e) => toggle('enable_stream_audible_notifications', e.currentTarget.checked)}
        />{' '}
        Sound for channel messages
      </label>
      {s.enable_desktop_notifications && permission !== 'granted' && (
        <p class="hint notification-permission">
          {permission === 'denied' ? (
            'Your browser blocks notifications from this site: allow them in its site settings.'
          ) : permission === 'unsupported' ? (
            'This browser cannot show notifications.'
          ) : (
            <button type="button" class="button button-small" onClick={() => askPermission().then(() => setPermission(Notification.permission))}>
              Allow desktop notifications
            </button>
          )}
        </p>
      )}
    </fieldset>
  );
}
