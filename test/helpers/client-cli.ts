// The client subcommands alone, as `anchor-witness` registers them (src/cli/client-commands.ts),
// for child-process tests: the same code without loading the witness node (fastify, SQLite), so
// each process starts in a third of the time. The wiring into bin/anchor-witness.js is tested too.
import { addClientCommands } from '../../src/cli/client-commands.ts';
import { envProgram } from '../../src/cli/options.ts';

const program = envProgram('anchor-witness', 'AW_');
addClientCommands(program);
program.parseAsync(process.argv).catch((e: unknown) => {
  process.stderr.write(`anchor-witness: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
