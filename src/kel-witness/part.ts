/**
 * The KERI witness role (`--roles …,kel`, SPEC §3.6) as one part of the node: its identity, the
 * decisions (service.ts), its routes, metrics, the escrow purge timer, and its `/health` section.
 * The node starts it with `startKelWitnessPart` on its disposable stack (docs/ARCHITECTURE.md,
 * "One node, many parts"); its key is `NodeKeys.kel` (one key, one purpose is checked there).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { canonicalize } from '../encoding/jcs.ts';
import { decodeQb64 } from '../keri/qb64.ts';
import type { TransparencyLog } from '../log/log.ts';
import type { NodeKey } from '../keys/node-keys.ts';
import type { NodePart } from '../server/part.ts';
import { sendProblem } from '../server/problem.ts';
import type { WitnessStore } from '../store/types.ts';
import { parseKelAllow } from './allow.ts';
import { kelIdentity, type KelIdentity } from './identity.ts';
import { registerKelEventRoute } from './event-read.ts';
import { registerKsnRoute } from './ksn-read.ts';
import { registerDuplicityRoutes } from './duplicity-read.ts';
import { KelOobi } from './oobi.ts';
import { registerOobiRoutes } from './oobi-read.ts';
import { parseSn, validPrefix } from './query-params.ts';
import { queryKel, receiptsBody } from './reads.ts';
import { DEFAULT_KEL_WITNESS_LIMITS, KelWitness, type KelOutcome, type KelRoute, type KelWitnessLimits } from './service.ts';
import { KelOffload } from './offload.ts';
import { nextKelStamp, parseKelUrls } from './urls.ts';
import type { SignatureWorkers } from './preverify.ts';

export const CESR_JSON = 'application/json+cesr';
const JSON_TYPE = 'application/json';

/** The role's settings of the node's configuration (src/witness/config.ts). */
export interface KelWitnessConfig {
  /** `--kel-allow` values (undefined: none given). */
  kelAllow?: readonly string[] | undefined;
  /** `--kel-url` values (undefined: none given; the stored set stays in force). */
  kelUrls?: readonly string[] | undefined;
  kelLimits?: Partial<KelWitnessLimits> | undefined;
  /** The role's clock (tests). */
  kelNow?: (() => number) | undefined;
  /** After each commit that stored or witnessed an event of `prefix` (the registry's `ledger:` source reloads). */
  committed?: ((prefix: string) => void) | undefined;
}

/** The role's `/health` section (SPEC §3.6.9). */
export interface KelHealthFragment {
  prefix: string;
  held: number;
  events: number;
  escrowed: number;
  duplicities: number;
}

/** The role's status-page fragment (docs/kel-witness.md, "Status page"). */
export interface KelWitnessStatus extends KelHealthFragment {
  /** The stored `--kel-url` set, its stamp (null before any), and the OOBI URLs built from it. */
  urls: string[];
  stamp: string | null;
  oobis: string[];
  /** Events this node receipted. */
  witnessed: number;
}

export interface KelWitnessPart extends NodePart<Promise<KelHealthFragment>, KelWitnessStatus> {
  readonly identity: KelIdentity;
  readonly service: KelWitness;
  register(app: FastifyInstance): void;
  health(): Promise<KelHealthFragment>;
  status(): Promise<KelWitnessStatus>;
}

/** A controller's OOBI URL for this witness at a `--kel-url` base. */
export function witnessOobiUrl(base: string, prefix: string): string {
  return `${base.replace(/\/+$/, '')}/oobi/${prefix}/controller`;
}

/** What the part borrows of the node. */
export interface KelWitnessContext {
  readonly keys: { readonly kel: NodeKey | undefined };
  readonly log: TransparencyLog<WitnessStore>;
  readonly metrics: Registry;
  readonly dev: boolean;
  /** The node's signature pool (worker threads): request signatures are verified there. */
  readonly pool?: SignatureWorkers & { readonly size: number };
}

