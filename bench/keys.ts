/**
 * Keys outside the process (SPEC §1.1), in one run, for a key in a file, in an ssh-agent (Debian's
 * OpenSSH agent, started here) and on a PKCS#11 token (SoftHSM2):
 *   - the raw signature rate and p50/p99 of the signer at BENCH_CONCURRENCY concurrent requests;
 *   - anchor throughput: POST /v1/anchor, each a new seed, with the witness key (`--key`) of that kind;
 *   - cosign throughput: POST /add-checkpoint, BENCH_CONCURRENCY logs each growing by one leaf per
 *     request with a real consistency proof, with the cosign key (`--cosign-key`) of that kind
 *     (the witness key then stays a file).
 * In-process witnesses on loopback with fetch clients (the generator shares the event loop: compare
 * the rows, do not read them as the product's peak; bench/anchor.ts and bench/cosign.ts measure
 * that). Skips a kind whose tool is missing.
 *
 * BENCH_SECONDS (default 5) per phase; BENCH_CONCURRENCY (default 64).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { writeFileSync } from 'node:fs';
import { DEFAULT_QUOTA } from '../src/anchor/quota-window.ts';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem, generateEd25519 } from '../src/crypto/ed25519.ts';
import { encodeBase64 } from '../src/encoding/base64.ts';
import { writeNewKeyFile } from '../src/keys/keyfile.ts';
import { openSigner } from '../src/keys/open-signer.ts';
import { formatCheckpoint } from '../src/note/checkpoint.ts';
import { signNote, SIG_TYPE_ED25519 } from '../src/note/signed-note.ts';
import { ed25519NoteSigner, formatVkey } from '../src/note/vkey.ts';
import { hashLeaf } from '../src/tlog/hash.ts';
import { consistencyProof, memoryHashReader, treeRoot } from '../src/tlog/merkle.ts';
import { startWitness, type WitnessConfig } from '../src/witness/node.ts';
import { fill } from '../test/helpers/anchors.ts';
import { TestAgent, agentRef, opensshMissing, pkcs11Missing, pkcs11Ref, softhsmToken, tokenKey } from '../test/helpers/external-keys.ts';
import { keyTestParty } from '../test/helpers/key-party.ts';
import { percentile } from './_measure.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const party = keyTestParty(0x09, 10_000_000);
let seq = 0;
const body = (): string => party.submission(`bench-${seq++}`);

// Cosign load: one log per concurrent client, each request adds one leaf (prebuilt, real proofs).
const STEPS = Math.ceil((SECONDS * 5000) / CONCURRENCY) + 10;
const leaves = Array.from({ length: STEPS + 1 }, (_, i) => hashLeaf(Buffer.from(`leaf ${i}`)));
const read = memoryHashReader(leaves);
const proofs = Array.from({ length: STEPS + 1 }, (_, n) =>
  n <= 1
    ? ''
    : consistencyProof(n - 1, n, read)
        .map((h) => encodeBase64(h) + '\n')
        .join(''),
);
const roots = Array.from({ length: STEPS + 1 }, (_, n) => (n === 0 ? undefined : treeRoot(n, read)));
const logs = Array.from({ length: CONCURRENCY }, (_, i) => ({ origin: `bench.example/log${i}`, ...generateEd25519() }));
const cosignRequests = logs.map((log) => {
  const signer = ed25519NoteSigner(log.origin, log.privateKey);
  return Array.from({ length: STEPS }, (_, k) => {
    const n = k + 1;
    const note = signNote(formatCheckpoint({ origin: log.origin, size: n, rootHash: roots[n]!, extensions: [] }), [signer]);
    return `old ${n - 1}\n${proofs[n]}\n${note}`;
  });
});

async function loop(
  seconds: number,
  op: (worker: number) => Promise<boolean>,
): Promise<{ per_s: number; p50_ms: number; p99_ms: number; failed: number }> {
  const lat: number[] = [];
  let failed = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      while (performance.now() < end) {
        const t = performance.now();
        if (await op(worker)) lat.push(performance.now() - t);
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
const cosignKey = ed25519KeyFromSeed(fill(0x52));
const keyFile = join(dir, 'witness.pem');
const cosignFile = join(dir, 'cosign.pem');
writeNewKeyFile(keyFile, ed25519PrivateKeyToPem(key));
writeNewKeyFile(cosignFile, ed25519PrivateKeyToPem(cosignKey));
const registryFile = join(dir, 'registry.json');
writeFileSync(registryFile, JSON.stringify(party.registry));
const logsFile = join(dir, 'logs.json');
writeFileSync(
  logsFile,
  JSON.stringify({ logs: logs.map((l) => ({ origin: l.origin, keys: [formatVkey(l.origin, SIG_TYPE_ED25519, l.publicKey)] })) }),
);
/** Per kind: the witness key's and the cosign key's reference. */
const refs: Record<string, { witness: string; cosign: string }> = { file: { witness: keyFile, cosign: cosignFile } };
const skipped: Record<string, string> = {};
const agent = new TestAgent(join(dir, 'agent.sock'));
const sshGap = await opensshMissing();
if (sshGap === null) {
  await agent.start();
  refs.ssh_agent = {
    witness: agentRef(await agent.add(key, dir, 'witness'), agent.socket),
    cosign: agentRef(await agent.add(cosignKey, dir, 'cosign'), agent.socket),
  };
} else skipped.ssh_agent = sshGap;
const p11Gap = await pkcs11Missing();
if (p11Gap === null) {
  const tok = await softhsmToken(join(dir, 'hsm'), 'bench');
  process.env.SOFTHSM2_CONF = tok.conf;
  await tokenKey(tok, 'EC:edwards25519', 'witness', '01');
  await tokenKey(tok, 'EC:edwards25519', 'cosign', '02');
  refs.pkcs11 = { witness: pkcs11Ref(tok, 'witness'), cosign: pkcs11Ref(tok, 'cosign') };
} else skipped.pkcs11 = p11Gap;

