/**
 * Keys outside the process (SPEC §1.1): the same anchor load against a witness whose key is a file,
 * an ssh-agent key (Debian's OpenSSH agent, started here) and a PKCS#11 key (SoftHSM2), in one run;
 * plus the raw signature rate and p99 of each signer at 64 concurrent requests (what a cosign
 * role's add-checkpoint costs in signing: one signature per request). In-process witnesses on
 * loopback with fetch clients (the generator shares the event loop: compare the rows, do not read
 * them as the product's peak; bench/anchor.ts measures that). Skips a kind whose tool is missing.
 *
 * BENCH_SECONDS (default 5) per phase; BENCH_CONCURRENCY (default 64).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { encodeAnchor } from '../src/anchor/codec.ts';
import { DEFAULT_QUOTA } from '../src/anchor/quota-window.ts';
import { deriveSeedId } from '../src/anchor/seed.ts';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem } from '../src/crypto/ed25519.ts';
import { encodeHex } from '../src/encoding/hex.ts';
import { stringifyJson } from '../src/encoding/json.ts';
import { writeNewKeyFile } from '../src/keys/keyfile.ts';
import { openSigner } from '../src/keys/open-signer.ts';
import { pkcs11Available } from '../src/keys/pkcs11-module.ts';
import { startWitness } from '../src/witness/node.ts';
import { edParty, fill, signAnchor } from '../test/helpers/anchors.ts';
import { TestAgent, agentRef, opensshMissing, pkcs11Ref, softhsmMissing, softhsmToken, tokenKey } from '../test/helpers/external-keys.ts';
import { percentile } from './_measure.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const alice = edParty(0x09);
const registry = {
  parties: [
    {
      id: 'did:keri:EAlice',
      keys: [{ curve: 'ed25519', public_key: encodeHex(alice.publicKey) }],
      delegator: 'did:keri:ERoot',
      limits: { anchors_per_minute: 10_000_000, new_seeds_per_day: 10_000_000 },
    },
  ],
};
let seq = 0;
function body(): string {
  const scope = `bench-${seq++}`;
  const anchor = signAnchor(alice, {
    seedId: deriveSeedId('did:keri:ERoot', 'did:keri:EAlice', scope),
    index: 1,
    head: fill(1),
    cumulative: 10n,
    timestamp: 1_700_000_001,
  });
  return stringifyJson({ anchor: encodeAnchor(anchor), party: { agent: 'did:keri:EAlice', root: 'did:keri:ERoot', scope } });
}

async function loop(
  seconds: number,
  op: () => Promise<boolean>,
): Promise<{ per_s: number; p50_ms: number; p99_ms: number; failed: number }> {
  const lat: number[] = [];
  let failed = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        if (await op()) lat.push(performance.now() - t);
        else failed++;
      }
    }),
  );
  lat.sort((a, b) => a - b);
  return {
    per_s: Math.round(lat.length / seconds),
    p50_ms: +percentile(lat, 50).toFixed(2),
    p99_ms: +percentile(lat, 99).toFixed(2),
    failed,
  };
}

const dir = mkdtempSync(join(tmpdir(), 'aw-bench-keys-'));
const key = ed25519KeyFromSeed(fill(0x51));
const keyFile = join(dir, 'witness.pem');
writeNewKeyFile(keyFile, ed25519PrivateKeyToPem(key));
const refs: Record<string, string> = { file: keyFile };
const skipped: Record<string, string> = {};
const agent = new TestAgent(join(dir, 'agent.sock'));
const sshGap = await opensshMissing();
if (sshGap === null) {
  await agent.start();
  refs.ssh_agent = agentRef(await agent.add(key, dir, 'witness'), agent.socket);
} else skipped.ssh_agent = sshGap;
const p11Gap = (await softhsmMissing()) ?? (pkcs11Available() ? null : 'pkcs11js did not build');
if (p11Gap === null) {
  const tok = await softhsmToken(join(dir, 'hsm'), 'bench');
  process.env.SOFTHSM2_CONF = tok.conf;
  await tokenKey(tok, 'EC:edwards25519', 'witness', '01');
  refs.pkcs11 = pkcs11Ref(tok, 'witness');
} else skipped.pkcs11 = p11Gap;

const results: Record<string, unknown> = {};
try {
  for (const [kind, ref] of Object.entries(refs)) {
    const signer = await openSigner(ref, { algorithm: 'ed25519', key: kind, maxPending: 10_000, timeoutMs: 30_000 });
    let n = 0;
    const signing = await loop(SECONDS, async () => {
      await signer.sign(new TextEncoder().encode(`cosign message ${n++}`));
      return true;
    });
    await signer.close();
    const w = await startWitness(
      {
        host: '127.0.0.1',
        port: 0,
        dataDir: join(dir, `data-${kind}`),
        keyFile: ref,
        name: 'bench.test/w1',
        roles: ['anchor'],
        allowUnderivedSeeds: false,
        dev: false,
        quota: DEFAULT_QUOTA,
        registryFile: await writeRegistry(),
        signers: { maxPending: 10_000 },
      },
      pino({ level: 'silent' }),
    );
    try {
      const anchors = await loop(SECONDS, async () => {
        const r = await fetch(`${w.url}/v1/anchor`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body() });
        await r.arrayBuffer();
        return r.status === 200;
      });
      results[kind] = {
        signatures: { signatures_per_s: signing.per_s, p50_ms: signing.p50_ms, p99_ms: signing.p99_ms },
        anchors: { anchors_per_s: anchors.per_s, p50_ms: anchors.p50_ms, p99_ms: anchors.p99_ms, failed: anchors.failed },
      };
    } finally {
      await w.close();
    }
  }
} finally {
  await agent.stop();
  rmSync(dir, { recursive: true, force: true });
}

async function writeRegistry(): Promise<string> {
  const { writeFileSync } = await import('node:fs');
  const f = join(dir, 'registry.json');
  writeFileSync(f, JSON.stringify(registry));
  return f;
}

const file = results.file as { anchors: { anchors_per_s: number; p99_ms: number } } | undefined;
for (const k of Object.keys(results)) {
  const r = results[k] as { anchors: { anchors_per_s: number; p99_ms: number; ratio_to_file?: number; added_p99_ms?: number } };
  if (file !== undefined) {
    r.anchors.ratio_to_file = +(r.anchors.anchors_per_s / file.anchors.anchors_per_s).toFixed(3);
    r.anchors.added_p99_ms = +(r.anchors.p99_ms - file.anchors.p99_ms).toFixed(2);
  }
}
process.stdout.write(
  JSON.stringify({ bench: 'keys', node: process.version, seconds: SECONDS, concurrency: CONCURRENCY, results, skipped }, null, 2) + '\n',
);
