/** Runs fn over items with at most `limit` in flight; results keep the input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>, onEach?: () => void): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
      onEach?.();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Polls `done` every `everyMs` until it holds or `timeoutMs` passes; returns whether it held. */
export async function waitFor(done: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 5): Promise<boolean> {
  const end = performance.now() + timeoutMs;
  while (!(await done())) {
    if (performance.now() >= end) return false;
    await sleep(everyMs);
  }
  return true;
}

/** `items` dealt round robin into `parts` lists (clients over nodes, work over workers). */
export function spread<T>(items: readonly T[], parts: number): T[][] {
  return Array.from({ length: parts }, (_, part) => items.filter((_, i) => i % parts === part));
}

/** `total` split into `parts` whole shares that differ by one at most, the larger first. */
export function evenShares(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));
}
