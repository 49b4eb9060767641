// Every route of the API, one module per resource.
import type { Route } from '../http/route.ts';
import { routes as auth } from './auth.ts';
import { routes as serverSettings } from './server-settings.ts';
import { routes as users } from './users.ts';

export const allRoutes: Route[] = [...auth, ...serverSettings, ...users];
