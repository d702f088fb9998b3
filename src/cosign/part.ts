/**
 * The cosign part (SPEC §5): the cosign role (role.ts) as a node part. Its keys come from NodeKeys
 * (which checked them, SPEC §1); the role's own SIGHUP listeners (the logs file, the lists) are
 * adopted as the part's reload. Fragments: the cosign vkeys for `/health`, and the known logs
 * with their cosigned sizes and request counts (the role's own tally, never the metrics) for the
 * status page.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Registry } from 'prom-client';
import type { SignaturePool } from '../anchoring/verify-pool.ts';
import type { NodeKeys } from '../keys/node-keys.ts';
import { adoptSighupListeners, disposeBy, type NodePart } from '../server/part.ts';
import type { CosignStateStorage } from '../store/types.ts';
import type { ListLimits } from './list-merge.ts';
import type { OriginOutcomes } from './outcome-tally.ts';
import { createCosignRole, type CosignRole } from './role.ts';
import type { RateLimitSpec } from '../server/rate-limit.ts';

/** What the cosign part borrows of the node's context. */
export interface CosignPartContext {
  store: { cosign: CosignStateStorage; capabilities: { multiWriter: boolean } };
  keys: NodeKeys;
  name: string;
  /** `--log-origin`: the own log, which may not be a log to cosign. */
  origin: string;
  pool: SignaturePool;
  metrics: Registry;
  logger: FastifyBaseLogger;
  dev: boolean;
}

export interface CosignPartOptions {
  logsFile?: string | undefined;
  logsLists?: readonly string[] | undefined;
  logsListIntervalSeconds?: number | undefined;
  logsListLimits?: Partial<ListLimits> | undefined;
  signSubtree?: boolean | undefined;
  signSubtreeRate?: RateLimitSpec | null | undefined;
}

/** `/health` fragment (`keys.cosign_vkey` and `cosign_vkeys`). */
export interface CosignHealthFragment {
  /** The first Ed25519 (type 0x04) cosign vkey, or null. */
  cosignVkey: string | null;
  /** Every cosign vkey, in `--cosign-key` order. */
  cosignVkeys: string[];
}

export interface CosignLogRow {
  origin: string;
  /** Where the log is configured: `logs file` or `list <path>`. */
  source: string;
  /** Size last cosigned (null: never). */
  size: number | null;
  /** Unix seconds of the last cosignature (null: never). */
  lastCosigned: number | null;
  qpd: number | undefined;
  /** add-checkpoint requests that reached the quota check since start, and those refused (429). */
  counted: number;
  refused: number;
}

/** Status page fragment: the first MAX_LOG_ROWS known logs (sorted) and how many are known. */
export interface CosignStatus {
  logs: readonly CosignLogRow[];
  total: number;
}

export interface CosignPart extends NodePart<CosignHealthFragment, CosignStatus> {
  readonly role: CosignRole;
  health: () => CosignHealthFragment;
  status: () => Promise<CosignStatus>;
}

const MAX_LOG_ROWS = 200;

/** add-checkpoint refusals after the quota check (SPEC §5 check 4): they took a token. */
const AFTER_QUOTA = ['old_size_too_large', 'invalid_empty_tree', 'unexpected_proof', 'inconsistent'] as const;

/** A log's row counts from the role's own tally: requests that took a token, and those refused (429). */
function requestCounts(o: Readonly<OriginOutcomes> | undefined): { counted: number; refused: number } {
  if (o === undefined) return { counted: 0, refused: 0 };
  const counted = AFTER_QUOTA.reduce((n, code) => n + (o.refused[code] ?? 0), o.cosigned + o.conflict);
  return { counted, refused: o.refused.quota_exceeded ?? 0 };
}

export async function startCosignPart(ctx: CosignPartContext, o: CosignPartOptions): Promise<CosignPart> {
  if (o.logsFile === undefined && (o.logsLists ?? []).length === 0)
    ctx.logger.warn('role cosign without --logs: no log is known, every add-checkpoint is 404');
  const { value: role, hup } = await adoptSighupListeners(() =>
    createCosignRole({
      store: ctx.store.cosign,
      cosignKeys: ctx.keys.cosign.map((k) => k.privateKey),
      name: ctx.name,
      logsFile: o.logsFile,
      logsLists: o.logsLists,
      logsListIntervalSeconds: o.logsListIntervalSeconds,
      logsListLimits: o.logsListLimits,
      dev: ctx.dev,
      sharedStore: ctx.store.capabilities.multiWriter,
      ownOrigin: ctx.origin,
      metrics: ctx.metrics,
      log: ctx.logger,
      verifyPool: ctx.pool,
      signSubtree: o.signSubtree,
      signSubtreeRate: o.signSubtreeRate,
    }),
  );
  const readLogs = async (): Promise<CosignStatus> => {
    const known = [...role.logs.current().values()].sort((a, b) => (a.origin < b.origin ? -1 : a.origin > b.origin ? 1 : 0));
    const logs = await Promise.all(
      known.slice(0, MAX_LOG_ROWS).map(async (l): Promise<CosignLogRow> => {
        const state = await ctx.store.cosign.getOrigin(l.origin);
        const r = requestCounts(role.outcomes.of(l.origin));
        return {
          origin: l.origin,
          source: l.source,
          size: state?.size ?? null,
          lastCosigned: state?.lastTime ?? null,
          qpd: l.qpd,
          counted: r.counted,
          refused: r.refused,
        };
      }),
    );
    return { logs, total: known.length };
  };
  // GET / bypasses the queue and the rate limit: concurrent requests share one read of the logs.
  let inFlight: Promise<CosignStatus> | undefined;
  return {
    name: 'cosign',
    role,
    register: (app) => {
      role.register(app);
    },
    health: () => {
      const h = role.healthInfo();
      return { cosignVkey: h.cosignVkey, cosignVkeys: h.cosignVkeys };
    },
    status: () =>
      (inFlight ??= readLogs().finally(() => {
        inFlight = undefined;
      })),
    reload: () => {
      hup();
      return { part: 'cosign', error: null };
    },
    [Symbol.asyncDispose]: disposeBy(() => {
      role.stop();
    }),
  };
}
