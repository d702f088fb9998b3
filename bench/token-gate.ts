/**
 * bench/token's freshness-gate comparison (SPEC §7.2, issue 30): tokens/s for one 3-link chain
 * rooted at a did:keri:B… prefix, the gate off and on, measured back to back in the same process
 * (TokenService.exchange, no HTTP), with the same in-memory nonce store kind. The gated requests
 * carry one finalized bundle (threshold 2 of 3, receipts from three in-process witnesses over
 * loopback, made before the clock starts) and their inclusion proof; each request has a fresh nonce.
 * The gate's cost per token is G2 (set SAID), G5 (inclusion), G6 (floor read), G7 (one party
 * signature) and G8 (2 receipts: cosignature + checkpoint proof each) on top of the ungated path.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildTokenRequest } from '../src/bridge/client.ts';
import { attestationChainDigest, buildChainState } from '../src/bridge/chain-state.ts';
import { decodeAttestation } from '../src/bridge/attestation.ts';
import { DEFAULT_ANCHOR_SCOPE } from '../src/bridge/freshness-gate.ts';
import { GateVerdictCache } from '../src/bridge/gate-verdicts.ts';
import type { SigningKeyring } from '../src/bridge/signing-keyring.ts';
import { MemoryNonceStore } from '../src/bridge/nonces.ts';
import { keriNonTransferablePrefix } from '../src/bridge/root.ts';
import { TokenService } from '../src/bridge/service.ts';
import { encodeAnchor } from '../src/anchor/codec.ts';
import { deriveSeedId } from '../src/anchor/seed.ts';
import { decodeHex, encodeHex } from '../src/encoding/hex.ts';
import { encodeFinalizedBundle } from '../src/verify/finalize.ts';
import { parseReceipt, type Receipt } from '../src/verify/receipt.ts';
import { witnessSetSaid, type WitnessSet } from '../src/verify/witness-set.ts';
import { edParty, signAnchor } from '../test/helpers/anchors.ts';
import { setOf, startWitnesses } from '../test/helpers/client-witnesses.ts';
import { post as postJson } from '../test/helpers/witness.ts';
import { chain, seedKey, type Key } from '../test/bridge/_helpers.ts';

const ISSUER = 'https://bridge.example';
const AUD = 'sts.amazonaws.com';

export interface Timed {
  tokens_per_s: number;
  ms_per_token: number;
  cpu_ms_per_token: number;
  ratio_to_ceiling: number;
  tokens: number;
}

/** The gate's bench fixture: three witnesses, one 2-of-3 bundle, request and service factories. */
export type GateMode = 'off' | 'full' | 'cached';

export interface GateFixture {
  set: WitnessSet;
  said: string;
  /** The finalized bundle (parsed JSON), as a request carries it. */
  bundle: Record<string, unknown>;
  /** Fresh requests (each its own nonce), with or without `finalized_anchor`. */
  requests: (n: number, gated: boolean) => unknown[];
  /** 'off': no gate; 'full': every bundle verified in full; 'cached': with the gate's verdict cache (as `serve` runs it). */
  service: (gate: GateMode) => TokenService;
  links: number;
  receipts: number;
  stop: () => Promise<void>;
}

