/** The flags of keys outside the process (SPEC §1.1): how the node waits for an ssh-agent or a PKCS#11 token. */
import { checkTable, flag, int, text, time, type OptionValues } from '../config/option-table.ts';
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

/** Witness-key rotation with an overlap (SPEC §1.2, docs/keys.md "Rotating the witness key"). */
export const ROTATION_OPTIONS = checkTable({
  nextKey: text(
    '--next-key <keyref>',
    'the next witness key (a file, ssh-agent:… or pkcs11:…): announces a rotation, then signs beside --key until the completion',
    'essentials',
  ),
  abandonNext: flag(
    '--abandon-next',
    'with a new --next-key while another is recorded: log an abort entry for the recorded one (retired forever) and announce the new one',
    'essentials',
  ),
  keyOverlapMin: time(
    '--key-overlap-min <duration>',
    'shortest overlap: a start with --key = the next key (completion) earlier than this after the announcement is refused (docs recommend 30d)',
    'essentials',
    's',
    [0, 10 * 365 * 86_400],
    { default: 86_400 },
  ),
});

/** The rotation settings of the node's configuration. */
export function rotationConfig(v: OptionValues<typeof ROTATION_OPTIONS>): {
  nextKeyFile: string | undefined;
  abandonNext: boolean;
  keyOverlapMinSeconds: number;
} {
  return { nextKeyFile: v.nextKey, abandonNext: v.abandonNext, keyOverlapMinSeconds: v.keyOverlapMin };
}
