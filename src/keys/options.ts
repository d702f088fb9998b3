/** The flags of keys outside the process (SPEC §1.1): how the node waits for an ssh-agent or a PKCS#11 token. */
import { checkTable, int, time, type OptionValues } from '../config/option-table.ts';
import type { SignerSettings } from './external.ts';

export const SIGNER_OPTIONS = checkTable({
  signerStartTimeout: time(
    '--signer-start-timeout <duration>',
    'how long start-up retries (every 1 s) an agent or token key that is not there yet, then exits 1',
    'signers',
    's',
    [1, 3600],
    { default: 30 },
  ),
  signerTimeout: time(
    '--signer-timeout <duration>',
    'longest wait for one signature; 3 timeouts in a row make the signer unavailable (503 signer_unavailable) until it answers again',
    'signers',
    's',
    [1, 60],
    { default: 2 },
  ),
  signerMaxPending: int(
    '--signer-max-pending <n>',
    'requests that may wait for one signer; beyond, 503 overloaded',
    'signers',
    [1, 65_536],
    { default: 256 },
  ),
  pkcs11Sessions: int('--pkcs11-sessions <n>', 'logged-in sessions per PKCS#11 key (one operation each)', 'signers', [1, 64], {
    default: 4,
  }),
});

/** The signer settings of the node's configuration. */
export function signerConfig(v: OptionValues<typeof SIGNER_OPTIONS>): { signers: SignerSettings } {
  return {
    signers: {
      startTimeoutMs: v.signerStartTimeout * 1000,
      timeoutMs: v.signerTimeout * 1000,
      maxPending: v.signerMaxPending,
      pkcs11Sessions: v.pkcs11Sessions,
    },
  };
}
