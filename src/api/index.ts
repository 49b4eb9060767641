// Every route of the API, one module per resource.
import type { Route } from './route.ts';
import { routes as auth } from './auth.ts';
import { routes as botStorage } from './bot-storage.ts';
import { routes as channelFolders } from './channel-folders.ts';
import { routes as channels } from './channels.ts';
import { routes as drafts } from './drafts.ts';
import { routes as events } from './events.ts';
import { routes as flags } from './flags.ts';
import { routes as linkifiers } from './linkifiers.ts';
import { routes as messages } from './messages.ts';
import { routes as messageEdits } from './messages-edit.ts';
import { routes as navigationViews } from './navigation-views.ts';
import { routes as presence } from './presence.ts';
import { routes as reactions } from './reactions.ts';
import { routes as realmSettings } from './realm.ts';
import { routes as savedSnippets } from './saved-snippets.ts';
import { routes as realmEmoji } from './realm-emoji.ts';
import { routes as render } from './render.ts';
import { routes as serverSettings } from './server-settings.ts';
import { routes as settings } from './settings.ts';
import { routes as subscriptions } from './subscriptions.ts';
import { routes as typing } from './typing.ts';
import { routes as uploads } from './uploads.ts';
import { routes as userGroups } from './user-groups.ts';
import { routes as userStatus } from './user-status.ts';
import { routes as users } from './users.ts';

export const allRoutes: Route[] = [...auth, ...serverSettings, ...users, ...userGroups, ...realmSettings, ...channelFolders, ...channels, ...subscriptions, ...typing, ...messages, ...messageEdits, ...reactions, ...uploads, ...flags, ...linkifiers, ...presence, ...userStatus, ...realmEmoji, ...render, ...drafts, ...savedSnippets, ...navigationViews, ...botStorage, ...settings, ...events];
