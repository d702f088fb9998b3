#!/usr/bin/env node
/** `anchor-witness` command line (SPEC §9). */
import type { Command } from 'commander';
import { generateEd25519, ed25519PrivateKeyToPem } from '../crypto/ed25519.ts';
import { encodeHex } from '../encoding/hex.ts';
import { writeNewKeyFile } from '../keys/keyfile.ts';
import { envProgram } from './options.ts';
import { VERSION } from '../version.ts';
import { addServeCommand } from './serve-witness.ts';
import { addClientCommands } from './client-commands.ts';
import { addBuildCommands } from './build-commands.ts';
import { addHealthcheckCommand } from './healthcheck.ts';
import { addKelCommands } from './kel-commands.ts';

export function anchorWitnessProgram(): Command {
  const program = envProgram('anchor-witness', 'AW_')
    .description('Witness node for append-only anchor chains, with a C2SP tlog-witness cosign role')
    .version(VERSION);

  program
    .command('keygen')
    .description('write a new Ed25519 key file (PKCS#8 PEM, mode 0600) and print its public key hex')
    .requiredOption('--out <file>', 'where to write the key (refuses to overwrite)')
    .action((opts: { out: string }) => {
      const { privateKey, publicKey } = generateEd25519();
      writeNewKeyFile(opts.out, ed25519PrivateKeyToPem(privateKey));
      process.stdout.write(encodeHex(publicKey) + '\n');
    });
  addServeCommand(program);
  addClientCommands(program);
  addBuildCommands(program);
  addHealthcheckCommand(program);
  addKelCommands(program);
  return program;
}

if (import.meta.main) {
  anchorWitnessProgram()
    .parseAsync(process.argv)
    .catch((e: unknown) => {
      process.stderr.write(`anchor-witness: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    });
}
