// Splits the test files into parts of about equal time: the longest files first, each to the part
// with the least time so far. A file with no recorded time counts as the median one.

/** The files of part `spec` ("K/N", K from 1), in name order. */
export function shardOf(files: string[], spec: string, seconds: Record<string, number>): string[] {
  const match = /^(\d+)\/(\d+)$/.exec(spec);
  const [part, parts] = match ? [Number(match[1]), Number(match[2])] : [0, 0];
  if (!(parts >= 1 && part >= 1 && part <= parts)) throw new Error(`--shard wants K/N with 1 <= K <= N, not ${spec}`);
  const known = files
    .map((f) => seconds[f])
    .filter((s) => s !== undefined)
    .sort((a, b) => a - b);
  const median = known.length ? known[Math.floor(known.length / 2)] : 1;
  const weight = (f: string) => seconds[f] ?? median;
  const loads = new Array<number>(parts).fill(0);
  const mine: string[] = [];
  for (const file of [...files].sort((a, b) => weight(b) - weight(a) || a.localeCompare(b))) {
    const lightest = loads.indexOf(Math.min(...loads));
    loads[lightest] += weight(file);
    if (lightest === part - 1) mine.push(file);
  }
  return mine.sort();
}
