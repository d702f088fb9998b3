#!/usr/bin/env node
// The `anchor-witness` command. In a checkout it runs the TypeScript sources (Node type stripping).
// `npm run build` compiles this file to lib/bin/anchor-witness.js, which imports the compiled
// lib/src/cli/anchor-witness.js: that is the package's `bin` (docs/build.md, "The npm package").
// The Node version is checked first (bin/node-check.js); the program is imported only after it.
import { requireNode } from './node-check.js';

requireNode('anchor-witness', import.meta.url);
const { anchorWitnessProgram } = await import('../src/cli/anchor-witness.ts');

anchorWitnessProgram()
  .parseAsync(process.argv)
  .catch((e) => {
    process.stderr.write(`anchor-witness: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
