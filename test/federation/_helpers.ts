/** Shared fixtures for the federation tests: openssl-made certificates and an in-process CLI runner. */
import { execFileSync } from 'node:child_process';
import { spawn } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { envProgram } from '../../src/cli/options.ts';
import { addFederationCommands } from '../../src/cli/federation-commands.ts';
import { selfSignedCertificate } from '../helpers/tls.ts';

export const BIN = join(import.meta.dirname, '../../bin/token-bridge.js');

const openssl = (args: string[]): string => execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });

/** `openssl x509 -fingerprint -sha1 -noout` of a PEM file, lowercased and without colons. */
export function opensslSha1(pemFile: string): string {
  const out = openssl(['x509', '-in', pemFile, '-noout', '-fingerprint', '-sha1']);
  const m = /=([0-9A-Fa-f:]+)\s*$/.exec(out);
  if (m === null) throw new Error(`unexpected openssl output: ${out}`);
  return m[1]!.replace(/:/g, '').toLowerCase();
}

export interface Pki {
  dir: string;
  /** root CA (self-signed) */
  rootPem: string;
  /** intermediate CA, issued by the root */
  interPem: string;
  /** leaf for `host` (SAN DNS:host, IP:127.0.0.1), issued by the intermediate */
  leafPem: string;
  leafKey: string;
  /** a self-signed certificate for `host` (SAN DNS:host, IP:127.0.0.1) and its key */
  selfPem: string;
  selfKey: string;
}

/** Make a small PKI with the openssl CLI: root → intermediate → leaf, plus one self-signed cert. */
export function makePki(dir: string, host: string): Pki {
  const p = (n: string): string => join(dir, n);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  writeFileSync(p('ca.ext'), 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n');
  writeFileSync(p('leaf.ext'), `subjectAltName=DNS:${host},IP:127.0.0.1\n`);
  openssl([
    'req',
    '-x509',
    ...ec,
    '-keyout',
    p('root.key'),
    '-out',
    p('root.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=Test Root CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
  ]);
  openssl(['req', ...ec, '-keyout', p('inter.key'), '-out', p('inter.csr'), '-subj', '/CN=Test Intermediate CA']);
  openssl([
    'x509',
    '-req',
    '-in',
    p('inter.csr'),
    '-CA',
    p('root.pem'),
    '-CAkey',
    p('root.key'),
    '-CAcreateserial',
    '-out',
    p('inter.pem'),
    '-days',
    '2',
    '-extfile',
    p('ca.ext'),
  ]);
  openssl(['req', ...ec, '-keyout', p('leaf.key'), '-out', p('leaf.csr'), '-subj', `/CN=${host}`]);
  openssl([
    'x509',
    '-req',
    '-in',
    p('leaf.csr'),
    '-CA',
    p('inter.pem'),
    '-CAkey',
    p('inter.key'),
    '-CAcreateserial',
    '-out',
    p('leaf.pem'),
    '-days',
    '2',
    '-extfile',
    p('leaf.ext'),
  ]);
  selfSignedCertificate({ keyFile: p('self.key'), certFile: p('self.pem'), host, subjectAltName: `DNS:${host},IP:127.0.0.1` });
  for (const k of ['root.key', 'inter.key', 'leaf.key']) chmodSync(p(k), 0o600);
  return {
    dir,
    rootPem: p('root.pem'),
    interPem: p('inter.pem'),
    leafPem: p('leaf.pem'),
    leafKey: p('leaf.key'),
    selfPem: p('self.pem'),
    selfKey: p('self.key'),
  };
}

export const readText = (f: string): string => readFileSync(f, 'utf8');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  error?: Error;
}

/** Run the federation commands in-process (as `token-bridge <args>`), collecting output and the exit status. */
export async function runCli(args: string[], stdin = ''): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  let code = 0;
  const program = envProgram('token-bridge', 'TB_');
  program.exitOverride();
  program.configureOutput({
    writeOut: (t) => (stdout += t),
    writeErr: (t) => (stderr += t),
  });
  addFederationCommands(program, {
    out: (t) => (stdout += t),
    err: (t) => (stderr += t),
    setExitCode: (c) => (code = c),
    readStdin: () => Promise.resolve(stdin),
  });
  try {
    await program.parseAsync(['node', 'token-bridge', ...args]);
  } catch (e) {
    return { code: 1, stdout, stderr: stderr + (e as Error).message, error: e as Error };
  }
  return { code, stdout, stderr };
}

/** Run bin/token-bridge.js as a child process. */
export function runBin(args: string[], opts: { env?: Record<string, string>; stdin?: string } = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...opts.env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code) => {
      resolve({ code: code ?? -1, stdout, stderr });
    });
    p.stdin.end(opts.stdin ?? '');
  });
}
