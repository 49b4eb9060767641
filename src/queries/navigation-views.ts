// A user's navigation views (Zulip's NavigationView.to_api_dict), for GET /navigation_views,
// register and the view events.
import type { App } from '../app.ts';
import type { NavigationView } from '../db/generated/client.ts';
import type { z } from 'zod';
import type { navigationView } from '../events/schemas.ts';

/** Built-in views: settings only, never a name of their own. */
export const BUILT_IN_VIEW_FRAGMENTS = ['inbox', 'recent', 'feed', 'drafts', 'narrow/has/reaction/sender/me', 'narrow/is/mentioned', 'narrow/is/starred'];

export function formatNavigationView(v: NavigationView): z.infer<typeof navigationView> {
  return { fragment: v.fragment, is_pinned: v.isPinned, name: v.name };
}

export async function navigationViews(app: App, userId: number): Promise<z.infer<typeof navigationView>[]> {
  return (await app.prisma.navigationView.findMany({ where: { userId }, orderBy: { id: 'asc' } })).map(formatNavigationView);
}
