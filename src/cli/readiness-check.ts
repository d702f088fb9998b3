/**
 * `anchor-witness healthcheck --ready --url URL` (SPEC §1.1): GET `<base>/ready`; ready when the
 * answer is 200 `{"ready":true}`; otherwise the problem's detail (e.g. `signer witness:
 * agent_unreachable`) is printed. For load balancers and orchestrators' readiness probes; a
 * container's HEALTHCHECK stays plain `healthcheck` (liveness), so a signer outage never restarts it.
 */
import { probeBase, probeGet } from './probe-http.ts';

export interface ReadyResult {
  healthy: boolean;
  line: string;
}

/** The /ready URL for a base URL or a /health, /ready or /live URL. */
export function readyUrl(text: string): URL {
  const url = probeBase(text);
  url.pathname = `${url.pathname.replace(/\/(health|ready|live)\/?$/, '').replace(/\/+$/, '')}/ready`;
  return url;
}

export async function checkReady(text: string, timeoutMs: number): Promise<ReadyResult> {
  const url = readyUrl(text);
  const shown = url.toString();
  let res: { status: number; body: string };
  try {
    res = await probeGet(url, timeoutMs);
  } catch (e) {
    const err = e as Error & { code?: string };
    return { healthy: false, line: `not ready ${shown}: ${err.code === 'ETIMEDOUT' ? err.message : (err.code ?? err.message)}` };
  }
  let doc: Record<string, unknown> = {};
  try {
    doc = JSON.parse(res.body) as Record<string, unknown>;
  } catch {
    // reported below
  }
  if (res.status === 200 && doc.ready === true) return { healthy: true, line: `ready ${shown}` };
  const why = typeof doc.detail === 'string' ? doc.detail : `HTTP ${res.status}`;
  return { healthy: false, line: `not ready ${shown}: ${why}` };
}
