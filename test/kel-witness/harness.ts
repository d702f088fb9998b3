/**
 * Test harness of the KERI witness role: an in-process node with role kel on a loopback port, and a
 * keripy-style controller built with signify-ts 0.3.0 (a third-party KERI implementation) that
 * speaks keripy's httping conventions (body = the message, CESR-ATTACHMENT = its attachments).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { ready, Salter, incept, interact, rotate, Diger, MtrDex, type Serder, type Signer } from 'signify-ts';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem } from '../../src/crypto/ed25519.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { startWitness, type RunningWitness, type WitnessConfig } from '../../src/witness/node.ts';
import { DEFAULT_QUOTA } from '../../src/anchor/quota-window.ts';
import type { KelWitnessLimits } from '../../src/kel-witness/service.ts';
import { fill } from '../helpers/anchors.ts';
import { tempDir } from '../helpers/tmp.ts';

export async function startKelNode(dir: string, over: Partial<WitnessConfig> = {}, seed = 0x07): Promise<RunningWitness> {
  mkdirSync(dir, { recursive: true });
  const keyFile = join(dir, 'witness.pem');
  const kelKeyFile = join(dir, `kel-${seed}.pem`);
  for (const [file, s] of [
    [keyFile, 0x01],
    [kelKeyFile, seed],
  ] as const) {
    try {
      writeNewKeyFile(file, ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(s))));
    } catch (e) {
      if ((e as { code?: string }).code !== 'key_exists') throw e;
    }
  }
  return startWitness(
    {
      host: '127.0.0.1',
      port: 0,
      dataDir: join(dir, 'data'),
      keyFile,
      name: 'kel.test/w1',
      roles: ['kel'],
      kelKeyFile,
      kelAllow: ['any'],
      allowUnderivedSeeds: false,
      dev: false,
      quota: DEFAULT_QUOTA,
      ...over,
    },
    pino({ level: 'silent' }),
  );
}

/**
 * A role-kel node in a temporary directory with these role bounds, closed and removed after the
 * test; with its `B…` prefix.
 */
export async function startKelNodeFor(
  t: { after: (fn: () => Promise<void>) => void },
  kelLimits: Partial<KelWitnessLimits>,
): Promise<{ node: RunningWitness; w: string }> {
  const tmp = tempDir();
  const node = await startKelNode(join(tmp.dir, 'n'), { kelLimits });
  t.after(async () => {
    await node.close();
    tmp.cleanup();
  });
  return { node, w: node.kel!.identity.prefix };
}

export interface Sent {
  status: number;
  text: string;
  headers: Headers;
}

/** keripy httping: POST the message with its attachments in the CESR-ATTACHMENT header. */
export async function send(url: string, path: '/receipts' | '/', raw: string, attachment: string): Promise<Sent> {
  const res = await fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/cesr+json', 'cesr-attachment': attachment, 'cesr-destination': 'ignored' },
    body: raw,
  });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

const utf8 = new TextEncoder();

/** A single-key controller (self-addressing prefix) whose keys come from a signify-ts Salter. */
export class Controller {
  readonly salter: Salter;
  private n = 0;
  signer!: Signer;
  next!: Signer;
  pre = '';
  said = '';
  sn = 0;
  wits: string[] = [];

  private constructor(tag: number) {
    this.salter = new Salter({ raw: new Uint8Array(16).fill(tag) });
  }

  static async create(tag: number): Promise<Controller> {
    await ready();
    const c = new Controller(tag);
    c.signer = c.key();
    c.next = c.key();
    return c;
  }

  private key(): Signer {
    return this.salter.signer(MtrDex.Ed25519_Seed, true, `k${this.n++}`, null, true);
  }

  digest(s: Signer): string {
    return new Diger({ code: MtrDex.Blake3_256 }, s.verfer.qb64b).qb64;
  }

  /** `-AAB` + the indexed signature of `signer` (index 0). */
  sign(serder: Serder, signer = this.signer): string {
    return `-AAB${signer.sign(utf8.encode(serder.raw), 0).qb64}`;
  }

  /** An `icp`, or a `dip` delegated by `delpre`. */
  incept(wits: string[], toad = wits.length > 0 ? 1 : 0, delpre?: string): Serder {
    const icp = incept({
      ...(delpre === undefined ? {} : { delpre }),
      keys: [this.signer.verfer.qb64],
      ndigs: [this.digest(this.next)],
      wits,
      toad,
      isith: '1',
      nsith: '1',
      code: MtrDex.Blake3_256,
    });
    this.pre = icp.pre;
    this.said = icp.said;
    this.sn = 0;
    this.wits = wits;
    return icp;
  }

  interact(data: object[] = []): Serder {
    const ixn = interact({ pre: this.pre, dig: this.said, sn: this.sn + 1, data, version: undefined, kind: undefined });
    this.said = ixn.said;
    this.sn += 1;
    return ixn;
  }

  /** A rotation to the committed next key; `intive` false writes bt as hex text. */
  rotate(o: { adds?: string[]; cuts?: string[]; toad?: number; intive?: boolean } = {}): Serder {
    const newNext = this.key();
    const rot = rotate({
      pre: this.pre,
      keys: [this.next.verfer.qb64],
      dig: this.said,
      sn: this.sn + 1,
      isith: '1',
      ndigs: [this.digest(newNext)],
      nsith: '1',
      wits: this.wits,
      adds: o.adds ?? [],
      cuts: o.cuts ?? [],
      ...(o.toad === undefined ? {} : { toad: o.toad }),
      intive: o.intive ?? false,
    });
    this.signer = this.next;
    this.next = newNext;
    this.said = rot.said;
    this.sn += 1;
    this.wits = [...this.wits.filter((w) => !(o.cuts ?? []).includes(w)), ...(o.adds ?? [])];
    return rot;
  }
}

/** A problem (or JSON) body's members the tests read. */
export const problemOf = (text: string): { code?: string; reason?: string; d?: string } =>
  JSON.parse(text) as { code?: string; reason?: string; d?: string };
