/**
 * Several real witnesses on loopback for the client tests: each with its own key, name, data dir
 * and registry file; stop/start on the same port (the same URL) keeping the data dir, and
 * copy/restore of a stopped witness's data dir (an operator restoring an old backup).
 */
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { startWitness, type RunningWitness, type WitnessConfig } from '../../src/witness/node.ts';
import { makeWitnessSet, type WitnessSet, type WitnessSetMember } from '../../src/verify/witness-set.ts';
import { fill } from './anchors.ts';

export class TestWitness {
  readonly name: string;
  readonly dir: string;
  readonly publicKey: Uint8Array;
  private readonly config: WitnessConfig;
  private running: RunningWitness | undefined;
  private port = 0;

  constructor(baseDir: string, index: number, registry: unknown, over: Partial<WitnessConfig>) {
    this.name = `w${index}.test`;
    this.dir = join(baseDir, `w${index}`);
    mkdirSync(this.dir, { recursive: true });
    const key = ed25519KeyFromSeed(fill(0x40 + index));
    this.publicKey = ed25519PublicKeyBytes(key);
    const keyFile = join(this.dir, 'witness.pem');
    writeNewKeyFile(keyFile, ed25519PrivateKeyToPem(key));
    const registryFile = join(this.dir, 'registry.json');
    writeFileSync(registryFile, JSON.stringify(registry));
    this.config = {
      host: '127.0.0.1',
      port: 0,
      dataDir: join(this.dir, 'data'),
      keyFile,
      name: this.name,
      roles: ['anchor'],
      registryFile,
      allowUnderivedSeeds: false,
      dev: false,
      quota: { anchorsPerMinute: 10_000, newSeedsPerDay: 10_000 },
      ...over,
    };
  }

  get origin(): string {
    return `${this.name}/anchors`;
  }

  get url(): string {
    if (this.running === undefined) return `http://127.0.0.1:${this.port}`;
    return this.running.url;
  }

  get member(): WitnessSetMember {
    return { name: this.name, curve: 'ed25519', publicKey: this.publicKey, logOrigin: this.origin, url: this.url };
  }

  get pin(): { name: string; publicKey: Uint8Array; logOrigin: string } {
    return { name: this.name, publicKey: this.publicKey, logOrigin: this.origin };
  }

  async start(): Promise<void> {
    if (this.running !== undefined) return;
    try {
      this.running = await startWitness({ ...this.config, port: this.port }, pino({ level: 'silent' }));
    } catch (e) {
      if (this.port === 0 || (e as { code?: string }).code !== 'EADDRINUSE') throw e;
      this.running = await startWitness({ ...this.config, port: 0 }, pino({ level: 'silent' }));
    }
    this.port = Number(new URL(this.running.url).port);
  }

  async stop(): Promise<void> {
    const r = this.running;
    this.running = undefined;
    await r?.close();
  }

  /** Copy the (stopped) witness's data dir. */
  backup(to: string): void {
    if (this.running !== undefined) throw new Error('stop the witness before copying its data dir');
    cpSync(this.config.dataDir, to, { recursive: true });
  }

  /** Put an old copy back (the operator error monitors must catch). */
  restore(from: string): void {
    if (this.running !== undefined) throw new Error('stop the witness before restoring its data dir');
    rmSync(this.config.dataDir, { recursive: true, force: true });
    cpSync(from, this.config.dataDir, { recursive: true });
  }
}

export async function startWitnesses(
  baseDir: string,
  n: number,
  registry: unknown,
  over: Partial<WitnessConfig> = {},
  first = 1,
): Promise<TestWitness[]> {
  const ws = Array.from({ length: n }, (_, i) => new TestWitness(baseDir, first + i, registry, over));
  await Promise.all(ws.map((w) => w.start()));
  return ws;
}

export function setOf(ws: readonly TestWitness[], threshold: number): WitnessSet {
  return makeWitnessSet(
    threshold,
    ws.map((w) => w.member),
  );
}
