/** The client subcommands of `anchor-witness` (docs/client.md): party, verify, monitor. */
import type { Command } from 'commander';
import { useNodeCrypto } from '../client/node-crypto.ts';
import { addMonitorCommand } from './client-monitor.ts';
import { addPartyCommands } from './client-party.ts';
import { addVerifyCommands } from './client-verify.ts';

export function addClientCommands(program: Command): void {
  // The verifier core runs on node:crypto in the CLI (same verdicts as WebCrypto; src/verify/crypto.ts).
  useNodeCrypto();
  addPartyCommands(program);
  addVerifyCommands(program);
  addMonitorCommand(program);
}
