/** The flags of the KERI witness role (SPEC §3.6): its key and who it witnesses. */
import { checkTable, list, text, type OptionValues } from '../config/option-table.ts';

export const KEL_WITNESS_OPTIONS = checkTable({
  kelKey: text(
    '--kel-key <file>',
    'KERI witness key (Ed25519 PKCS#8 PEM, mode 0600; a key of its own), required with role kel (docs/protocol.md §3.6.1)',
    'kelWitness',
  ),
  kelAllow: list(
    '--kel-allow <who>',
    'who role kel witnesses: PREFIX, delegates-of:PREFIX or any (repeatable; required with role kel unless --dev)',
    'kelWitness',
  ),
});

/** The role's settings of the node's configuration. */
export function kelWitnessConfig(v: OptionValues<typeof KEL_WITNESS_OPTIONS>): { kelKeyFile?: string; kelAllow?: string[] } {
  return {
    ...(v.kelKey === undefined ? {} : { kelKeyFile: v.kelKey }),
    ...(v.kelAllow === undefined ? {} : { kelAllow: v.kelAllow }),
  };
}
