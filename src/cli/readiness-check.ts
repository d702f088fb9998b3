/**
 * `anchor-witness healthcheck --ready --url URL` (SPEC §1.1): GET `<base>/ready`; ready when the
 * answer is 200 `{"ready":true}`; otherwise the problem's detail (e.g. `signer witness:
 * agent_unreachable`) is printed. For load balancers and orchestrators' readiness probes; a
 * container's HEALTHCHECK stays plain `healthcheck` (liveness), so a signer outage never restarts it.
 */
import http from 'node:http';
import https from 'node:https';

export interface ReadyResult {
  healthy: boolean;
  line: string;
}

function get(url: URL, timeoutMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? https : http).get(
      url,
      { headers: { accept: 'application/json' }, timeout: timeoutMs },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          if (body.length < 65_536) body += c;
        });
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
  });
}

/** The /ready URL for a base URL or a /health, /ready or /live URL. */
export function readyUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`--url must be an http(s) URL, got ${JSON.stringify(text)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--url must be an http(s) URL, got ${JSON.stringify(text)}`);
  url.pathname = `${url.pathname.replace(/\/(health|ready|live)\/?$/, '').replace(/\/+$/, '')}/ready`;
  url.search = '';
  url.hash = '';
  return url;
}

export async function checkReady(text: string, timeoutMs: number): Promise<ReadyResult> {
  const url = readyUrl(text);
  const shown = url.toString();
  let res: { status: number; body: string };
  try {
    res = await get(url, timeoutMs);
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
