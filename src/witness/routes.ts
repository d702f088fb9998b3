/**
 * HTTP routes of the anchor-witness node (SPEC §3, §4, §6). Hardening (limits, timeouts, queue,
 * problem+json, CORS, metrics) comes from the shared layer in src/server, applied once around
 * every route; handlers here only speak the protocol.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type {} from '@fastify/swagger';
import { AnchorRequestSchema, DuplicityProofSchema } from '../anchor/schema.ts';
import { decodeAnchor, encodeDuplicityProof } from '../anchor/codec.ts';
import { normalizeKeriId } from '../anchor/did.ts';
import type { AnchorWire, PartyClaim } from '../anchor/types.ts';
import { decodeHex, isHex } from '../encoding/hex.ts';
import { ProtocolError } from '../errors.ts';
import type { HttpProblem } from '../server/errors.ts';
import { deadlineSignal } from '../server/deadline.ts';
import { encodeEntryBundle, parseTilePath, tilesAtLevel } from '../tlog/tiles.ts';
import type { TransparencyLog } from '../log/log.ts';
import type { WitnessStore } from '../store/types.ts';
import type { AnchorService } from './anchor-service.ts';
import { AnchorAbandonedError, witnessProblem } from './errors.ts';
import type { BuildInfo } from '../release/attestation.ts';
import { BuildStatementSchema } from '../release/schema.ts';
import { AnchorResponse, DuplicityPage, Health, LatestAnchor, Problem } from './schemas.ts';
import { PAGE_HEADERS } from '../pages/layout.ts';
import type { StatusPageRequest } from './status-page.ts';

export interface HealthInfo {
  name: string;
  roles: string[];
  version: string;
  origin: string;
  witnessKeyHex: string;
  logVkey: string;
  cosignVkey: string | null;
}

export interface WitnessRouteDeps {
  store: WitnessStore;
  /** The witness log: checkpoint, tiles, entry bundles. */
  log: TransparencyLog;
  anchors: AnchorService | undefined;
  health: HealthInfo;
  /** The HTML status page (src/witness/status-page.ts) from the /health body and the request's Host. */
  statusPage: (health: Record<string, unknown>, request: StatusPageRequest) => string | Promise<string>;
  /** The verified build statement (serve --build-attestation, SPEC §6); without it /build is 404. */
  build?: BuildInfo;
}

const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

function malformedBody(detail: string): HttpProblem {
  return witnessProblem(400, 'malformed_body', detail);
}

function claimFrom(party: { agent: string; root?: string; scope?: string }): PartyClaim {
  const norm = (id: string, at: string): string => {
    try {
      return normalizeKeriId(id);
    } catch (e) {
      throw malformedBody(`${at}: ${(e as Error).message}`);
    }
  };
  const claim: PartyClaim = { agent: norm(party.agent, '/party/agent') };
  if (party.root !== undefined) claim.root = norm(party.root, '/party/root');
  if (party.scope !== undefined) claim.scope = party.scope;
  return claim;
}

function seedParam(seed: string): Uint8Array {
  if (!isHex(seed, 32)) throw witnessProblem(400, 'malformed_seed', 'seed must be a 64-character hex seed id');
  return decodeHex(seed, 32);
}

export async function healthBody(deps: WitnessRouteDeps): Promise<Record<string, unknown>> {
  const cp = await deps.log.checkpoint();
  const h = deps.health;
  return {
    status: 'ok',
    witness_name: h.name,
    roles: h.roles,
    version: h.version,
    log: { origin: h.origin, size: cp?.size ?? 0 },
    keys: { witness: h.witnessKeyHex, log_vkey: h.logVkey, cosign_vkey: h.cosignVkey },
  };
}

