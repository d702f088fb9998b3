// Test helpers for the cosign role: deterministic keys, a synthetic log whose checkpoints and
// consistency proofs we can produce, and the role mounted on the shared server over loopback HTTP.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KeyObject } from 'node:crypto';
import { Registry } from 'prom-client';
import { ed25519KeyFromSeed, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { formatCheckpoint } from '../../src/note/checkpoint.ts';
import { signNote } from '../../src/note/signed-note.ts';
import { ed25519NoteSigner, formatVkey } from '../../src/note/vkey.ts';
import { SIG_TYPE_ED25519 } from '../../src/note/signed-note.ts';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { hashLeaf } from '../../src/tlog/hash.ts';
import { consistencyProof, memoryHashReader, treeRoot } from '../../src/tlog/merkle.ts';
import type { HashReader } from '../../src/tlog/merkle.ts';
import { createServer, registerMetricsRoute } from '../../src/server/server.ts';
import { closeGracefully, listen } from '../../src/server/lifecycle.ts';
import type { App, ServerOptions } from '../../src/server/options.ts';
import { createCosignRole } from '../../src/cosign/role.ts';
import type { CosignRole, CosignRoleOptions } from '../../src/cosign/role.ts';
import { formatAddCheckpointRequest } from '../../src/note/tlog-witness.ts';

/** Bytes start, start+1, …, start+n−1. */
export function seq(start: number, n = 32): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => start + i);
}

// research/c2sp-and-peers.md Appendix C: log seed 40..5f, witness seed 00..1f.
export const LOG_NAME = 'example.com/log';
export const WITNESS_NAME = 'witness.example/w1';
export const logKeyC = ed25519KeyFromSeed(seq(0x40));
export const cosignKeyC = ed25519KeyFromSeed(seq(0x00));
export const APPENDIX_C_TIME = 1700000000;

/** A log with leaves `leaf 0`, `leaf 1`, … (the Appendix C synthetic log), signed by `key`. */
export class SyntheticLog {
  readonly origin: string;
  readonly keyName: string;
  readonly key: KeyObject;
  readonly vkey: string;
  private readonly leaves: Uint8Array[] = [];
  private reader: HashReader = memoryHashReader([]);

  constructor(origin: string, key: KeyObject, keyName = origin) {
    this.origin = origin;
    this.key = key;
    this.keyName = keyName;
    this.vkey = formatVkey(keyName, SIG_TYPE_ED25519, ed25519PublicKeyBytes(key));
  }

  private ensure(size: number): void {
    if (this.leaves.length >= size) return;
    while (this.leaves.length < size) this.leaves.push(hashLeaf(new TextEncoder().encode(`leaf ${this.leaves.length}`)));
    this.reader = memoryHashReader(this.leaves);
  }

  root(size: number): Uint8Array {
    this.ensure(size);
    return treeRoot(size, this.reader);
  }

  proof(oldSize: number, size: number): Uint8Array[] {
    this.ensure(size);
    if (oldSize === 0 || oldSize === size) return [];
    return consistencyProof(oldSize, size, this.reader);
  }

  text(size: number, root = this.root(size)): string {
    return formatCheckpoint({ origin: this.origin, size, rootHash: root, extensions: [] });
  }

  /** The signed checkpoint note of `size` (or of an arbitrary root). */
  checkpoint(size: number, root?: Uint8Array): string {
    return signNote(this.text(size, root), [ed25519NoteSigner(this.keyName, this.key)]);
  }

  /** An add-checkpoint body from `oldSize` to `size` with a real proof. */
  request(oldSize: number, size: number): string {
    return formatAddCheckpointRequest(oldSize, this.proof(oldSize, size), this.checkpoint(size));
  }
}

export interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
}

export interface CosignHarness {
  readonly url: string;
  readonly app: App;
  readonly role: CosignRole;
  readonly store: SqliteStore;
  readonly registry: Registry;
  readonly dbPath: string;
  post(body: string | Uint8Array, headers?: Record<string, string>): Promise<HttpResult>;
  get(path: string): Promise<HttpResult>;
  close(): Promise<void>;
}

export interface HarnessOptions extends Partial<Omit<CosignRoleOptions, 'store' | 'metrics'>> {
  dir: string;
  /** The logs file document (written to <dir>/logs.json unless logsFile is given). */
  logsDoc?: unknown;
  dbName?: string;
  /** Shared-layer options (e.g. a higher per-IP connection cap for concurrency tests). */
  server?: ServerOptions;
  /** Extra routes to add before listening. */
  routes?: (app: App) => void;
}

export async function startCosign(opts: HarnessOptions): Promise<CosignHarness> {
  const dbPath = join(opts.dir, opts.dbName ?? 'witness.db');
  const store = SqliteStore.open(dbPath);
  let logsFile = opts.logsFile;
  if (logsFile === undefined && opts.logsDoc !== undefined) {
    logsFile = join(opts.dir, 'logs.json');
    writeFileSync(logsFile, JSON.stringify(opts.logsDoc));
  }
  const registry = new Registry();
  const { server, routes, ...roleOpts } = opts;
  const role = await createCosignRole({
    ...roleOpts,
    store: store.cosign,
    name: opts.name ?? WITNESS_NAME,
    cosignKeys: opts.cosignKeys ?? [cosignKeyC],
    logsFile,
    metrics: registry,
    watch: opts.watch ?? false,
  });
  const app = await createServer({ ...server, metrics: registry, logger: false });
  role.register(app);
  routes?.(app);
  registerMetricsRoute(app);
  const info = await listen(app, { host: '127.0.0.1', port: 0 });
  const url = info.url;
  const wrap = async (res: Response): Promise<HttpResult> => ({ status: res.status, headers: res.headers, text: await res.text() });
  return {
    url,
    app,
    role,
    store,
    registry,
    dbPath,
    post: async (body, headers = {}) => wrap(await fetch(`${url}/add-checkpoint`, { method: 'POST', body, headers })),
    get: async (path) => wrap(await fetch(url + path)),
    close: async () => {
      role.stop();
      await closeGracefully(app, { timeoutMs: 1000 });
      await store.close();
    },
  };
}

/** The logs file document for one or more logs. */
export function logsDoc(...logs: { origin: string; keys: string[]; qpd?: number }[]): unknown {
  return { logs };
}
