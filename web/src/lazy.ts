// Parts of the client loaded the first time they are needed (esbuild splits them into chunks).
import { useEffect, useState } from 'preact/hooks';

/** The module's export once `wanted` first became true and it loaded; null until then. */
export function useLazy<T>(load: () => Promise<T>, wanted: boolean): T | null {
  const [loaded, setLoaded] = useState<{ value: T } | null>(null);
  useEffect(() => {
    if (wanted && !loaded)
      load().then(
        (value) => setLoaded({ value }),
        (err) => console.warn('loading a part of the client', err),
      );
  }, [wanted]);
  return loaded?.value ?? null;
}
