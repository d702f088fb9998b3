/**
 * The anchoring party the external-key tests (test/keys/*) and bench/keys.ts share: one Ed25519
 * party `did:keri:EAlice` under `did:keri:ERoot` with limits high enough for load, its registry
 * document, and a fresh anchor submission per scope (index 1, a new derived seed each time, so
 * every submission is a new anchor that needs the witness key's cosignature).
 */
import { encodeAnchor } from '../../src/anchor/codec.ts';
import { deriveSeedId } from '../../src/anchor/seed.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { stringifyJson } from '../../src/encoding/json.ts';
import { edParty, fill, signAnchor } from './anchors.ts';

export interface KeyTestParty {
  /** The registry document (`--registry` file content). */
  readonly registry: { parties: unknown[] };
  /** A POST /v1/anchor body for a new seed named by `scope`. */
  readonly submission: (scope: string) => string;
}

/** The party made from `seedByte` (tests use different bytes so their parties differ). */
export function keyTestParty(seedByte: number, perMinute = 100_000): KeyTestParty {
  const alice = edParty(seedByte);
  return {
    registry: {
      parties: [
        {
          id: 'did:keri:EAlice',
          keys: [{ curve: 'ed25519', public_key: encodeHex(alice.publicKey) }],
          delegator: 'did:keri:ERoot',
          limits: { anchors_per_minute: perMinute, new_seeds_per_day: perMinute },
        },
      ],
    },
    submission: (scope: string): string => {
      const anchor = signAnchor(alice, {
        seedId: deriveSeedId('did:keri:ERoot', 'did:keri:EAlice', scope),
        index: 1,
        head: fill(1),
        cumulative: 10n,
        timestamp: 1_700_000_001,
      });
      return stringifyJson({ anchor: encodeAnchor(anchor), party: { agent: 'did:keri:EAlice', root: 'did:keri:ERoot', scope } });
    },
  };
}
