#!/usr/bin/env node
/**
 * Entry point of the bundle `dist/anchor-witness.mjs` (npm run build:bundle): the anchor-witness command
 * line, as bin/anchor-witness.js runs it from the sources. src/release/bundle.ts defines
 * `import.meta.main` as false, so anchor-witness.ts's own main block is dropped. The bundle is one
 * file, so the KEL worker thread (src/registry/kel-worker.ts) and the KERI witness role's
 * verification workers (src/kel-witness/offload-worker.ts) run this same file: in such a thread
 * the worker module's own start-up line runs and the command line does not.
 */
import { isMainThread } from 'node:worker_threads';
import { anchorWitnessProgram } from './anchor-witness.ts';
import '../registry/kel-worker.ts';
import '../kel-witness/offload-worker.ts';

if (isMainThread)
  anchorWitnessProgram()
    .parseAsync(process.argv)
    .catch((e: unknown) => {
      process.stderr.write(`anchor-witness: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    });