/** Build the part: binds the store to the prefix (first start) and starts the escrow purge. */
export async function startKelWitnessPart(ctx: KelWitnessContext, config: KelWitnessConfig): Promise<KelWitnessPart> {
  const { log, metrics } = ctx;
  const key = ctx.keys.kel?.privateKey;
  if (key === undefined) throw new Error('role kel without a KERI witness key (NodeKeys loads it with the role)');
  const allow = parseKelAllow(config.kelAllow, ctx.dev);
  const urls = parseKelUrls(config.kelUrls, ctx.dev);
  const identity = await kelIdentity(key);
  const ledger = log.store.kelLedger;
  await ledger.bindPrefix(identity.prefix);
  // A start without --kel-url keeps the stored set (and its stamp) in force.
  if (urls !== undefined) await ledger.setKelUrls(urls, (previous) => nextKelStamp(previous, (config.kelNow ?? Date.now)()));
  // Signed here for the stored stamp, so GET /oobi does not wait for (or fail with) an external key until the stamp changes.
  const oobi = new KelOobi(identity, ledger, () => ledger.kelUrls());
  await oobi.replies();
  const events = new Counter({
    name: 'kel_events_total',
    help: 'KERI events by type and outcome (docs/protocol.md §3.6.9)',
    labelNames: ['t', 'outcome'],
    registers: [metrics],
  });
  const duplicities = new Counter({ name: 'kel_duplicities_total', help: 'KEL duplicity proofs stored', registers: [metrics] });
  const unstored = new Counter({
    name: 'kel_duplicities_unstored_total',
    help: 'KEL duplicity proofs answered but not stored',
    registers: [metrics],
  });
  const escrowInvalid = new Counter({
    name: 'kel_escrow_invalid_total',
    help: 'Escrowed KERI events dropped as invalid',
    registers: [metrics],
  });
  const groups = new Histogram({
    name: 'kel_commit_group_events',
    help: 'Witnessed-event transactions committed together (group commit), per commit',
    buckets: [1, 2, 4, 8, 16, 32],
    registers: [metrics],
  });
  const offloaded = new Counter({
    name: 'kel_offloaded_total',
    help: 'KERI requests checked on a verification worker, by job (submission: parse, SAID, signatures; signatures: an ixn)',
    labelNames: ['job'],
    registers: [metrics],
  });
  const offloadRejected = new Counter({
    name: 'kel_offload_rejected_total',
    help: 'KERI requests answered 503 overloaded: the verification workers had their bound of jobs waiting',
    registers: [metrics],
  });
  const workerFailures = new Counter({
    name: 'kel_offload_worker_failures_total',
    help: 'KERI verification workers that stopped or reported a bug (their jobs were done on the event loop)',
    registers: [metrics],
  });
  const bounds = { ...DEFAULT_KEL_WITNESS_LIMITS, ...config.kelLimits };
  const offload = new KelOffload(bounds.offloadWorkers ?? ctx.pool?.size ?? 0, {
    maxPending: bounds.offloadMaxPending,
    minBytes: bounds.offloadMinBytes,
    events: {
      job: (job) => {
        offloaded.inc({ job });
      },
      rejected: () => {
        offloadRejected.inc();
      },
      workerFailed: () => {
        workerFailures.inc();
      },
    },
  });
  new Gauge({
    name: 'kel_offload_pending',
    help: 'KERI requests waiting for a verification worker',
    registers: [metrics],
    collect() {
      this.set(offload.pending);
    },
  });
  const service = new KelWitness({
    identity,
    offload,
    ...(ctx.pool === undefined ? {} : { workers: ctx.pool }),
    allow,
    log,
    limits: config.kelLimits,
    now: config.kelNow,
    events: {
      outcome: (t, outcome) => {
        events.inc({ t, outcome });
      },
      ...(config.committed === undefined ? {} : { committed: config.committed }),
      grouped: (size) => {
        groups.observe(size);
      },
      duplicity: (stored) => {
        (stored ? duplicities : unstored).inc();
      },
      escrowInvalid: () => {
        escrowInvalid.inc();
      },
    },
  });
  const expired = new Counter({ name: 'kel_escrow_expired_total', help: 'Escrowed KERI events expired', registers: [metrics] });
  new Gauge({
    name: 'kel_escrow_events',
    help: 'KERI events in the escrow',
    registers: [metrics],
    collect() {
      this.set(service.escrow.size);
    },
  });
  new Gauge({
    name: 'kel_held_prefixes',
    help: 'Prefixes held in the first-seen ledger',
    registers: [metrics],
    async collect() {
      this.set((await ledger.counts()).held);
    },
  });
  new Gauge({
    name: 'kel_ledger_bytes',
    help: 'Bytes of stored KERI events and attachments',
    registers: [metrics],
    async collect() {
      this.set((await ledger.counts()).bytes);
    },
  });
  await service.refreshCounts();
  const purge = setInterval(() => {
    expired.inc(service.purgeEscrow());
    service.refreshCounts().catch(() => undefined); // the capacity bounds keep their counts until the next minute
  }, 60_000);
  purge.unref();
  return {
    name: 'kel',
    identity,
    service,
    register: (app) => {
      registerKelRoutes(app, service, log.store, oobi);
      registerKelEventRoute(app, log);
    },
    health: async () => {
      const c = await ledger.counts();
      return { prefix: identity.prefix, held: c.held, events: c.events, escrowed: service.escrow.size, duplicities: c.duplicities };
    },
    status: async () => {
      const [c, set] = await Promise.all([ledger.counts(), ledger.kelUrls()]);
      return {
        prefix: identity.prefix,
        held: c.held,
        events: c.events,
        witnessed: c.witnessed,
        escrowed: service.escrow.size,
        duplicities: c.duplicities,
        urls: set?.urls ?? [],
        stamp: set?.stamp ?? null,
        oobis: (set?.urls ?? []).map((u) => witnessOobiUrl(u, identity.prefix)),
      };
    },
    [Symbol.asyncDispose]: async () => {
      clearInterval(purge);
      await offload.close();
    },
  };
}

