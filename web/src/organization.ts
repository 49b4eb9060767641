// The organization as its administrators manage it (Zulip's #organization): its profile, the
// login methods, linkifiers, default channels, custom profile fields and people's statuses, kept
// current by events; the overlay's addresses; and the API calls of organization settings.
import type { Api } from './api.ts';
import type { DeliveredEvent, DeliveredOf } from './events.ts';
import type { Viewer } from './types.ts';

export interface Linkifier {
  id: number;
  pattern: string;
  url_template: string;
}

export interface ProfileField {
  id: number;
  name: string;
  hint: string;
  /** Zulip's field types: 1 short text, 2 long text, 3 choice, 4 date, 5 link, 6 users, 7 external account, 8 pronouns. */
  type: number;
  field_data: string;
  order: number;
}

export interface UserStatus {
  status_text?: string;
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
  away?: boolean;
}

/** A person's profile card (Zulip's `#user/<id>`). */
export function parseUserHash(hash: string): number | null {
  const [head, part] = hash.replace(/^#/, '').split('/');
  const id = Number.parseInt(part ?? '', 10);
  return head === 'user' && Number.isInteger(id) && id > 0 ? id : null;
}

export const userHash = (userId: number) => `#user/${userId}`;

/** A login method as register and the realm event describe it. */
export interface AuthMethod {
  enabled: boolean;
  available: boolean;
  unavailable_reason?: string;
}

export interface Organization {
  description: string;
  authMethods: Record<string, AuthMethod>;
  linkifiers: Linkifier[];
  /** Channels new members are subscribed to. */
  defaultChannels: number[];
  profileFields: ProfileField[];
  /** People's statuses by user id (those without one are missing). */
  statuses: Map<number, UserStatus>;
  /** Bumped by each `invites_changed`: the invitations list is fetched again. */
  invitesVersion: number;
}

export function organizationFromRegister(r: any): Organization {
  return {
    description: r.realm_description ?? '',
    authMethods: r.realm_authentication_methods ?? {},
    linkifiers: r.realm_linkifiers ?? [],
    defaultChannels: r.realm_default_streams ?? [],
    profileFields: r.custom_profile_fields ?? [],
    statuses: new Map(Object.entries(r.user_status ?? {}).map(([id, s]) => [Number(id), s as UserStatus])),
    invitesVersion: 0,
  };
}

/** The part of the client's state this module keeps. */
interface OrganizationState {
  org: Organization;
}

function withOrg<S extends OrganizationState>(state: S, change: Partial<Organization>): S {
  return { ...state, org: { ...state.org, ...change } };
}

/** A status event changes only what it names; an empty text and no emoji is no status. */
function onStatus<S extends OrganizationState>(state: S, e: DeliveredOf<'user_status'>): S {
  const { type: _, id: __, user_id: userId, ...fields } = e;
  const status: UserStatus = { ...state.org.statuses.get(userId), ...fields };
  const statuses = new Map(state.org.statuses);
  if (!status.status_text && !status.emoji_name && !status.away) statuses.delete(userId);
  else statuses.set(userId, status);
  return withOrg(state, { statuses });
}

/** The realm's `authentication_methods` (a realm event's value is typed only as a value). */
const isAuthMethods = (value: unknown): value is Record<string, AuthMethod> =>
  typeof value === 'object' &&
  value !== null &&
  Object.values(value).every((m: unknown) => typeof m === 'object' && m !== null && 'enabled' in m && typeof m.enabled === 'boolean');

/** Applies the events about the organization this module keeps; others leave the state as it is. */
export function trackOrganization<S extends OrganizationState>(state: S, e: DeliveredEvent): S {
  switch (e.type) {
    case 'realm': {
      if (e.op !== 'update_dict' && e.op !== 'update') return state;
      const data: Record<string, unknown> = e.op === 'update' ? { [e.property]: e.value } : e.data;
      const { description, authentication_methods: methods } = data;
      return withOrg(state, {
        ...(typeof description === 'string' && { description }),
        ...(isAuthMethods(methods) && { authMethods: methods }),
      });
    }
    case 'realm_linkifiers':
      return withOrg(state, { linkifiers: e.realm_linkifiers });
    case 'default_streams':
      return withOrg(state, { defaultChannels: e.default_streams });
    case 'custom_profile_fields':
      return withOrg(state, { profileFields: e.fields });
    case 'user_status':
      return onStatus(state, e);
    case 'invites_changed':
      return withOrg(state, { invitesVersion: state.org.invitesVersion + 1 });
    default:
      return state;
  }
}

/** Zulip's roles, most powerful first. */
export const ROLES: [role: number, label: string][] = [
  [100, 'Owner'],
  [200, 'Administrator'],
  [300, 'Moderator'],
  [400, 'Member'],
  [600, 'Guest'],
];

export const roleLabel = (role: number | undefined) => ROLES.find(([r]) => r === role)?.[1] ?? 'Member';

export const isOwner = (state: Viewer) => state.users.get(state.me.userId)?.role === 100;

/** The overlay's sections and their addresses (`#organization/<section>`, Zulip's names). */
export const ORG_SECTIONS = {
  'organization-profile': 'Organization profile',
  users: 'Users',
  deactivated: 'Deactivated users',
  'bot-list-admin': 'Bots',
  'invites-list-admin': 'Invitations',
  'linkifier-settings': 'Linkifiers',
  'emoji-settings': 'Custom emoji',
  'default-channels-list': 'Default channels',
  'auth-methods': 'Authentication methods',
} as const;

export type OrgSection = keyof typeof ORG_SECTIONS;

export function parseOrganizationHash(hash: string): OrgSection | null {
  const [head, part] = hash.replace(/^#/, '').split('/');
  if (head !== 'organization') return null;
  return part && part in ORG_SECTIONS ? (part as OrgSection) : 'organization-profile';
}

export async function updateRealm(api: Api, changes: Record<string, unknown>): Promise<void> {
  await api.patch('/realm', changes);
}

export async function setRole(api: Api, userId: number, role: number): Promise<void> {
  await api.patch(`/users/${userId}`, { role });
}

export async function setActive(api: Api, userId: number, active: boolean): Promise<void> {
  if (active) await api.post(`/users/${userId}/reactivate`);
  else await api.delete(`/users/${userId}`);
}

export interface Invite {
  id: number;
  email?: string;
  link_url?: string;
  is_multiuse: boolean;
  invited_by_user_id: number;
  invited: number;
  expiry_date: number | null;
  invited_as: number;
}

export interface InviteTerms {
  role: number;
  channelIds: number[];
}

export async function listInvites(api: Api): Promise<Invite[]> {
  return (await api.get('/invites')).invites;
}

export async function inviteByEmail(api: Api, emails: string, terms: InviteTerms): Promise<void> {
  await api.post('/invites', { invitee_emails: emails, invite_as: terms.role, stream_ids: terms.channelIds });
}

export async function createInviteLink(api: Api, terms: InviteTerms): Promise<string> {
  return (await api.post('/invites/multiuse', { invite_as: terms.role, stream_ids: terms.channelIds })).invite_link;
}

export async function revokeInvite(api: Api, invite: Invite): Promise<void> {
  await api.delete(invite.is_multiuse ? `/invites/multiuse/${invite.id}` : `/invites/${invite.id}`);
}

export async function addLinkifier(api: Api, pattern: string, urlTemplate: string): Promise<void> {
  await api.post('/realm/filters', { pattern, url_template: urlTemplate });
}

export async function removeLinkifier(api: Api, id: number): Promise<void> {
  await api.delete(`/realm/filters/${id}`);
}

export async function addEmoji(api: Api, name: string, file: File): Promise<void> {
  const form = new FormData();
  form.append('file', file);
  await api.upload(`/realm/emoji/${encodeURIComponent(name)}`, form);
}

export async function removeEmoji(api: Api, name: string): Promise<void> {
  await api.delete(`/realm/emoji/${encodeURIComponent(name)}`);
}

export async function addDefaultChannel(api: Api, streamId: number): Promise<void> {
  await api.post('/default_streams', { stream_id: streamId });
}

export async function removeDefaultChannel(api: Api, streamId: number): Promise<void> {
  await api.delete('/default_streams', { stream_id: streamId });
}
