// A per-organization cache of something every rendered message reads (linkifiers, custom emoji)
// or every register (the member lists): loaded once, dropped by the changes to it after they
// commit (through cluster/cache-sync.ts, which tells the other processes of a cluster too).
import type { App } from '../app.ts';

export interface RealmCache<T> {
  get(app: App, realmId: number): Promise<T>;
  /** The entry if it is loaded or loading, without loading it. */
  peek(app: App, realmId: number): Promise<T> | undefined;
  forget(app: App, realmId: number): void;
}

/**
 * `serverOf`: what names the server in the App the cache is handed (App itself by default; tests
 * run several servers, with their own databases, in one process). One that stays the same across
 * App's per-request copies (register's: src/api/events.ts) lets those share the cache.
 */
export function realmCache<T>(load: (app: App, realmId: number) => Promise<T>, serverOf: (app: App) => object = (app) => app): RealmCache<T> {
  const caches = new WeakMap<object, Map<number, Promise<T>>>();
  const cacheOf = (app: App) => {
    const server = serverOf(app);
    let cache = caches.get(server);
    if (!cache) caches.set(server, (cache = new Map()));
    return cache;
  };
  return {
    get(app, realmId) {
      const cache = cacheOf(app);
      let entry = cache.get(realmId);
      if (!entry) {
        const loading = load(app, realmId);
        entry = loading;
        cache.set(realmId, loading);
        // A failed load must not stick; a newer entry (after an invalidation) stays.
        loading.catch(() => cache.get(realmId) === loading && cache.delete(realmId));
      }
      return entry;
    },
    peek(app, realmId) {
      return cacheOf(app).get(realmId);
    },
    forget(app, realmId) {
      cacheOf(app).delete(realmId);
    },
  };
}
