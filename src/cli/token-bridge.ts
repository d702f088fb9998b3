#!/usr/bin/env node
/** `token-bridge` command line (SPEC §9). The subcommands arrive with the token-bridge issue. */
import type { Command } from 'commander';
import { envProgram } from './options.ts';
import { VERSION } from '../version.ts';

export function tokenBridgeProgram(): Command {
  return envProgram('token-bridge', 'TB_')
    .description('OIDC provider that exchanges attestation chains for JWTs, and the federation tooling')
    .version(VERSION);
}

if (import.meta.main) {
  tokenBridgeProgram()
    .parseAsync(process.argv)
    .catch((e: unknown) => {
      process.stderr.write(`token-bridge: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    });
}
