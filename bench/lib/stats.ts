export interface Percentiles {
  n: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentiles of the samples (milliseconds in, milliseconds out). */
export function percentiles(samples: ArrayLike<number>): Percentiles | undefined {
  const n = samples.length;
  if (n === 0) return undefined;
  const sorted = Float64Array.from(samples).sort();
  const at = (q: number) => sorted[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))]!;
  let sum = 0;
  for (const v of sorted) sum += v;
  return { n, mean: sum / n, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted[n - 1]! };
}
