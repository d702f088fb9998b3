#!/usr/bin/env node
/** `anchor-witness` command line (SPEC §9). */
import { Option, type Command } from 'commander';
import { generateEd25519 } from '../crypto/ed25519.ts';
import { generateMlDsa44 } from '../crypto/ml-dsa.ts';
import { signingKeyToPem, type SigningKey } from '../crypto/signing-key.ts';
import { encodeHex } from '../encoding/hex.ts';
import { writeNewKeyFile } from '../keys/keyfile.ts';
import { validateName } from '../note/checkpoint.ts';
import { SIG_TYPE_COSIGNATURE_V1, SIG_TYPE_SUBTREE_V1 } from '../note/signed-note.ts';
import { formatVkey } from '../note/vkey.ts';
import { envProgram } from './options.ts';
import { addVersionOption } from './version-option.ts';
import { addServeCommand } from './serve-witness.ts';
import { addClientCommands } from './client-commands.ts';
import { addBuildCommands } from './build-commands.ts';
import { addHealthcheckCommand } from './healthcheck.ts';
import { addKelCommands } from './kel-commands.ts';
import { addCosignCommands } from './cosign-commands.ts';
import { addKelWitnessCommands } from './kel-witness-commands.ts';
import { addKeyCommands, keygenOpenssh } from './key-commands.ts';
import { ensureThreadPoolSize } from '../keys/pkcs11-module.ts';

export function anchorWitnessProgram(): Command {
  const program = addVersionOption(envProgram('anchor-witness', 'AW_')).description(
    'Witness node for append-only anchor chains, with a C2SP tlog-witness cosign role',
  );

  program
    .command('keygen')
    .description(
      'write a new key file (PKCS#8 PEM, mode 0600) and print its public key hex, or with --name the cosign vkey (docs/protocol.md §5.1)',
    )
    .addOption(new Option('--type <type>', 'key type').choices(['ed25519', 'ml-dsa-44']).default('ed25519'))
    .addOption(
      new Option('--format <format>', 'file format: pem (PKCS#8) or openssh (openssh-key-v1, Ed25519, for ssh-add; prints the fingerprint)')
        .choices(['pem', 'openssh'])
        .default('pem'),
    )
    .option('--name <name>', 'witness name: print the cosign vkey under it (type 0x04 Ed25519, 0x06 ML-DSA-44) instead of the hex key')
    .requiredOption('--out <file>', 'where to write the key (refuses to overwrite)')
    .action((opts: { out: string; type: 'ed25519' | 'ml-dsa-44'; name?: string; format: 'pem' | 'openssh' }) => {
      if (opts.name !== undefined) validateName(opts.name);
      if (opts.format === 'openssh') {
        if (opts.type !== 'ed25519') throw new Error('--format openssh: only Ed25519 keys (ssh-agent holds no ML-DSA-44 keys)');
        process.stdout.write(keygenOpenssh(opts.out, opts.name ?? 'anchor-witness') + '\n');
        return;
      }
      const key: SigningKey =
        opts.type === 'ml-dsa-44' ? { algorithm: 'ml-dsa-44', ...generateMlDsa44() } : { algorithm: 'ed25519', ...generateEd25519() };
      writeNewKeyFile(opts.out, signingKeyToPem(key));
      const type = key.algorithm === 'ml-dsa-44' ? SIG_TYPE_SUBTREE_V1 : SIG_TYPE_COSIGNATURE_V1;
      process.stdout.write((opts.name === undefined ? encodeHex(key.publicKey) : formatVkey(opts.name, type, key.publicKey)) + '\n');
    });
  addServeCommand(program);
  addClientCommands(program);
  addBuildCommands(program);
  addHealthcheckCommand(program);
  addKelCommands(program);
  addCosignCommands(program);
  addKelWitnessCommands(program);
  addKeyCommands(program);
  return program;
}

if (import.meta.main) {
  // PKCS#11 signs on the libuv thread pool (SPEC §1.1): 4 + --pkcs11-sessions threads, set before
  // the first asynchronous I/O creates the pool (an operator's larger UV_THREADPOOL_SIZE is kept).
  ensureThreadPoolSize(4);
  anchorWitnessProgram()
    .parseAsync(process.argv)
    .catch((e: unknown) => {
      process.stderr.write(`anchor-witness: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(1);
    });
}
