// Objects built key by key, typed by their keys (Object.fromEntries knows only `string` keys).

/** One entry per key, its value computed from the key. */
export function recordOf<K extends string, V>(keys: readonly K[], value: (key: K) => V): Record<K, V> {
  const out: Partial<Record<K, V>> = {};
  for (const key of keys) out[key] = value(key);
  // Every key of `keys` was set above.
  return out as Record<K, V>;
}
