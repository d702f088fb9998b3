/**
 * The anchoring part (SPEC §3): the signature pool the node lends every part, the anchor metrics
 * (registered whatever the roles), and with role `anchor` the anchor role itself: AnchorService
 * over the node's log and registry view, and POST /v1/anchor with its read routes.
 *
 *   const pool = openSignaturePool(keys, threads);          // the node's, closed last
 *   const anchoring = startAnchoringPart(ctx, { registry, allowUnderivedSeeds, quota });
 *   anchoring.checkpointSize(size);                           // the own log's size at start
 */
import { availableParallelism } from 'node:os';
import type { Registry as Metrics } from 'prom-client';
import type { Registry as PartyRegistry } from '../anchor/registry.ts';
import type { QuotaDefaults } from '../anchor/quota-window.ts';
import type { TransparencyLog } from '../log/log.ts';
import { inProcessKey, type NodeKeys } from '../keys/node-keys.ts';
import { disposeBy, type NodePart } from '../server/part.ts';
import type { WitnessStore } from '../store/types.ts';
import { createAnchorMetrics } from './metrics.ts';
import { registerAnchorRoutes } from './routes.ts';
import { AnchorService } from './service.ts';
import { SignaturePool } from './verify-pool.ts';

/**
 * The node's signature pool: Ed25519 verification, anchor cosign messages signed with the witness
 * key, and the ML-DSA-44 cosign keys' lines (off the event loop). Threads: default cores − 1.
 */
export function openSignaturePool(keys: NodeKeys, threads: number | undefined): SignaturePool {
  return new SignaturePool(
    threads ?? Math.max(0, availableParallelism() - 1),
    inProcessKey(keys.witness), // an external witness key signs through its Signer: the workers only verify
    keys.cosign.flatMap((k) => {
      const key = k.algorithm === 'ml-dsa-44' ? inProcessKey(k) : undefined;
      return key === undefined ? [] : [key];
    }),
  );
}

/** What the anchoring part borrows of the node's context. */
export interface AnchoringPartContext {
  log: TransparencyLog<WitnessStore>;
  keys: NodeKeys;
  name: string;
  pool: SignaturePool;
  metrics: Metrics;
  /** Told when a batch signed a new checkpoint (the status page's checkpoint age). */
  clock: { signed(size: number, atMs: number): void };
  /** The store's key history retired a witness key (SPEC §1.2): stored cosignatures are re-signed by the current key. */
  rotated?: boolean;
}

export interface AnchoringPartOptions {
  /** The registry part's view (src/registry/part.ts); undefined without role `anchor` (then only the metrics are registered). */
  registry: (() => PartyRegistry) | undefined;
  allowUnderivedSeeds: boolean;
  quota: QuotaDefaults;
}

export interface AnchoringPart extends NodePart {
  /** The anchor role, when it runs. */
  readonly service: AnchorService | undefined;
  /** The own log's size as read at start (the `log_size` gauge). */
  checkpointSize(size: number): void;
}

export function startAnchoringPart(ctx: AnchoringPartContext, o: AnchoringPartOptions): AnchoringPart {
  let service: AnchorService | undefined;
  const m = createAnchorMetrics(ctx.metrics, () => service?.queueDepth ?? 0);
  if (o.registry !== undefined)
    service = new AnchorService({
      log: ctx.log,
      witnessKey: ctx.keys.witness.privateKey,
      nextKey: ctx.keys.next?.privateKey,
      resignStored: ctx.rotated === true,
      name: ctx.name,
      registry: o.registry,
      allowUnderivedSeeds: o.allowUnderivedSeeds,
      quota: o.quota,
      verifyPool: ctx.pool,
      onCommit: (e) => {
        m.cosigned.inc(e.cosigned);
        m.duplicities.inc(e.duplicities.length);
        m.logSize.set(e.size);
        m.batchRequests.observe(e.requests);
        m.batchSeconds.observe(e.seconds);
        ctx.clock.signed(e.size, Date.now());
      },
    });
  const running = service;
  return {
    name: 'anchoring',
    service: running,
    checkpointSize: (size) => {
      m.logSize.set(size);
    },
    ...(running === undefined
      ? {}
      : {
          register: (app) => {
            registerAnchorRoutes(app, running);
          },
        }),
    [Symbol.asyncDispose]: disposeBy(() => undefined),
  };
}
