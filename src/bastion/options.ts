/** The bastion backend's flags (SPEC §5.6): the bastions, the backend key and their roots. */
import { checkTable, list, negation, text, type OptionValues } from '../config/option-table.ts';

export const BASTION_OPTIONS = checkTable({
  bastion: list(
    '--bastion <host:port>',
    'also serve the cosign routes through this C2SP https-bastion (repeatable, comma-separated)',
    'bastion',
  ),
  bastionKey: text(
    '--bastion-key <file>',
    'bastion backend key (Ed25519 PKCS#8 PEM, mode 0600; its own key), required with --bastion',
    'bastion',
  ),
  bastionCa: text('--bastion-ca <file>', "PEM roots for the bastions' certificates (replace the default roots)", 'bastion'),
  noListen: negation('--no-listen', 'serve only through --bastion (needs --roles cosign alone): no listener', 'bastion'),
});

export function bastionConfig(v: OptionValues<typeof BASTION_OPTIONS>): {
  bastions: string[] | undefined;
  bastionKeyFile: string | undefined;
  bastionCaFile: string | undefined;
  noListen: boolean;
} {
  return { bastions: v.bastion, bastionKeyFile: v.bastionKey, bastionCaFile: v.bastionCa, noListen: v.noListen };
}
