// Organization settings (Zulip's #organization), loaded the first time they open: the profile,
// people (roles, deactivation), bots, invitations, linkifiers, custom emoji, default channels and
// login methods. Every change goes through the API and shows from its event, here and in every
// other administrator's browser.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { ChatClient } from '../client.ts';
import { isAdmin } from '../channels.ts';
import { formatFullDate } from '../format.ts';
import {
  ORG_SECTIONS,
  ROLES,
  addDefaultChannel,
  addEmoji,
  addLinkifier,
  createInviteLink,
  inviteByEmail,
  isOwner,
  listInvites,
  removeDefaultChannel,
  removeEmoji,
  removeLinkifier,
  revokeInvite,
  roleLabel,
  setActive,
  setRole,
  updateRealm,
  type Invite,
  type InviteTerms,
  type OrgSection,
} from '../organization.ts';
import type { AppState } from '../state.ts';
import type { User } from '../types.ts';
import { ErrorLine, useAction } from './Action.tsx';
import { Avatar } from './Avatar.tsx';
import { useCloseOnEscape } from './OverlayKeys.ts';

interface Props {
  client: ChatClient;
  state: AppState;
  section: OrgSection;
  closeHref: string;
}

interface SectionProps {
  client: ChatClient;
  state: AppState;
}

const SECTIONS: Record<OrgSection, (p: SectionProps) => preact.JSX.Element> = {
  'organization-profile': OrganizationProfile,
  users: (p) => <UserList {...p} active />,
  deactivated: (p) => <UserList {...p} active={false} />,
  'bot-list-admin': Bots,
  'invites-list-admin': Invitations,
  'linkifier-settings': Linkifiers,
  'emoji-settings': CustomEmoji,
  'default-channels-list': DefaultChannels,
  'auth-methods': AuthenticationMethods,
};

