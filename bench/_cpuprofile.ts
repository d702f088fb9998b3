/**
 * A summary of V8 `.cpuprofile` files (as `node --cpu-prof` writes them, one per thread): self
 * time per function and per area (the package under node_modules, the directory under src/, Node's
 * internals, V8's pseudo-frames such as `(garbage collector)`), as shares of the sampled time.
 * `(idle)` is left out of the shares: it is time the thread had nothing to do.
 */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; hitCount?: number }[];
  samples?: number[];
  timeDeltas?: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileLine {
  what: string;
  ms: number;
  share: number;
}

export interface ProfileSummary {
  busy_ms: number;
  idle_ms: number;
  functions: ProfileLine[];
  areas: ProfileLine[];
}

/** The area a frame's URL belongs to. */
export function areaOf(functionName: string, url: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm !== null) return nm[1]!;
  // node:internal/crypto/sig → node:internal/crypto, node:_http_server → node:_http_server
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  const src = /\/(src|bench|test)\/([^/]+)\//.exec(url);
  if (src !== null) return `${src[1]!}/${src[2]!}`;
  const file = /\/(src|bench|test|bin)\/([^/]+)$/.exec(url);
  if (file !== null) return `${file[1]!}/${file[2]!}`;
  return url;
}

/**
 * Self time per node id, from the samples and their time deltas (µs), falling back to hit counts.
 * `afterUs` (µs since the profile's start) drops earlier samples: start-up, module loading.
 */
function selfTimes(p: CpuProfile, afterUs: number): Map<number, number> {
  const out = new Map<number, number>();
  if (p.samples !== undefined && p.timeDeltas !== undefined && p.samples.length === p.timeDeltas.length) {
    // timeDeltas[i] is the time before sample i; attribute it to the sample that follows it
    let at = 0;
    for (let i = 0; i < p.samples.length; i++) {
      at += p.timeDeltas[i]!;
      if (at < afterUs) continue;
      out.set(p.samples[i]!, (out.get(p.samples[i]!) ?? 0) + Math.max(0, p.timeDeltas[i]!));
    }
    return out;
  }
  const interval = p.nodes.reduce((a, n) => a + (n.hitCount ?? 0), 0);
  const perHit = interval === 0 ? 0 : (p.endTime - p.startTime) / interval;
  for (const n of p.nodes) out.set(n.id, (n.hitCount ?? 0) * perHit);
  return out;
}

/**
 * Summarise one or more profiles (e.g. every thread of a process) into the top `top` functions and
 * areas, counting only samples taken `afterUs` or later after the earliest profile's start (the
 * profiles of one process share its monotonic clock; a worker's starts later than the main one's),
 * or after `origin` (µs on that clock) when given: summaries of subsets of one process's threads
 * then cut at the same instant.
 */
export function summarizeProfiles(
  profiles: readonly CpuProfile[],
  top = 10,
  afterUs = 0,
  origin = Math.min(...profiles.map((p) => p.startTime)),
): ProfileSummary {
  const fn = new Map<string, number>();
  const area = new Map<string, number>();
  let idle = 0;
  let busy = 0;
  for (const p of profiles) {
    const self = selfTimes(p, afterUs - (p.startTime - origin));
    for (const n of p.nodes) {
      const us = self.get(n.id) ?? 0;
      if (us === 0) continue;
      const { functionName, url, lineNumber } = n.callFrame;
      if (functionName === '(idle)') {
        idle += us;
        continue;
      }
      busy += us;
      const short = url === '' ? '' : ` ${url.replace(/^.*\/(node_modules|src|bench|test)\//, '$1/')}:${lineNumber + 1}`;
      const key = `${functionName === '' ? '(anonymous)' : functionName}${short}`;
      fn.set(key, (fn.get(key) ?? 0) + us);
      const a = areaOf(functionName, url);
      area.set(a, (area.get(a) ?? 0) + us);
    }
  }
  const lines = (m: Map<string, number>): ProfileLine[] =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([what, us]) => ({ what, ms: Math.round(us / 1000), share: busy === 0 ? 0 : Number((us / busy).toFixed(3)) }));
  return { busy_ms: Math.round(busy / 1000), idle_ms: Math.round(idle / 1000), functions: lines(fn), areas: lines(area) };
}
