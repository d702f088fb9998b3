/**
 * HTTP routes of the anchor role (SPEC §3.3, §3.4): decode the request, hand it to the service,
 * send what src/anchoring/reply.ts encodes. Hardening (limits, timeouts, queue, problem+json,
 * metrics) comes from the shared layer in src/server, applied once around every route.
 */
import type { FastifyInstance } from 'fastify';
import type {} from '@fastify/swagger';
import { AnchorRequestSchema } from '../anchor/schema.ts';
import { decodeAnchor } from '../anchor/codec.ts';
import { normalizeKeriId } from '../anchor/did.ts';
import type { Anchor, AnchorWire, PartyClaim } from '../anchor/types.ts';
import { decodeHex, encodeHex, isHex } from '../encoding/hex.ts';
import { ProtocolError } from '../errors.ts';
import type { HttpProblem } from '../server/errors.ts';
import { deadlineSignal } from '../server/deadline.ts';
import { Problem } from '../server/problem-schema.ts';
import { AnchorAbandonedError, anchorProblem } from './errors.ts';
import { abandonedProblem, duplicityBody, duplicityPage, latestBody, sendJson, sendOutcome } from './reply.ts';
import { AnchorResponse, DuplicityPage, DuplicityProofSchema, LatestAnchor } from './schemas.ts';
import type { AnchorService } from './service.ts';

interface AnchorRequestWire {
  anchor: AnchorWire;
  party: { agent: string; root?: string; scope?: string };
}

function malformedBody(detail: string): HttpProblem {
  return anchorProblem(400, 'malformed_body', detail);
}

/** The anchor and the party claim of a schema-valid body, in canonical form (SPEC §3.3 check 1). */
function decodeRequest(body: AnchorRequestWire): { anchor: Anchor; claim: PartyClaim } {
  let anchor;
  try {
    anchor = decodeAnchor(body.anchor, '/anchor');
  } catch (e) {
    if (e instanceof ProtocolError) throw malformedBody(e.message);
    throw e;
  }
  const norm = (id: string, at: string): string => {
    try {
      return normalizeKeriId(id);
    } catch (e) {
      throw malformedBody(`${at}: ${(e as Error).message}`);
    }
  };
  const claim: PartyClaim = { agent: norm(body.party.agent, '/party/agent') };
  if (body.party.root !== undefined) claim.root = norm(body.party.root, '/party/root');
  if (body.party.scope !== undefined) claim.scope = body.party.scope;
  return { anchor, claim };
}

function seedParam(seed: string): Uint8Array {
  if (!isHex(seed, 32)) throw anchorProblem(400, 'malformed_seed', 'seed must be a 64-character hex seed id');
  return decodeHex(seed, 32);
}

export function registerAnchorRoutes(app: FastifyInstance, anchors: AnchorService): void {
  app.post(
    '/v1/anchor',
    {
      schema: {
        summary: 'Submit an anchor for co-signing (docs/protocol.md §3.3)',
        body: AnchorRequestSchema,
        response: { 200: AnchorResponse, 409: DuplicityProofSchema, '4xx': Problem, '5xx': Problem },
      },
      config: { bigIntegerKeys: ['cumulative'] },
    },
    async (request, reply) => {
      const { anchor, claim } = decodeRequest(request.body as AnchorRequestWire);
      // The deadline signal drops the anchor from the sequencer's queue if the request is abandoned
      // (408 or client gone) before its batch starts, so the queue stays within --max-in-flight.
      let outcome;
      try {
        outcome = await anchors.submit(anchor, claim, deadlineSignal(request));
      } catch (e) {
        if (e instanceof AnchorAbandonedError) throw abandonedProblem(e);
        throw e;
      }
      if (outcome.kind === 'duplicity' && outcome.isNew) {
        request.log.warn({ seed_id: encodeHex(outcome.proof.seedId), index: outcome.proof.index }, 'duplicity proven: seed frozen');
      }
      return sendOutcome(reply, anchors.witness, outcome);
    },
  );

  app.get(
    '/v1/anchor/:seed',
    { schema: { summary: 'The latest anchor this witness co-signed for a seed', response: { 200: LatestAnchor, '4xx': Problem } } },
    async (request, reply) => {
      const { seed } = request.params as { seed: string };
      const latest = await anchors.latest(seedParam(seed));
      if (latest === undefined) throw anchorProblem(404, 'not_found', 'this witness never co-signed an anchor for that seed');
      return sendJson(reply, latestBody(anchors.witness, latest.record, latest.inclusion, latest.next));
    },
  );

  app.get(
    '/v1/duplicity/:seed',
    { schema: { summary: 'The stored duplicity proof of a seed', response: { 200: DuplicityProofSchema, '4xx': Problem } } },
    async (request, reply) => {
      const { seed } = request.params as { seed: string };
      const proof = await anchors.duplicity(seedParam(seed));
      if (proof === undefined) throw anchorProblem(404, 'not_found', 'no duplicity proof is stored for that seed');
      return sendJson(reply, duplicityBody(proof));
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
          throw anchorProblem(400, 'malformed_query', 'limit must be an integer 1..100');
        }
        limit = Number(q.limit);
      }
      let after: Uint8Array | undefined;
      if (q.after !== undefined) {
        if (typeof q.after !== 'string' || !isHex(q.after, 32))
          throw anchorProblem(400, 'malformed_query', 'after must be a 64-character hex seed id');
        after = decodeHex(q.after, 32);
      }
      return sendJson(reply, duplicityPage(await anchors.duplicities(after, limit), limit));
    },
  );
}
