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
import type { SigningKeyring } from '../src/bridge/signing-keyring.ts';
import { MemoryNonceStore } from '../src/bridge/nonces.ts';
import { keriNonTransferablePrefix } from '../src/bridge/root.ts';
import { TokenService } from '../src/bridge/service.ts';
import { encodeAnchor } from '../src/anchor/codec.ts';
import { deriveSeedId } from '../src/anchor/seed.ts';
import { decodeHex, encodeHex } from '../src/encoding/hex.ts';
import { encodeFinalizedBundle } from '../src/verify/finalize.ts';
import { parseReceipt, type Receipt } from '../src/verify/receipt.ts';
import { witnessSetSaid } from '../src/verify/witness-set.ts';
import { edParty, signAnchor } from '../test/helpers/anchors.ts';
import { setOf, startWitnesses } from '../test/helpers/client-witnesses.ts';
import { post as postJson } from '../test/helpers/witness.ts';
import { chain, seedKey, type Key } from '../test/bridge/_helpers.ts';

const ISSUER = 'https://bridge.example';
const AUD = 'sts.amazonaws.com';

export interface Timed {
  tokens_per_s: number;
  ms_per_token: number;
  ratio_to_ceiling: number;
  tokens: number;
}

export async function measureGate(o: {
  keyring: SigningKeyring;
  /** Requests built per measured run (more than the run can use). */
  poolSize: number;
  timed: (name: string, pool: unknown[], one: (body: unknown) => Promise<void>) => Promise<Timed>;
}): Promise<Record<string, unknown>> {
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
    const service = (gated: boolean): TokenService =>
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
        ...(gated ? { gate: { sets: [{ set, said }], freshnessSeconds: 3600, scope: DEFAULT_ANCHOR_SCOPE } } : {}),
      });
    const off = service(false);
    const on = service(true);
    // Each request must mint: a refusal would measure the error path.
    await off.exchange(requests(1, false)[0]);
    const probe = await on.exchange(requests(1, true)[0]);
    if (probe.response.access_token === '') throw new Error('gated exchange minted no token');
    const poolSize = o.poolSize;
    const rounds: { off: Timed; on: Timed }[] = [];
    // Alternate off/on twice so drift on a shared machine hits both sides.
    for (let i = 0; i < 2; i++) {
      const a = await o.timed('gate_off', requests(poolSize, false), async (b) => {
        await off.exchange(b);
      });
      const b = await o.timed('gate_on', requests(poolSize, true), async (b2) => {
        await on.exchange(b2);
      });
      rounds.push({ off: a, on: b });
    }
    const offRate = rounds.reduce((m, r) => m + r.off.tokens_per_s, 0) / rounds.length;
    const onRate = rounds.reduce((m, r) => m + r.on.tokens_per_s, 0) / rounds.length;
    return {
      chain_links: links.length,
      witnesses: 3,
      threshold: 2,
      receipts: receipts.length,
      rounds,
      gate_off_tokens_per_s: Math.round(offRate),
      gate_on_tokens_per_s: Math.round(onRate),
      on_over_off: Number((onRate / offRate).toFixed(2)),
      gate_cost_ms_per_token: Number((1000 / onRate - 1000 / offRate).toFixed(3)),
    };
  } finally {
    await Promise.all(ws.map((w) => w.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
}