const base = (kind: string, phase: string): WitnessConfig => ({
  host: '127.0.0.1',
  port: 0,
  dataDir: join(dir, `data-${kind}-${phase}`),
  keyFile,
  name: 'bench.test/w1',
  roles: ['anchor'],
  allowUnderivedSeeds: false,
  dev: false,
  quota: DEFAULT_QUOTA,
  registryFile,
  signers: { maxPending: 10_000 },
});

type Row = { per_s: number; p50_ms: number; p99_ms: number; failed: number };
const results: Record<string, { signatures: Row; anchors: Row; cosign: Row }> = {};
try {
  for (const [kind, ref] of Object.entries(refs)) {
    const signer = await openSigner(ref.witness, { algorithm: 'ed25519', key: kind, maxPending: 10_000, timeoutMs: 30_000 });
    let n = 0;
    const signatures = await loop(SECONDS, async () => {
      await signer.sign(new TextEncoder().encode(`cosign message ${n++}`));
      return true;
    });
    await signer.close();

    const w = await startWitness({ ...base(kind, 'anchor'), keyFile: ref.witness }, pino({ level: 'silent' }));
    let anchors: Row;
    try {
      anchors = await loop(SECONDS, async () => {
        const r = await fetch(`${w.url}/v1/anchor`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body() });
        await r.arrayBuffer();
        return r.status === 200;
      });
    } finally {
      await w.close();
    }

    const c = await startWitness(
      { ...base(kind, 'cosign'), roles: ['cosign'], cosignKeyFiles: [ref.cosign], logsFile },
      pino({ level: 'silent' }),
    );
    const step = new Array<number>(CONCURRENCY).fill(0);
    let cosign: Row;
    try {
      cosign = await loop(SECONDS, async (worker) => {
        const reqs = cosignRequests[worker]!;
        if (step[worker]! >= reqs.length) {
          await new Promise((r) => setTimeout(r, 5));
          return false; // out of prebuilt steps (counted as failed: raise the STEPS factor)
        }
        const r = await fetch(`${c.url}/add-checkpoint`, { method: 'POST', body: reqs[step[worker]!]! });
        await r.arrayBuffer();
        if (r.status !== 200) return false;
        step[worker]!++;
        return true;
      });
    } finally {
      await c.close();
    }
    results[kind] = { signatures, anchors, cosign };
  }
} finally {
  await agent.stop();
  rmSync(dir, { recursive: true, force: true });
}

const file = results.file;
const report: Record<string, unknown> = {};
for (const [k, r] of Object.entries(results)) {
  const vsFile = (row: Row, ref: Row | undefined) =>
    ref === undefined
      ? row
      : { ...row, ratio_to_file: +(row.per_s / ref.per_s).toFixed(3), added_p99_ms: +(row.p99_ms - ref.p99_ms).toFixed(2) };
  report[k] = {
    signatures: r.signatures,
    anchors: vsFile(r.anchors, file?.anchors),
    cosign: vsFile(r.cosign, file?.cosign),
  };
}
process.stdout.write(
  JSON.stringify({ bench: 'keys', node: process.version, seconds: SECONDS, concurrency: CONCURRENCY, results: report, skipped }, null, 2) +
    '\n',
);
