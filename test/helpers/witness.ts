/** Start an in-process witness on 127.0.0.1:0 for tests, with a registry file and keys in a temp dir. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem } from '../../src/crypto/ed25519.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { startWitness, type RunningWitness, type WitnessConfig } from '../../src/witness/node.ts';
import { DEFAULT_QUOTA } from '../../src/anchor/quota-window.ts';
import { fill } from './anchors.ts';

export const WITNESS_NAME = 'witness.test/w1';
export const WITNESS_ORIGIN = 'witness.test/w1/anchors';

export async function startTestWitness(dir: string, registry: unknown, over: Partial<WitnessConfig> = {}): Promise<RunningWitness> {
  const keyFile = join(dir, 'witness.pem');
  try {
    writeNewKeyFile(keyFile, ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(0x01))));
  } catch (e) {
    if ((e as { code?: string }).code !== 'key_exists') throw e;
  }
  const registryFile = join(dir, 'registry.json');
  writeFileSync(registryFile, JSON.stringify(registry));
  return startWitness(
    {
      host: '127.0.0.1',
      port: 0,
      dataDir: join(dir, 'data'),
      keyFile,
      name: WITNESS_NAME,
      roles: ['anchor'],
      registryFile,
      allowUnderivedSeeds: false,
      dev: false,
      quota: DEFAULT_QUOTA,
      ...over,
    },
    pino({ level: 'silent' }),
  );
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<{ status: number; body: unknown; headers: Headers; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)),
  });
  const text = await res.text();
  const parsed = parseOrUndefined(text);
  return { status: res.status, body: parsed, headers: res.headers, text };
}

export async function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown; headers: Headers; bytes: Uint8Array; text: string }> {
  let res: Response;
  try {
    res = await fetch(url, { headers });
  } catch (e) {
    // A GET is idempotent: sent again once when a pooled keep-alive connection turns out closed by
    // the server (tests restart nodes on the same port; seen once under load as "other side closed").
    if ((e as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET') throw e;
    res = await fetch(url, { headers });
  }
  const bytes = new Uint8Array(await res.arrayBuffer());
  const text = Buffer.from(bytes).toString('utf8');
  const parsed = parseOrUndefined(text);
  return { status: res.status, body: parsed, headers: res.headers, bytes, text };
}