function anchorRoutes(app: FastifyInstance, store: WitnessStore, anchors: AnchorService): void {
  app.post(
    '/v1/anchor',
    {
      schema: {
        summary: 'Submit an anchor for co-signing (SPEC §3.3)',
        body: AnchorRequestSchema,
        response: { 200: AnchorResponse, 409: DuplicityProofSchema, '4xx': Problem, '5xx': Problem },
      },
      config: { bigIntegerKeys: ['cumulative'] },
    },
    async (request, reply) => {
      const body = request.body as { anchor: AnchorWire; party: { agent: string; root?: string; scope?: string } };
      let anchor;
      try {
        anchor = decodeAnchor(body.anchor, '/anchor');
      } catch (e) {
        if (e instanceof ProtocolError) throw malformedBody(e.message);
        throw e;
      }
      // The deadline signal drops the anchor from the sequencer's queue if the request is abandoned
      // (408 or client gone) before its batch starts, so the queue stays within --max-in-flight.
      let outcome;
      try {
        outcome = await anchors.submit(anchor, claimFrom(body.party), deadlineSignal(request));
      } catch (e) {
        // Only reached after a 408 was sent or the client left: nobody reads this answer.
        if (e instanceof AnchorAbandonedError) throw witnessProblem(408, 'request_timeout', e.message, { connection: 'close' });
        throw e;
      }
      switch (outcome.kind) {
        case 'cosigned':
          return reply.code(200).type(JSON_TYPE).send(outcome.body);
        case 'duplicity':
          if (outcome.isNew) request.log.warn({ seed_id: outcome.proof.seed_id, index: outcome.proof.index }, 'duplicity proven: seed frozen');
          return reply.code(409).type(JSON_TYPE).send(outcome.proof);
        case 'rejected': {
          const r = outcome.rejection;
          const headers: Record<string, string> = r.retryAfter === undefined ? {} : { 'retry-after': String(r.retryAfter) };
          throw witnessProblem(r.status, r.code, r.detail, headers);
        }
      }
    },
  );

  app.get(
    '/v1/anchor/:seed',
    { schema: { summary: 'The latest anchor this witness co-signed for a seed', response: { 200: LatestAnchor, '4xx': Problem } } },
    async (request, reply) => {
      const { seed } = request.params as { seed: string };
      const latest = await anchors.latest(seedParam(seed));
      if (latest === undefined) throw witnessProblem(404, 'not_found', 'this witness never co-signed an anchor for that seed');
      return reply.type(JSON_TYPE).send(latest);
    },
  );

  app.get(
    '/v1/duplicity/:seed',
    { schema: { summary: 'The stored duplicity proof of a seed', response: { 200: DuplicityProofSchema, '4xx': Problem } } },
    async (request, reply) => {
      const { seed } = request.params as { seed: string };
      const proof = await store.anchors.getDuplicity(seedParam(seed));
      if (proof === undefined) throw witnessProblem(404, 'not_found', 'no duplicity proof is stored for that seed');
      return reply.type(JSON_TYPE).send(encodeDuplicityProof(proof));
    },
  );

  app.get(
    '/v1/duplicity',
    {
      schema: {
        summary: 'All stored duplicity proofs, in seed order: ?after=<seed, exclusive>&limit=<1..100, default 100>',
        response: { 200: DuplicityPage, '4xx': Problem },
      },
    },
    async (request, reply) => {
      const q = request.query as { after?: unknown; limit?: unknown };
      let limit = 100;
      if (q.limit !== undefined) {
        if (typeof q.limit !== 'string' || !/^[1-9][0-9]{0,2}$/.test(q.limit) || Number(q.limit) > 100) {
          throw witnessProblem(400, 'malformed_query', 'limit must be an integer 1..100');
        }
        limit = Number(q.limit);
      }
      let after: Uint8Array | undefined;
      if (q.after !== undefined) {
        if (typeof q.after !== 'string' || !isHex(q.after, 32)) throw witnessProblem(400, 'malformed_query', 'after must be a 64-character hex seed id');
        after = decodeHex(q.after, 32);
      }
      const proofs = await store.anchors.listDuplicities(after, limit);
      const items = proofs.map(encodeDuplicityProof);
      const next = items.length === limit ? items[items.length - 1]!.seed_id : null;
      return reply.type(JSON_TYPE).send({ items, next });
    },
  );
}

async function sendTile(log: TransparencyLog, path: string, reply: FastifyReply): Promise<FastifyReply> {
  let parsed;
  try {
    parsed = parseTilePath(path);
  } catch {
    throw witnessProblem(404, 'not_found', 'not a tile path');
  }
  const cp = await log.checkpoint();
  const size = cp?.size ?? 0;
  const level = parsed.kind === 'tile' ? parsed.level : 0;
  const { full, partialWidth } = tilesAtLevel(size, level);
  const available = parsed.index < full ? 256 : parsed.index === full ? partialWidth : 0;
  if (parsed.width > available || parsed.width < 1) throw witnessProblem(404, 'not_found', 'that tile does not exist (yet) at that width');
  const data =
    parsed.kind === 'tile'
      ? await log.tile(parsed.level, parsed.index, parsed.width)
      : encodeEntryBundle(await log.entries(parsed.index, parsed.width));
  reply.header('cache-control', parsed.width === 256 ? 'public, max-age=31536000, immutable' : 'public, max-age=60');
  return reply.type('application/octet-stream').send(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
}

export function registerWitnessRoutes(app: FastifyInstance, deps: WitnessRouteDeps): void {
  const { store, log } = deps;
  if (deps.anchors !== undefined) anchorRoutes(app, store, deps.anchors);

  app.get('/log/checkpoint', { schema: { summary: "The witness log's latest checkpoint (C2SP tlog-checkpoint signed note)" } }, async (_req, reply) => {
    const cp = await log.checkpoint();
    if (cp === undefined) throw witnessProblem(404, 'not_found', 'no checkpoint yet');
    return reply.type(TEXT).header('cache-control', 'max-age=5').send(cp.note);
  });

  app.get('/log/tile/*', { schema: { summary: 'tlog-tiles hash tiles and entry bundles' } }, async (request, reply) => {
    const rest = (request.params as { '*': string })['*'];
    return sendTile(log, `tile/${rest}`, reply);
  });

  app.get('/health', { schema: { summary: 'Health and identity', response: { 200: Health } }, config: { bypassLimits: true } }, async (_req, reply) =>
    reply.type(JSON_TYPE).send(await healthBody(deps)),
  );

  app.get('/', { schema: { summary: 'Status page (HTML); with Accept: application/json, the /health body' }, config: { bypassLimits: true } }, async (request, reply) => {
    const body = await healthBody(deps);
    const accept = request.headers.accept ?? '';
    if (/application\/json/i.test(accept) && !/text\/html/i.test(accept)) return reply.type(JSON_TYPE).send(body);
    const page = await deps.statusPage(body, { host: request.headers.host, encrypted: 'encrypted' in request.raw.socket && request.raw.socket.encrypted === true });
    return reply.type('text/html; charset=utf-8').headers(PAGE_HEADERS).send(page);
  });

  app.get('/build', { schema: { summary: 'Signed build statement', response: { 200: BuildStatementSchema, '4xx': Problem } } }, (_req, reply) => {
    if (deps.build === undefined) throw witnessProblem(404, 'no_build_attestation', 'this node was started without a build attestation');
    return reply.type(JSON_TYPE).send(deps.build.json);
  });
}

