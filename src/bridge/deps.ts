/**
 * What the bridge's HTTP layer needs from the rest of the bridge: the token service, the signing
 * keys and the issuer. Its own module so the routes, metrics and status page share it without a cycle.
 */
import type { StoreHealth } from '../store/health.ts';
import type { IssuerInfo } from './issuer.ts';
import type { KeyEntry } from './keyring.ts';
import type { KelRootsStatus } from './roots-kel.ts';
import type { TokenService } from './service.ts';
import type { PublicJwk, SigningAlg, SigningKey } from './signing.ts';
import type { Signer } from '../keys/signer.ts';

/** What the routes need from the signing keys (SigningKeyring implements it). */
export interface KeySource {
  readonly active: SigningKey;
  readonly entries: readonly KeyEntry[];
  jwks(): { keys: PublicJwk[] };
  algs(): SigningAlg[];
  /** SPEC §1.1: the active key's token signer, when it is on a PKCS#11 token (`/ready`, `/health` `signers`). */
  signers?(): readonly Signer[];
}

export interface BridgeDeps {
  service: TokenService;
  keys: KeySource;
  issuer: IssuerInfo;
  /** The nonce store's health: `/health` names its kind and says `degraded` while it is down. */
  store?: StoreHealth;
  /** With `--kel-source` (SPEC §7.1): the KEL roots' status for `/health` and `bridge_kel_roots`. */
  kel?: { status(): KelRootsStatus; shadowedTotal: number; sourceConflictsTotal: number };
  /** With `--require-finalized-anchor` (SPEC §7.2): `POST /anchor-floor` is served, with this per-IP bucket. */
  anchorFloorRate?: { rps: number; burst: number };
}
