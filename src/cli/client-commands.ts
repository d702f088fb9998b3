/** The client subcommands of `anchor-witness` (docs/client.md): party, verify, monitor. */
import type { Command } from 'commander';
import { addMonitorCommand } from './client-monitor.ts';
import { addPartyCommands } from './client-party.ts';
import { addVerifyCommands } from './client-verify.ts';

export function addClientCommands(program: Command): void {
  addPartyCommands(program);
  addVerifyCommands(program);
  addMonitorCommand(program);
}
