// Caches every process keeps (users by credentials, organizations, groups, channel rows and
// subscriber sets, linkifiers, custom emoji, register's member lists, presence copies, the
// scheduler's next due time) and what changes them. An action reports a committed change with
// `cacheChanged`: this process updates its copy at once, and the bus carries the change to the
// other processes of a cluster, ahead of the events published after it, so a node that delivers
// an event has already dropped what the event made stale. In one process the bus has nobody to
// tell. A request that races the change on another node may still see the old value, as a
// request that started before the commit does in one process.
import type { App } from '../app.ts';
import type { CacheChange, EventEnvelope } from '../bus/bus.ts';
import { log } from '../log.ts';
import { forgetLinkifiers } from '../queries/linkifiers.ts';
import { changesMemberLists, forgetMemberLists } from '../queries/member-list.ts';
import { changesPresence, forgetPresenceCopy } from '../queries/presence-copy.ts';
import { forgetRealmEmoji } from '../queries/realm-emoji.ts';
import type { RealmInfo } from '../queries/realms.ts';

/** Brings this process's caches up to a change some process made. */
function apply(app: App, change: CacheChange): void {
  switch (change.cache) {
    case 'user':
      return app.auth.forget(change.userId);
    case 'sign-out':
      app.auth.forget(change.userId);
      for (const queue of [...app.queues.queuesOf(change.userId)]) app.queues.delete(queue);
      return;
    case 'realm':
      forgetMemberLists(app, change.realmId);
      forgetPresenceCopy(app, change.realmId);
      void app.realms
        .reload(change.realmId)
        .catch((err: unknown) => log.error('could not reload an organization', { realmId: change.realmId, error: String(err) }));
      return;
    case 'groups':
      return app.realms.forgetGroups(change.realmId);
    case 'subscribers':
      return app.channels.forgetSubscribers(change.channelIds);
    case 'channel-rows':
      return app.channels.forgetRows();
    case 'linkifiers':
      return forgetLinkifiers(app, change.realmId);
    case 'realm-emoji':
      return forgetRealmEmoji(app, change.realmId);
    case 'schedule':
      return app.scheduler.wake(new Date(change.at));
  }
}

/** A committed change: this process's caches now, the other processes' through the bus. */
export function cacheChanged(app: App, change: CacheChange): void {
  apply(app, change);
  app.bus.announce(change);
}

/** An organization's row or groups changed: reloaded here, and in every other process. */
export async function realmChanged(app: App, realmId: number): Promise<RealmInfo | undefined> {
  forgetMemberLists(app, realmId);
  forgetPresenceCopy(app, realmId);
  const realm = await app.realms.reload(realmId);
  app.bus.announce({ cache: 'realm', realmId });
  return realm;
}

/**
 * Caches that events themselves make stale (register's member lists, which every change to a user
 * reports in a `realm_user` event; the presence copies, which (de)activations and the
 * presence_enabled setting change): dropped as the events leave, so the next request here sees the
 * change, and again as they arrive, in every process, before any queue there gets them.
 */
export function eventsLeaving(app: App, envelopes: readonly EventEnvelope[]): void {
  for (const envelope of envelopes) {
    if (changesMemberLists(envelope.event)) forgetMemberLists(app, envelope.realmId);
    if (changesPresence(envelope.event)) forgetPresenceCopy(app, envelope.realmId);
  }
}

/** Applies the changes the other processes announce, and those the events carry. */
export function followCacheChanges(app: App): () => void {
  const unlisten = app.bus.listen({ changed: (change) => apply(app, change) });
  const unsubscribe = app.bus.subscribe((envelope) => eventsLeaving(app, [envelope]));
  return () => {
    unlisten();
    unsubscribe();
  };
}
