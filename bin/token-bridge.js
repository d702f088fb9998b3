#!/usr/bin/env node
// The `token-bridge` command. In a checkout it runs the TypeScript sources (Node type stripping).
// `npm run build` compiles this file to lib/bin/token-bridge.js, which imports the compiled
// lib/src/cli/token-bridge.js: that is the package's `bin` (docs/build.md, "The npm package").
// The Node version is checked first (bin/node-check.js); the program is imported only after it.
import { requireNode } from './node-check.js';

requireNode('token-bridge', import.meta.url);
const { tokenBridgeProgram } = await import('../src/cli/token-bridge.ts');

tokenBridgeProgram()
  .parseAsync(process.argv)
  .catch((e) => {
    process.stderr.write(`token-bridge: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
