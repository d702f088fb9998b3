#!/usr/bin/env node
// Installed entry point: runs the TypeScript source with Node's type stripping (Node >= 22.18 / 24).
import { tokenBridgeProgram } from '../src/cli/token-bridge.ts';

tokenBridgeProgram()
  .parseAsync(process.argv)
  .catch((e) => {
    process.stderr.write(`token-bridge: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