export async function startGateFixture(keyring: SigningKeyring): Promise<GateFixture> {
  const o = { keyring };
  const dir = mkdtempSync(join(tmpdir(), 'tb-bench-gate-'));
  const party = edParty(0x71);
  const did = `did:keri:${keriNonTransferablePrefix(party.publicKey)}`;
  const root: Key = { key: party.key, pub: party.publicKey, hex: encodeHex(party.publicKey), did };
  const devices = [seedKey(0x72), seedKey(0x73), seedKey(0x74)];
  const now = Math.floor(Date.now() / 1000);
  const links = chain(
    root,
    devices.map((device, i) => ({
      device,
      ...(i === 0 ? { issuer: did } : {}),
      capabilities: ['deploy:staging', 'sign_commit', `link_${i}`].slice(0, 3 - i),
      expiresAt: now + 86400,
      timestamp: now - 60,
    })),
  );
  const state = buildChainState([attestationChainDigest(links.map((a, i) => decodeAttestation(a, `/${i}`)))]);
  const ws = await startWitnesses(join(dir, 'w'), 3, {
    parties: [{ id: did, keys: [{ curve: 'ed25519', public_key: encodeHex(party.publicKey) }] }],
  });
  const stop = async (): Promise<void> => {
    await Promise.all(ws.map((w) => w.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const set = setOf(ws, 2);
    const said = await witnessSetSaid(set);
    const anchor = signAnchor(party, {
      seedId: deriveSeedId(did, did, DEFAULT_ANCHOR_SCOPE),
      index: 0,
      head: decodeHex(state.head, 32),
      cumulative: 1n,
      timestamp: now,
      witnessSet: { said, threshold: 2 },
    });
    const receipts: Receipt[] = [];
    for (const w of ws.slice(0, 2)) {
      const r = await postJson(`${w.url}/v1/anchor`, {
        anchor: encodeAnchor(anchor),
        party: { agent: did, root: did, scope: DEFAULT_ANCHOR_SCOPE },
      });
      if (r.status !== 200) throw new Error(`witness ${w.name}: ${r.status} ${r.text}`);
      receipts.push(parseReceipt(r.body));
    }
    const bundle = JSON.parse(
      JSON.stringify(await encodeFinalizedBundle({ anchor, witnessSet: set, receipts }), (_k, x: unknown) =>
        typeof x === 'bigint' ? Number(x) : x,
      ),
    ) as unknown;
    const proof = state.chains[0]!;
    const leaf = devices[2]!.key;
    const requests = (n: number, gated: boolean): unknown[] =>
      Array.from(
        { length: n },
        () =>
          JSON.parse(
            JSON.stringify(
              buildTokenRequest({
                chain: links,
                rootPublicKey: root.hex,
                audience: AUD,
                issuer: ISSUER,
                deviceKey: leaf,
                ...(gated
                  ? {
                      finalizedAnchor: {
                        bundle,
                        proof: { leaf_index: proof.leaf_index, tree_size: proof.tree_size, hashes: proof.hashes },
                      },
                    }
                  : {}),
              }),
            ),
          ) as unknown,
      );
    const service = (mode: GateMode): TokenService =>
      new TokenService({
        policy: {
          issuer: ISSUER,
          audiences: [AUD],
          defaultTtl: 900,
          maxTtl: 3600,
          proofOfPossession: true,
          awsSessionTags: false,
          startedAt: Date.now() - 600_000,
        },
        trustedRoots: () => undefined,
        signingKey: () => o.keyring.active,
        nonces: new MemoryNonceStore(1_000_000),
        ...(mode === 'off'
          ? {}
          : {
              gate: {
                sets: [{ set, said }],
                freshnessSeconds: 3600,
                scope: DEFAULT_ANCHOR_SCOPE,
                ...(mode === 'cached' ? { verdicts: new GateVerdictCache() } : {}),
              },
            }),
      });
    return {
      set,
      said,
      bundle: bundle as Record<string, unknown>,
      requests,
      service,
      links: links.length,
      receipts: receipts.length,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

export async function measureGate(o: {
  keyring: SigningKeyring;
  /** Requests built per measured run (more than the run can use). */
  poolSize: number;
  timed: (name: string, pool: unknown[], one: (body: unknown) => Promise<void>) => Promise<Timed>;
}): Promise<Record<string, unknown>> {
  const fx = await startGateFixture(o.keyring);
  const { requests, service } = fx;
  try {
    const off = service('off');
    const full = service('full');
    const cached = service('cached');
    // Each request must mint: a refusal would measure the error path.
    await off.exchange(requests(1, false)[0]);
    for (const s of [full, cached]) {
      const probe = await s.exchange(requests(1, true)[0]);
      if (probe.response.access_token === '') throw new Error('gated exchange minted no token');
    }
    const poolSize = o.poolSize;
    const rounds: { off: Timed; on_full: Timed; on_cached: Timed }[] = [];
    // Interleaved (off, full, cached) twice so drift on a shared machine hits every side.
    for (let i = 0; i < 2; i++) {
      const a = await o.timed('gate_off', requests(poolSize, false), async (b) => {
        await off.exchange(b);
      });
      const b = await o.timed('gate_on_full', requests(poolSize, true), async (b2) => {
        await full.exchange(b2);
      });
      const c = await o.timed('gate_on_cached', requests(poolSize, true), async (b3) => {
        await cached.exchange(b3);
      });
      rounds.push({ off: a, on_full: b, on_cached: c });
    }
    const mean = (f: (r: (typeof rounds)[number]) => Timed): number => rounds.reduce((m, r) => m + f(r).tokens_per_s, 0) / rounds.length;
    const cpu = (f: (r: (typeof rounds)[number]) => Timed): number =>
      Number((rounds.reduce((m, r) => m + f(r).cpu_ms_per_token, 0) / rounds.length).toFixed(3));
    const offRate = mean((r) => r.off);
    const fullRate = mean((r) => r.on_full);
    const cachedRate = mean((r) => r.on_cached);
    const cpuOff = cpu((r) => r.off);
    const cpuFull = cpu((r) => r.on_full);
    const cpuCached = cpu((r) => r.on_cached);
    return {
      chain_links: fx.links,
      witnesses: 3,
      threshold: 2,
      receipts: fx.receipts,
      rounds,
      gate_off_tokens_per_s: Math.round(offRate),
      gate_on_full_tokens_per_s: Math.round(fullRate),
      gate_on_cached_tokens_per_s: Math.round(cachedRate),
      full_over_off: Number((fullRate / offRate).toFixed(2)),
      cached_over_off: Number((cachedRate / offRate).toFixed(2)),
      gate_full_cost_ms_per_token: Number((1000 / fullRate - 1000 / offRate).toFixed(3)),
      gate_cached_cost_ms_per_token: Number((1000 / cachedRate - 1000 / offRate).toFixed(3)),
      cpu_ms_per_token: { off: cpuOff, on_full: cpuFull, on_cached: cpuCached },
      cpu_full_over_off: Number((cpuFull / cpuOff).toFixed(2)),
      cpu_cached_over_off: Number((cpuCached / cpuOff).toFixed(2)),
    };
  } finally {
    await fx.stop();
  }
}
