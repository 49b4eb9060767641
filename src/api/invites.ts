// Invitations: POST/GET /invites, POST /invites/multiuse, DELETE /invites/{id},
// POST /invites/{id}/resend, PATCH/DELETE /invites/multiuse/{id}; and the preview of Welcome Bot's custom
// message, POST /realm/test_welcome_bot_custom_message.
import { z } from 'zod';
import {
  createMultiuseInvite,
  editMultiuseInvite,
  type InvitationTerms,
  inviteUsers,
  requireMemberOrAdmin,
  resendInvitation,
  revokeInvitation,
  revokeMultiuseInvite,
} from '../actions/invites.ts';
import { sendTestWelcomeMessage } from '../actions/onboarding.ts';
import type { Config } from '../config.ts';
import { welcomeTextSchema } from '../domain/realm-settings.ts';
import { ROLES, Role } from '../domain/roles.ts';
import { role } from '../events/schemas.ts';
import { badRequest } from '../errors.ts';
import { bool, intList, json, pathId, str } from '../http/params.ts';
import { listInvites } from '../queries/invites.ts';
import { userRoute } from './route.ts';

/** About a century: beyond it a date would not be representable for long. */
const MAX_EXPIRY_MINUTES = 100 * 366 * 24 * 60;

const inviteAs = () =>
  json(
    z
      .number()
      .int()
      .refine((r) => ROLES.includes(r)),
  );

const termParams = {
  invite_expires_in_minutes: json(z.number().int().min(1).max(MAX_EXPIRY_MINUTES).nullable()).optional(),
  invite_as: inviteAs().default(Role.MEMBER),
  group_ids: intList().default([]),
  include_realm_default_subscriptions: bool().default(false),
  welcome_message_custom_text: str(welcomeTextSchema).optional(),
};

interface TermParams {
  invite_expires_in_minutes: number | null | undefined;
  invite_as: number;
  stream_ids: number[];
  group_ids: number[];
  include_realm_default_subscriptions: boolean;
  welcome_message_custom_text: string | undefined;
}

function terms(config: Config, p: TermParams): InvitationTerms {
  return {
    invitedAs: p.invite_as,
    channelIds: p.stream_ids,
    groupIds: p.group_ids,
    includeRealmDefaultSubscriptions: p.include_realm_default_subscriptions,
    welcomeMessageCustomText: p.welcome_message_custom_text ?? null,
    expiresInMinutes: p.invite_expires_in_minutes === undefined ? config.INVITATION_LINK_VALIDITY_MINUTES : p.invite_expires_in_minutes,
  };
}

/** An invitation as GET /invites lists it: one to an email address, or a reusable link. */
const inviteFields = {
  id: z.number().int(),
  invited_by_user_id: z.number().int(),
  invited: z.number().int(),
  expiry_date: z.number().int().nullable(),
  invited_as: role,
};
const invite = z
  .union([
    z.strictObject({ ...inviteFields, email: z.string(), is_multiuse: z.literal(false), notify_referrer_on_join: z.boolean() }),
    z.strictObject({ ...inviteFields, is_multiuse: z.literal(true), link_url: z.string() }),
  ])
  .meta({ id: 'Invite' });

const inviteId = (path: Record<string, string>) => pathId(path.invite_id, () => badRequest('No such invitation'));

export const routes = [
  userRoute({
    method: 'GET',
    path: '/api/v1/invites',
    params: {},
    response: z.object({ invites: z.array(invite) }),
    async handler({ app, realm, user }) {
      requireMemberOrAdmin(user);
      return { invites: await listInvites(app, realm, user) };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/invites',
    params: { ...termParams, invitee_emails: str(), stream_ids: intList(), notify_referrer_on_join: bool().default(true) },
    response: z.object({}),
    async handler({ app, realm, user, params, log }) {
      await inviteUsers(
        app,
        realm,
        user,
        { ...terms(app.config, params), inviteeEmails: params.invitee_emails, notifyReferrerOnJoin: params.notify_referrer_on_join },
        log,
      );
      return {};
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/invites/multiuse',
    params: { ...termParams, stream_ids: intList().default([]) },
    response: z.object({ invite_link: z.string() }),
    async handler({ app, realm, user, params }) {
      return { invite_link: await createMultiuseInvite(app, realm, user, terms(app.config, params)) };
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/invites/:invite_id',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await revokeInvitation(app, realm, user, inviteId(path));
      return {};
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/invites/:invite_id/resend',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path, log }) {
      await resendInvitation(app, realm, user, inviteId(path), log);
      return {};
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/invites/multiuse/:invite_id',
    params: {
      invite_as: inviteAs().optional(),
      stream_ids: intList().optional(),
      group_ids: intList().optional(),
      include_realm_default_subscriptions: bool().optional(),
    },
    response: z.object({}),
    async handler({ app, realm, user, path, params }) {
      await editMultiuseInvite(app, realm, user, inviteId(path), {
        invitedAs: params.invite_as,
        channelIds: params.stream_ids,
        groupIds: params.group_ids,
        includeRealmDefaultSubscriptions: params.include_realm_default_subscriptions,
      });
      return {};
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/invites/multiuse/:invite_id',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await revokeMultiuseInvite(app, realm, user, inviteId(path));
      return {};
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/realm/test_welcome_bot_custom_message',
    params: { welcome_message_custom_text: str(welcomeTextSchema) },
    response: z.object({ message_id: z.number().int().describe("Welcome Bot's message to the caller") }),
    async handler({ app, realm, user, params }) {
      return { message_id: await sendTestWelcomeMessage(app, realm, user, params.welcome_message_custom_text) };
    },
  }),
];
