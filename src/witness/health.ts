/**
 * The `/health` body (SPEC §6; schema in schemas.ts): the node's identity and its log, the store's
 * health, and the parts' typed fragments (cosign vkeys, bastion connections, log witnesses). The
 * status page renders the same body.
 */
import type { Static } from 'typebox';
import type { BastionHealthFragment } from '../bastion/part.ts';
import type { CosignHealthFragment } from '../cosign/part.ts';
import type { KelHealthFragment } from '../kel-witness/part.ts';
import type { SignerStatus } from '../keys/signer.ts';
import type { LogWitnessHealthFragment } from '../log-witness/part.ts';
import type { TransparencyLog } from '../log/log.ts';
import { isStoreUnavailable } from '../store/errors.ts';
import type { StoreHealth } from '../store/health.ts';
import type { Health } from './schemas.ts';

export type WitnessHealthBody = Static<typeof Health>;

export interface HealthInfo {
  name: string;
  roles: string[];
  version: string;
  origin: string;
  witnessKeyHex: string;
  /** The next witness key during a rotation overlap (SPEC §1.2). */
  witnessNextKeyHex?: string | undefined;
  logVkey: string;
  /** The cosign part's fragment (without the cosign role: no cosign vkey). */
  cosign?: (() => CosignHealthFragment) | undefined;
  /** The bastion part's fragment (with --bastion, SPEC §5.6). */
  bastions?: (() => BastionHealthFragment) | undefined;
  /** The log-witness part's fragment (with --log-witnesses, SPEC §4.1). */
  logWitnesses?: (() => LogWitnessHealthFragment) | undefined;
  /** The KERI witness part's fragment (role kel, SPEC §3.6.9). */
  kel?: (() => Promise<KelHealthFragment>) | undefined;
  /** Keys outside the process (SPEC §1.1): listed, and `degraded` while one is unavailable. */
  signers?: (() => SignerStatus[]) | undefined;
}

export async function healthBody(log: TransparencyLog, h: HealthInfo, storeHealth: StoreHealth | undefined): Promise<WitnessHealthBody> {
  // The log size from the store; while the store is down, 0 and `status` "degraded".
  let size = 0;
  try {
    size = (await log.checkpoint())?.size ?? 0;
  } catch (e) {
    if (!isStoreUnavailable(e) || storeHealth === undefined) throw e;
    storeHealth.failed(e);
  }
  const store = storeHealth?.snapshot();
  const cosign = h.cosign?.();
  const kel = await h.kel?.();
  const signers = h.signers?.() ?? [];
  return {
    status: store?.state === 'down' || signers.some((s) => s.state !== 'ok') ? 'degraded' : 'ok',
    ...(store === undefined ? {} : { store }),
    ...(signers.length === 0 ? {} : { signers }),
    witness_name: h.name,
    roles: h.roles,
    version: h.version,
    log: { origin: h.origin, size },
    keys: {
      witness: h.witnessKeyHex,
      ...(h.witnessNextKeyHex === undefined ? {} : { witness_next: h.witnessNextKeyHex }),
      log_vkey: h.logVkey,
      cosign_vkey: cosign?.cosignVkey ?? null,
      ...(kel === undefined ? {} : { kel_prefix: kel.prefix }),
    },
    cosign_vkeys: [...(cosign?.cosignVkeys ?? [])],
    ...h.bastions?.(),
    ...h.logWitnesses?.(),
    ...(kel === undefined ? {} : { kel }),
  };
}
