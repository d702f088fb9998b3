/** Shared helpers for benchmarks: time-bounded rate measurement and percentiles. */
/**
 * `ops_per_s`/`us_per_op` are wall-clock figures; `cpu_us_per_op` is this process's CPU time per
 * operation (user + system), which stays meaningful when other jobs share the cores.
 */
export function rate(
  fn: () => void,
  seconds = 1,
  warmup = 200,
): { ops_per_s: number; us_per_op: number; cpu_us_per_op: number; ops: number } {
  for (let i = 0; i < warmup; i++) fn();
  const end = performance.now() + seconds * 1000;
  let ops = 0;
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  while (performance.now() < end) {
    for (let i = 0; i < 50; i++) fn();
    ops += 50;
  }
  const elapsed = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return {
    ops_per_s: Math.round(ops / elapsed),
    us_per_op: Number(((elapsed / ops) * 1e6).toFixed(2)),
    cpu_us_per_op: Number(((cpu.user + cpu.system) / ops).toFixed(2)),
    ops,
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
