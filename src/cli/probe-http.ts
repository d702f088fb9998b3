/**
 * The one HTTP probe of `healthcheck` (`/health`) and `healthcheck --ready` (`/ready`): the `--url`
 * check and a bounded GET with node:http(s) (fetch refuses some ports, e.g. 6000 and 10080, by its
 * "bad port" list).
 */
import http from 'node:http';
import https from 'node:https';

/** `--url` as an http(s) URL, query and fragment dropped; anything else is refused. */
export function probeBase(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`--url must be an http(s) URL, got ${JSON.stringify(text)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--url must be an http(s) URL, got ${JSON.stringify(text)}`);
  url.search = '';
  url.hash = '';
  return url;
}

/** GET `url`; at most 64 KiB of the body is kept; no answer within `timeoutMs` → ETIMEDOUT. */
export function probeGet(url: URL, timeoutMs: number): Promise<{ status: number; body: string }> {
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
    req.on('timeout', () => {
      req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'ETIMEDOUT' }));
    });
    req.on('error', reject);
  });
}
