// A per-organization cache of something every rendered message reads (linkifiers, custom emoji):
// loaded once, dropped by the actions that change it after they commit (through
// cluster/cache-sync.ts, which tells the other processes of a cluster too).
import type { App } from '../app.ts';

export interface RealmCache<T> {
  get(app: App, realmId: number): Promise<T>;
  forget(app: App, realmId: number): void;
}

export function realmCache<T>(load: (app: App, realmId: number) => Promise<T>): RealmCache<T> {
  // Keyed by app: tests run several servers (with their own databases) in one process.
  const caches = new WeakMap<App, Map<number, Promise<T>>>();
  const cacheOf = (app: App) => {
    let cache = caches.get(app);
    if (!cache) caches.set(app, (cache = new Map()));
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
    forget(app, realmId) {
      cacheOf(app).delete(realmId);
    },
  };
}
