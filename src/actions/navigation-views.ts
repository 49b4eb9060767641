// Navigation views (Zulip's zerver/actions/navigation_views.py): a user's custom views and their
// settings for built-in ones, kept in step across the user's clients by `navigation_view` events.
import type { App } from '../app.ts';
import type { Prisma, User } from '../db/generated/client.ts';
import { badRequest, notFound } from '../errors.ts';
import { BUILT_IN_VIEW_FRAGMENTS, formatNavigationView } from '../queries/navigation-views.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { atomic, lockUser, sendOnCommit } from './transaction.ts';
import type { EventBody } from '../events/schemas.ts';

const viewExists = () => badRequest('Navigation view already exists.');
const viewMissing = () => notFound('Navigation view does not exist.');
const isBuiltIn = (fragment: string) => BUILT_IN_VIEW_FRAGMENTS.includes(fragment);

async function checkNameFree(tx: Prisma.TransactionClient, userId: number, name: string | undefined): Promise<void> {
  if (name !== undefined && (await tx.navigationView.findFirst({ where: { userId, name }, select: { id: true } }))) throw viewExists();
}

function sendView(realm: RealmInfo, user: User, event: EventBody<'navigation_view'>): void {
  sendOnCommit({ realmId: realm.id, userIds: [user.id], event: { type: 'navigation_view', ...event } });
}

export async function addNavigationView(app: App, realm: RealmInfo, user: User, fragment: string, isPinned: boolean, name: string | undefined): Promise<void> {
  if (isBuiltIn(fragment) && name !== undefined) throw badRequest('Built-in views cannot have a custom name.');
  if (!isBuiltIn(fragment) && !name) throw badRequest('Custom views must have a valid name.');
  await atomic(app, async () => {
    const tx = app.prisma;
    // One user's view changes go one at a time, so the uniqueness checks hold.
    await lockUser(app, user.id);
    if (await tx.navigationView.findFirst({ where: { userId: user.id, fragment }, select: { id: true } })) throw viewExists();
    await checkNameFree(tx, user.id, name);
    const view = await tx.navigationView.create({ data: { userId: user.id, fragment, isPinned, name: name ?? null } });
    sendView(realm, user, { op: 'add', navigation_view: formatNavigationView(view) });
  });
}

export async function updateNavigationView(
  app: App,
  realm: RealmInfo,
  user: User,
  fragment: string,
  change: { isPinned?: boolean; name?: string },
): Promise<void> {
  if (isBuiltIn(fragment) && change.name !== undefined) throw badRequest('Built-in views cannot have a custom name.');
  await atomic(app, async () => {
    const tx = app.prisma;
    await lockUser(app, user.id);
    await checkNameFree(tx, user.id, change.name);
    const { count } = await tx.navigationView.updateMany({ where: { userId: user.id, fragment }, data: { isPinned: change.isPinned, name: change.name } });
    if (count === 0) throw viewMissing();
    const data: Record<string, unknown> = {};
    if (change.name !== undefined) data.name = change.name;
    if (change.isPinned !== undefined) data.is_pinned = change.isPinned;
    sendView(realm, user, { op: 'update', fragment, data });
  });
}

export async function removeNavigationView(app: App, realm: RealmInfo, user: User, fragment: string): Promise<void> {
  await atomic(app, async () => {
    const { count } = await app.prisma.navigationView.deleteMany({ where: { userId: user.id, fragment } });
    if (count === 0) throw viewMissing();
    sendView(realm, user, { op: 'remove', fragment });
  });
}
