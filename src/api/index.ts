// Every route of the API, one module per resource.
import type { Route } from './route.ts';
import { asyncApiRoutes } from './asyncapi.ts';
import { openApiRoutes } from './openapi.ts';
import { routes as alertWords } from './alert-words.ts';
import { routes as auth } from './auth.ts';
import { routes as avatars } from './avatars.ts';
import { routes as botStorage } from './bot-storage.ts';
import { routes as bots } from './bots.ts';
import { routes as calls } from './calls.ts';
import { routes as channelFolders } from './channel-folders.ts';
import { routes as channels } from './channels.ts';
import { routes as defaultChannels } from './default-channels.ts';
import { routes as devices } from './devices.ts';
import { routes as drafts } from './drafts.ts';
import { routes as events } from './events.ts';
import { routes as flags } from './flags.ts';
import { routes as invites } from './invites.ts';
import { routes as linkifiers } from './linkifiers.ts';
import { routes as messages } from './messages.ts';
import { routes as messageEdits } from './messages-edit.ts';
import { routes as mutedUsers } from './muted-users.ts';
import { routes as navigationViews } from './navigation-views.ts';
import { routes as presence } from './presence.ts';
import { routes as profileFields } from './profile-fields.ts';
import { routes as reactions } from './reactions.ts';
import { routes as reminders } from './reminders.ts';
import { routes as realmSettings } from './realm.ts';
import { routes as savedSnippets } from './saved-snippets.ts';
import { routes as scheduledMessages } from './scheduled-messages.ts';
import { routes as realmDomains } from './realm-domains.ts';
import { routes as realmEmoji } from './realm-emoji.ts';
import { routes as realmPlaygrounds } from './realm-playgrounds.ts';
import { routes as realmExport } from './realm-export.ts';
import { routes as render } from './render.ts';
import { routes as serverSettings } from './server-settings.ts';
import { routes as settings } from './settings.ts';
import { routes as subscriptions } from './subscriptions.ts';
import { routes as typing } from './typing.ts';
import { routes as uploads } from './uploads.ts';
import { routes as userGroups } from './user-groups.ts';
import { routes as userStatus } from './user-status.ts';
import { routes as userTopics } from './user-topics.ts';
import { routes as users } from './users.ts';
import { routes as webhooks } from './webhooks.ts';
import { routes as registrationPages } from '../pages/registration.ts';
import { routes as unsubscribePages } from '../pages/unsubscribe.ts';
import { routes as integrationPages } from '../pages/integrations.ts';
import { routes as loginPages } from '../pages/login.ts';
import { routes as ssoPages } from '../pages/sso.ts';
import { routes as samlPages } from '../pages/saml.ts';
import { routes as jwtLoginPages } from '../pages/jwt-login.ts';

/** The routes by resource; the names are the OpenAPI document's tags. */
export const routeGroups: Readonly<Record<string, readonly Route[]>> = {
  auth,
  serverSettings,
  users,
  userGroups,
  realmSettings,
  realmDomains,
  invites,
  realmPlaygrounds,
  profileFields,
  channelFolders,
  channels,
  userTopics,
  defaultChannels,
  subscriptions,
  typing,
  messages,
  messageEdits,
  reactions,
  uploads,
  avatars,
  flags,
  linkifiers,
  presence,
  userStatus,
  mutedUsers,
  alertWords,
  realmEmoji,
  realmExport,
  render,
  calls,
  drafts,
  scheduledMessages,
  reminders,
  savedSnippets,
  navigationViews,
  bots,
  botStorage,
  webhooks,
  settings,
  devices,
  events,
  registrationPages,
  unsubscribePages,
  integrationPages,
  loginPages,
  ssoPages,
  samlPages,
  jwtLoginPages,
  openapi: openApiRoutes(() => routeGroups),
  asyncapi: asyncApiRoutes(),
};

export const allRoutes: Route[] = Object.values(routeGroups).flat();
