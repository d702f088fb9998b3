#!/usr/bin/env node
// Installed entry point: runs the TypeScript source with Node's type stripping (Node >= 22.18 / 24).
import { anchorWitnessProgram } from '../src/cli/anchor-witness.ts';

anchorWitnessProgram()
  .parseAsync(process.argv)
  .catch((e) => {
    process.stderr.write(`anchor-witness: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
