// Every route of the API, one module per resource.
import type { Route } from '../http/route.ts';
import { routes as auth } from './auth.ts';
import { routes as channels } from './channels.ts';
import { routes as events } from './events.ts';
import { routes as flags } from './flags.ts';
import { routes as linkifiers } from './linkifiers.ts';
import { routes as messages } from './messages.ts';
import { routes as messageEdits } from './messages-edit.ts';
import { routes as reactions } from './reactions.ts';
import { routes as render } from './render.ts';
import { routes as serverSettings } from './server-settings.ts';
import { routes as subscriptions } from './subscriptions.ts';
import { routes as typing } from './typing.ts';
import { routes as uploads } from './uploads.ts';
import { routes as users } from './users.ts';

export const allRoutes: Route[] = [...auth, ...serverSettings, ...users, ...channels, ...subscriptions, ...typing, ...messages, ...messageEdits, ...reactions, ...uploads, ...flags, ...linkifiers, ...render, ...events];