function send(reply: FastifyReply, route: KelRoute, o: KelOutcome): FastifyReply {
  switch (o.kind) {
    case 'receipt':
      return reply.code(200).header('content-type', CESR_JSON).header('cache-control', 'no-store').send(Buffer.from(o.body));
    case 'accepted':
      return reply.code(route === 'root' ? 204 : 200).send();
    case 'escrowed':
      return reply
        .code(202)
        .header('content-type', JSON_TYPE)
        .send(JSON.stringify({ status: 'escrowed', prefix: o.prefix, sn: o.sn, said: o.said, expires_at: o.expiresAt }));
    case 'duplicity':
      return reply.code(409).header('content-type', JSON_TYPE).header('cache-control', 'no-store').send(canonicalize(o.proof));
    case 'problem': {
      if (o.reason === undefined) return sendProblem(reply, o.status, o.code, o.detail, o.headers);
      // kel_event_invalid: problem details plus reason and seq.
      const body = {
        type: `urn:anchor-witness:problem:${o.code}`,
        title: 'Kel event invalid',
        status: o.status,
        detail: o.detail,
        code: o.code,
        reason: o.reason,
        seq: o.seq ?? null,
      };
      return reply
        .code(o.status)
        .header('content-type', 'application/problem+json')
        .header('cache-control', 'no-store')
        .send(JSON.stringify(body));
    }
  }
}

function registerKelRoutes(app: FastifyInstance, service: KelWitness, store: WitnessStore, oobi: KelOobi): void {
  void app.register(function kelRoutes(scope, _opts, done) {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, next) => {
      next(null, body);
    });
    const post = (route: KelRoute) => async (request: FastifyRequest, reply: FastifyReply) => {
      const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/cesr+json')
        return sendProblem(reply, 415, 'unsupported_media_type', 'the body must be a KERI message (Content-Type: application/cesr+json)');
      const body = request.body instanceof Uint8Array ? request.body : new Uint8Array(0);
      const header = request.headers['cesr-attachment'];
      const o = await service.submit(route, body, Array.isArray(header) ? header.join(',') : header, request.clientIp);
      return send(reply, route, o);
    };
    scope.post(
      '/receipts',
      { config: { rawBody: true }, schema: { summary: 'KERI witness: receipt a key event (keripy ReceiptEnd, docs/protocol.md §3.6.3)' } },
      post('receipts'),
    );
    scope.post(
      '/',
      {
        config: { rawBody: true },
        schema: { summary: 'KERI witness: forwarded receipts and catch-up events (keripy HttpEnd, docs/protocol.md §3.6.3)' },
      },
      post('root'),
    );

    scope.get(
      '/receipts',
      { schema: { summary: 'KERI witness: the receipts held for an event, as -B indexed signatures (docs/protocol.md §3.6.5)' } },
      async (request, reply) => {
        const q = request.query as Record<string, unknown>;
        const sn = q.sn === undefined ? undefined : parseSn(q.sn);
        const said = q.said;
        if (
          !validPrefix(q.pre) ||
          sn === null ||
          (sn === undefined) === (said === undefined) ||
          (said !== undefined && (typeof said !== 'string' || decodeQb64(said, ['E']) === null))
        )
          return sendProblem(reply, 400, 'malformed_query', 'GET /receipts needs pre and exactly one of sn (decimal) or said');
        const body = await receiptsBody(store.kelLedger, q.pre, sn !== undefined ? { sn } : { said: said as string });
        if (body === null) return sendProblem(reply, 404, 'not_found', 'this node did not witness that event');
        return reply.code(200).header('content-type', CESR_JSON).header('access-control-allow-origin', '*').send(Buffer.from(body));
      },
    );

    scope.get(
      '/query',
      { schema: { summary: 'KERI witness: a held KEL in cloneEvtMsg form (typ=kel, docs/protocol.md §3.6.5)' } },
      async (request, reply) => {
        const q = request.query as Record<string, unknown>;
        if (q.typ !== 'kel') return sendProblem(reply, 400, 'malformed_query', 'only typ=kel is served');
        const sn = q.sn === undefined ? undefined : parseSn(q.sn);
        if (!validPrefix(q.pre) || sn === null)
          return sendProblem(reply, 400, 'malformed_query', 'GET /query needs pre and an optional decimal sn');
        const parts = await queryKel(store.kelLedger, q.pre, sn);
        if (parts === null) return sendProblem(reply, 404, 'not_found', 'the prefix is not held here (or sn is past its tip)');
        return reply
          .code(200)
          .header('content-type', CESR_JSON)
          .header('access-control-allow-origin', '*')
          .send(Buffer.from(parts.join('')));
      },
    );

    registerKsnRoute(scope, store.kelLedger, service.identity);

    registerOobiRoutes(scope, oobi, service.identity.prefix);
    registerDuplicityRoutes(scope, store.kelLedger);
    done();
  });
}