export function OrganizationOverlay({ client, state, section, closeHref }: Props) {
  useCloseOnEscape(closeHref);
  const Section = SECTIONS[section];
  return (
    <div class="overlay" role="dialog" aria-modal="true" aria-labelledby="organization-title">
      <div class="overlay-panel">
        <header class="overlay-header">
          <h1 id="organization-title">Organization settings</h1>
          <a class="icon-button" href={closeHref} aria-label="Close">
            ✕
          </a>
        </header>
        <div class="overlay-body organization-body">
          <nav class="overlay-list" aria-label="Organization settings sections">
            <ul class="section-links">
              {(Object.keys(ORG_SECTIONS) as OrgSection[]).map((s) => (
                <li key={s}>
                  <a href={`#organization/${s}`} aria-current={s === section ? 'page' : undefined}>
                    {ORG_SECTIONS[s]}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <section class="overlay-detail" aria-labelledby="organization-section">
            <h2 id="organization-section">{ORG_SECTIONS[section]}</h2>
            {isAdmin(state) ? <Section client={client} state={state} /> : <p class="hint">Only administrators manage the organization.</p>}
          </section>
        </div>
      </div>
    </div>
  );
}

function OrganizationProfile({ client, state }: SectionProps) {
  const [draft, setDraft] = useState({ name: state.realmName, description: state.org.description });
  const [error, run] = useAction();
  const [saved, setSaved] = useState(false);
  // What someone else saved meanwhile shows here too.
  useEffect(() => setDraft({ name: state.realmName, description: state.org.description }), [state.realmName, state.org.description]);
  const changes = {
    ...(draft.name.trim() !== state.realmName && { name: draft.name.trim() }),
    ...(draft.description !== state.org.description && { description: draft.description }),
  };
  async function submit(e: Event) {
    e.preventDefault();
    setSaved(await run(() => updateRealm(client.api, changes)));
  }
  return (
    <form class="channel-form" aria-label="Organization profile" onSubmit={submit}>
      <label for="org-name">Organization name</label>
      <input id="org-name" required maxLength={40} value={draft.name} onInput={(e) => (setSaved(false), setDraft({ ...draft, name: e.currentTarget.value }))} />
      <label for="org-description">Organization description</label>
      <textarea
        id="org-description"
        rows={4}
        maxLength={1000}
        value={draft.description}
        onInput={(e) => (setSaved(false), setDraft({ ...draft, description: e.currentTarget.value }))}
      />
      <ErrorLine error={error} />
      {saved && (
        <p class="alert alert-info" role="status">
          Saved.
        </p>
      )}
      <div class="actions">
        <button type="submit" class="button button-small" disabled={!draft.name.trim() || Object.keys(changes).length === 0}>
          Save changes
        </button>
      </div>
    </form>
  );
}

const byName = (a: User, b: User) => a.full_name.localeCompare(b.full_name);
/** People and bots of the organization; the system bots (Welcome Bot and others) are no one's to manage. */
const organizationUsers = (state: AppState) => [...state.users.values()].filter((u) => !u.is_system_bot).sort(byName);

/** An administration table: its column headings, its rows, and a line in their place when there are none. */
function AdminTable({ columns, empty, className, children }: { columns: string[]; empty: string; className?: string; children: ComponentChildren[] }) {
  return (
    <table class={className ? `admin-table ${className}` : 'admin-table'}>
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c} scope="col">
              {c}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {children.length === 0 && (
          <tr>
            <td colSpan={columns.length} class="hint">
              {empty}
            </td>
          </tr>
        )}
        {children}
      </tbody>
    </table>
  );
}

function UserList({ client, state, active }: SectionProps & { active: boolean }) {
  const [filter, setFilter] = useState('');
  const [error, run] = useAction();
  const wanted = filter.trim().toLowerCase();
  const people = organizationUsers(state).filter(
    (u) => !u.is_bot && u.is_active === active && (u.full_name.toLowerCase().includes(wanted) || (u.delivery_email ?? u.email).toLowerCase().includes(wanted)),
  );
  const owner = isOwner(state);
  return (
    <>
      <label for="user-filter" class="visually-hidden">
        Filter users
      </label>
      <input id="user-filter" type="search" placeholder="Filter users" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
      <ErrorLine error={error} />
      <AdminTable columns={['Name', 'Email', 'Role', 'Actions']} empty="Nobody.">
        {people.map((u) => {
          const me = u.user_id === state.me.userId;
          // Only owners make or unmake owners (the server says so too).
          const fixed = me || (u.role === 100 && !owner);
          return (
            <tr key={u.user_id} data-user-id={u.user_id}>
              <td>
                <Avatar user={u} size="small" /> {u.full_name}
              </td>
              <td>{u.delivery_email ?? u.email}</td>
              <td>
                <select
                  aria-label={`Role of ${u.full_name}`}
                  value={u.role ?? 400}
                  disabled={fixed || !active}
                  onChange={(e) => run(() => setRole(client.api, u.user_id, Number(e.currentTarget.value)))}
                >
                  {ROLES.filter(([r]) => owner || r !== 100 || u.role === 100).map(([r, label]) => (
                    <option key={r} value={r}>
                      {label}
                    </option>
                  ))}
                </select>
              </td>
              <td>
                {!me && (
                  <button
                    type="button"
                    class={`button button-small${active ? ' button-danger' : ''}`}
                    aria-label={`${active ? 'Deactivate' : 'Reactivate'} ${u.full_name}`}
                    onClick={() =>
                      (!active || confirm(`Deactivate ${u.full_name}? They will be logged out at once.`)) &&
                      run(() => setActive(client.api, u.user_id, !active))
                    }
                  >
                    {active ? 'Deactivate' : 'Reactivate'}
                  </button>
                )}
              </td>
            </tr>
          );
        })}
      </AdminTable>
    </>
  );
}

function Bots({ state }: SectionProps) {
  const bots = organizationUsers(state).filter((u) => u.is_bot);
  return (
    <AdminTable columns={['Name', 'Email', 'Owner', 'State']} empty="No bots yet.">
      {bots.map((b) => (
        <tr key={b.user_id} data-user-id={b.user_id}>
          <td>
            <Avatar user={b} size="small" /> {b.full_name}
          </td>
          <td>{b.email}</td>
          <td>{b.bot_owner_id ? (state.users.get(b.bot_owner_id)?.full_name ?? '') : ''}</td>
          <td>{b.is_active ? 'Active' : 'Deactivated'}</td>
        </tr>
      ))}
    </AdminTable>
  );
}

/** The role and channels an invitation gives. */
function InviteTermsFields({ state, terms, setTerms }: { state: AppState; terms: InviteTerms; setTerms: (t: InviteTerms) => void }) {
  const owner = isOwner(state);
  const channels = [...state.channels.values()].sort((a, b) => a.name.localeCompare(b.name));
  return (
    <>
      <label for="invite-role">Invite as</label>
      <select id="invite-role" value={terms.role} onChange={(e) => setTerms({ ...terms, role: Number(e.currentTarget.value) })}>
        {ROLES.filter(([r]) => owner || r !== 100).map(([r, label]) => (
          <option key={r} value={r}>
            {label}
          </option>
        ))}
      </select>
      <fieldset class="choices">
        <legend>Channels they join</legend>
        {channels.map((c) => (
          <label key={c.stream_id}>
            <input
              type="checkbox"
              checked={terms.channelIds.includes(c.stream_id)}
              onChange={(e) =>
                setTerms({
                  ...terms,
                  channelIds: e.currentTarget.checked ? [...terms.channelIds, c.stream_id] : terms.channelIds.filter((id) => id !== c.stream_id),
                })
              }
            />{' '}
            #{c.name}
          </label>
        ))}
      </fieldset>
    </>
  );
}

function Invitations({ client, state }: SectionProps) {
  const [invites, setInvites] = useState<Invite[] | null>(null);
  const [emails, setEmails] = useState('');
  const [terms, setTerms] = useState<InviteTerms>({ role: 400, channelIds: state.org.defaultChannels });
  const [link, setLink] = useState<string | null>(null);
  const [sent, setSent] = useState(false);
  const [error, run] = useAction();
  // Fetched again on each `invites_changed`: sent, used or revoked, here or elsewhere.
  useEffect(() => {
    listInvites(client.api).then(setInvites, () => setInvites([]));
  }, [state.org.invitesVersion]);
  async function invite(e: Event) {
    e.preventDefault();
    setLink(null);
    if (await run(() => inviteByEmail(client.api, emails, terms))) {
      setEmails('');
      setSent(true);
    }
  }
  return (
    <>
      <form class="channel-form" aria-label="Invite users" onSubmit={invite}>
        <label for="invite-emails">Emails (one per line, or separated by commas)</label>
        <textarea id="invite-emails" rows={3} value={emails} onInput={(e) => (setSent(false), setEmails(e.currentTarget.value))} />
        <InviteTermsFields state={state} terms={terms} setTerms={setTerms} />
        <ErrorLine error={error} />
        {sent && (
          <p class="alert alert-info" role="status">
            Invitations sent.
          </p>
        )}
        <div class="actions">
          <button type="submit" class="button button-small" disabled={!emails.trim()}>
            Invite
          </button>
          <button
            type="button"
            class="button button-small button-secondary"
            onClick={() => (setSent(false), run(async () => setLink(await createInviteLink(client.api, terms))))}
          >
            Create invite link
          </button>
        </div>
        {link && (
          <p class="alert alert-info" role="status">
            Anyone with this link can join:{' '}
            <a class="invite-link" href={link}>
              {link}
            </a>
          </p>
        )}
      </form>
      <h3>Pending invitations</h3>
      {!invites && <p class="hint">Loading…</p>}
      {invites?.length === 0 && <p class="hint">No pending invitations.</p>}
      {invites && invites.length > 0 && (
        <table class="admin-table invites">
          <thead>
            <tr>
              <th scope="col">Invitee</th>
              <th scope="col">Invited by</th>
              <th scope="col">Role</th>
              <th scope="col">Expires</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {invites.map((i) => (
              <tr key={`${i.is_multiuse}:${i.id}`}>
                <td>{i.is_multiuse ? <a href={i.link_url}>Invite link</a> : i.email}</td>
                <td>{state.users.get(i.invited_by_user_id)?.full_name ?? ''}</td>
                <td>{roleLabel(i.invited_as)}</td>
                <td>{i.expiry_date ? formatFullDate(i.expiry_date, state.settings.twenty_four_hour_time) : 'Never'}</td>
                <td>
                  <button
                    type="button"
                    class="button button-small button-secondary"
                    aria-label={`Revoke ${i.is_multiuse ? 'invite link' : i.email}`}
                    onClick={() => run(() => revokeInvite(client.api, i))}
                  >
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function Linkifiers({ client, state }: SectionProps) {
  const [draft, setDraft] = useState({ pattern: '', url: '' });
  const [error, run] = useAction();
  async function submit(e: Event) {
    e.preventDefault();
    if (await run(() => addLinkifier(client.api, draft.pattern, draft.url))) setDraft({ pattern: '', url: '' });
  }
  return (
    <>
      <p class="hint">
        Text matching a pattern becomes a link in every message, e.g. <code>#(?P&lt;id&gt;[0-9]+)</code> to{' '}
        <code>https://github.com/acme/app/issues/{'{id}'}</code>.
      </p>
      <form class="channel-form" aria-label="Add a linkifier" onSubmit={submit}>
        <label for="linkifier-pattern">Pattern</label>
        <input id="linkifier-pattern" required value={draft.pattern} onInput={(e) => setDraft({ ...draft, pattern: e.currentTarget.value })} />
        <label for="linkifier-url">URL template</label>
        <input id="linkifier-url" required value={draft.url} onInput={(e) => setDraft({ ...draft, url: e.currentTarget.value })} />
        <ErrorLine error={error} />
        <div class="actions">
          <button type="submit" class="button button-small">
            Add linkifier
          </button>
        </div>
      </form>
      <AdminTable columns={['Pattern', 'URL template', 'Actions']} empty="No linkifiers." className="linkifiers">
        {state.org.linkifiers.map((l) => (
          <tr key={l.id}>
            <td>
              <code>{l.pattern}</code>
            </td>
            <td>
              <code>{l.url_template}</code>
            </td>
            <td>
              <button
                type="button"
                class="button button-small button-secondary"
                aria-label={`Delete linkifier ${l.pattern}`}
                onClick={() => run(() => removeLinkifier(client.api, l.id))}
              >
                Delete
              </button>
            </td>
          </tr>
        ))}
      </AdminTable>
    </>
  );
}

function CustomEmoji({ client, state }: SectionProps) {
  const [name, setName] = useState('');
  const [file, setFile] = useState<File | null>(null);
  const [error, run] = useAction();
  const emoji = [...state.realmEmoji.values()].filter((e) => !e.deactivated).sort((a, b) => a.name.localeCompare(b.name));
  async function submit(e: Event) {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    if (file && (await run(() => addEmoji(client.api, name.trim(), file)))) {
      setName('');
      setFile(null);
      form.reset();
    }
  }
  return (
    <>
      <form class="channel-form" aria-label="Add custom emoji" onSubmit={submit}>
        <label for="emoji-name">Emoji name</label>
        <input
          id="emoji-name"
          required
          pattern="[a-z0-9_\-]+"
          title="Lowercase letters, digits, _ and -"
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <label for="emoji-file">Image</label>
        <input
          id="emoji-file"
          type="file"
          accept="image/png,image/gif,image/jpeg,image/webp"
          required
          onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
        />
        <ErrorLine error={error} />
        <div class="actions">
          <button type="submit" class="button button-small" disabled={!file || !name.trim()}>
            Add emoji
          </button>
        </div>
      </form>
      <ul class="emoji-list">
        {emoji.length === 0 && <li class="hint">No custom emoji.</li>}
        {emoji.map((e) => (
          <li key={e.name} data-emoji={e.name}>
            <img class="emoji" src={e.source_url} alt="" />
            <span class="name">:{e.name}:</span>
            <button
              type="button"
              class="button button-small button-secondary"
              aria-label={`Delete :${e.name}:`}
              onClick={() => run(() => removeEmoji(client.api, e.name))}
            >
              Delete
            </button>
          </li>
        ))}
      </ul>
    </>
  );
}

function DefaultChannels({ client, state }: SectionProps) {
  const [adding, setAdding] = useState('');
  const [error, run] = useAction();
  const { defaultChannels } = state.org;
  const name = (id: number) => state.channels.get(id)?.name ?? `channel ${id}`;
  // Zulip allows only public channels as defaults.
  const candidates = [...state.channels.values()]
    .filter((c) => !c.invite_only && !defaultChannels.includes(c.stream_id))
    .sort((a, b) => a.name.localeCompare(b.name));
  return (
    <>
      <p class="hint">New members join these channels.</p>
      <form
        class="add-subscriber"
        onSubmit={(e) => (e.preventDefault(), adding && run(() => addDefaultChannel(client.api, Number(adding))).then((ok) => ok && setAdding('')))}
      >
        <label for="default-channel">Add a default channel</label>
        <select id="default-channel" value={adding} onChange={(e) => setAdding(e.currentTarget.value)}>
          <option value="">Choose a channel…</option>
          {candidates.map((c) => (
            <option key={c.stream_id} value={String(c.stream_id)}>
              #{c.name}
            </option>
          ))}
        </select>
        <button type="submit" class="button button-small" disabled={!adding}>
          Add
        </button>
      </form>
      <ErrorLine error={error} />
      <ul class="subscriber-list default-channels">
        {defaultChannels.length === 0 && <li class="hint">No default channels.</li>}
        {[...defaultChannels]
          .sort((a, b) => name(a).localeCompare(name(b)))
          .map((id) => (
            <li key={id}>
              <span class="name">#{name(id)}</span>
              <button
                type="button"
                class="button button-small button-secondary"
                aria-label={`Remove #${name(id)}`}
                onClick={() => run(() => removeDefaultChannel(client.api, id))}
              >
                Remove
              </button>
            </li>
          ))}
      </ul>
    </>
  );
}

function AuthenticationMethods({ client, state }: SectionProps) {
  const methods = state.org.authMethods;
  const [error, run] = useAction();
  const owner = isOwner(state);
  // A refused change remounts the boxes, so they show the methods as they still are.
  const [refusals, setRefusals] = useState(0);
  const enabled = (changed: Record<string, boolean>) => Object.fromEntries(Object.entries(methods).map(([name, m]) => [name, changed[name] ?? m.enabled]));
  const change = (name: string, on: boolean) =>
    run(() => updateRealm(client.api, { authentication_methods: enabled({ [name]: on }) })).then((ok) => ok || setRefusals((n) => n + 1));
  return (
    <fieldset key={refusals} class="choices auth-methods" disabled={!owner}>
      <legend>{owner ? 'How people log in' : 'Only owners change how people log in'}</legend>
      {Object.entries(methods).map(([name, m]) => (
        <label key={name}>
          <input type="checkbox" checked={m.enabled} disabled={!m.available} onChange={(e) => change(name, e.currentTarget.checked)} /> {name}
          {!m.available && m.unavailable_reason && <span class="hint"> ({m.unavailable_reason})</span>}
        </label>
      ))}
      <ErrorLine error={error} />
    </fieldset>
  );
}
