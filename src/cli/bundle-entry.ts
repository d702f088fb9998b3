#!/usr/bin/env node
/**
 * Entry point of the bundle `dist/anchor-witness.mjs` (npm run build:bundle): the anchor-witness command
 * line, as bin/anchor-witness.js runs it from the sources. src/release/bundle.ts defines
 * `import.meta.main` as false, so anchor-witness.ts's own main block is dropped.
 */
import { anchorWitnessProgram } from './anchor-witness.ts';

anchorWitnessProgram()
  .parseAsync(process.argv)
  .catch((e: unknown) => {
    process.stderr.write(`anchor-witness: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
