/**
 * The node's bastion backends (SPEC §5.6): one BastionConnection per --bastion, their metrics,
 * the /health entries and the state file in --data-dir. The key comes from NodeKeys (which checks
 * that it is a key of its own, SPEC §1); part.ts makes this a node part.
 *
 *   const backends = startBastionBackends({ key, addresses, app, registry, dataDir, log });
 *   backends.keyHash;        // the path prefix clients use: https://HOST/<key hash>/add-checkpoint
 *   backends.status();       // [{addr, connected}] for /health
 *   await backends.close();  // GOAWAY, then cut after the drain timeout
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Registry } from 'prom-client';
import type { BastionIdentity } from '../keys/node-keys.ts';
import type { App } from '../server/options.ts';
import { parseBastionAddresses } from './address.ts';
import { BastionConnection } from './connection.ts';
import type { BastionLogger, BastionTiming } from './connection.ts';
import { BastionConfigError } from './errors.ts';
import { createBastionMetrics } from './metrics.ts';
import { BASTION_STATE_HEARTBEAT_MS, writeBastionState } from './state-file.ts';
import type { BastionStatus } from './state-file.ts';

/** The bastion backend identity: NodeKeys.load reads it (src/keys/node-keys.ts). */
export type BastionKey = BastionIdentity;

/** Read --bastion-ca: PEM certificates that replace the default roots. */
export function loadBastionCa(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new BastionConfigError(
      'invalid_bastion_ca',
      `cannot read --bastion-ca ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
    );
  }
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new BastionConfigError('invalid_bastion_ca', `--bastion-ca ${file}: no -----BEGIN CERTIFICATE----- block`);
  for (const b of blocks) {
    try {
      new X509Certificate(b);
    } catch {
      throw new BastionConfigError('invalid_bastion_ca', `--bastion-ca ${file}: a certificate block does not parse`);
    }
  }
  return blocks.join('\n');
}

export interface BastionBackendsOptions {
  readonly key: BastionKey;
  /** the --bastion values (HOST:PORT) */
  readonly addresses: readonly string[];
  readonly ca?: string | undefined;
  readonly app: App;
  readonly registry: Registry;
  /** where the state file goes (healthcheck --data-dir); none when undefined */
  readonly dataDir?: string | undefined;
  readonly log?: BastionLogger | undefined;
  readonly timing?: Partial<BastionTiming> | undefined;
}

export interface BastionBackends {
  readonly keyHash: string;
  readonly connections: readonly BastionConnection[];
  status(): BastionStatus[];
  close(timeoutMs?: number): Promise<void>;
}

/** Start one connection per bastion (each dials at once and keeps reconnecting until closed). */
export function startBastionBackends(opts: BastionBackendsOptions): BastionBackends {
  const addresses = parseBastionAddresses(opts.addresses);
  const metrics = createBastionMetrics(opts.registry);
  const { keyHash } = opts.key;
  const connections: BastionConnection[] = [];
  const status = (): BastionStatus[] => connections.map((c) => ({ addr: c.addr, connected: c.connected }));
  const dataDir = opts.dataDir;
  const save = (): void => {
    if (dataDir === undefined) return;
    try {
      writeBastionState(dataDir, keyHash, status(), Date.now());
    } catch (e) {
      opts.log?.warn({ err: (e as Error).message }, 'bastion: cannot write the state file');
    }
  };
  for (const address of addresses) {
    connections.push(
      new BastionConnection({
        address,
        key: opts.key.key,
        ca: opts.ca,
        app: opts.app,
        metrics,
        log: opts.log,
        timing: opts.timing,
        onChange: save,
      }),
    );
  }
  opts.log?.info({ key_hash: keyHash, bastions: addresses.map((a) => a.addr) }, 'bastion: backend key hash');
  save();
  const heartbeat = setInterval(save, BASTION_STATE_HEARTBEAT_MS);
  heartbeat.unref();
  for (const c of connections) c.start();
  let closing: Promise<void> | undefined;
  return {
    keyHash,
    connections,
    status,
    close: (timeoutMs) =>
      (closing ??= (async () => {
        clearInterval(heartbeat);
        await Promise.all(connections.map((c) => c.close(timeoutMs)));
        save();
      })()),
  };
}
