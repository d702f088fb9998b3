/**
 * HTTP routes of the cosign role (SPEC §5; docs/cosign.md), in their own plugin scope:
 * `POST /add-checkpoint` (C2SP tlog-witness; a raw body, Content-Type ignored, errors as one line
 * of text), `POST /sign-subtree` (SPEC §5.4, the same conventions; only when given a
 * SignSubtreeService) and `GET /<64 hex sha256(origin)>/checkpoint`. Limits, deadlines, CORS and
 * metrics come from the shared layer; add-checkpoint outcomes are counted in the role's tally.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type {} from '@fastify/swagger';
import type { Counter } from 'prom-client';
import { clientKey, parseIp } from '../server/ip.ts';
import { clientIp } from '../server/server.ts';
import { isStoreUnavailable } from '../store/errors.ts';
import { SIGN_SUBTREE_OTHER_ORIGIN } from './metrics.ts';
import type { OutcomeTally } from './outcome-tally.ts';
import { formatConflictReply } from '../note/tlog-witness.ts';
import type { SignSubtreeOutcome, SignSubtreeService } from './sign-subtree.ts';
import type { AddCheckpointOutcome, CosignService } from './service.ts';
import { rejectionHeaders } from './rejection.ts';

export const TEXT_PLAIN = 'text/plain; charset=utf-8';
export const TLOG_SIZE_TYPE = 'text/x.tlog.size';

export interface CosignRouteDeps {
  service: CosignService;
  /** The origin whose SHA-256 is this lowercase hex, among the origins known in this process. */
  originForHash: (hashHex: string) => string | undefined;
  /** Where each add-checkpoint outcome is counted (it feeds the metrics). */
  tally?: OutcomeTally | undefined;
  /** Retry-After seconds on 503 store_unavailable (default 1). */
  retryAfterSeconds?: number;
  /** POST /sign-subtree is served only with this (an ML-DSA-44 cosign key, no --no-sign-subtree). */
  signSubtree?: { service: SignSubtreeService; requests?: Counter<'origin' | 'outcome'> | undefined } | undefined;
}

function sendLine(reply: FastifyReply, status: number, line: string, headers: Record<string, string> = {}): FastifyReply {
  reply.code(status).header('content-type', TEXT_PLAIN).header('cache-control', 'no-store');
  for (const [k, v] of Object.entries(headers)) reply.header(k, v);
  return reply.send(`${line.replace(/[\r\n]+/g, ' ')}\n`);
}

/** The key a client's sign-subtree token bucket is kept under (server/ip.ts: IPv6 by /64). */
function subtreeClient(request: FastifyRequest): string {
  const text = clientIp(request);
  const ip = parseIp(text);
  return ip === null ? text : clientKey(ip);
}

function recordSubtree(requests: Counter<'origin' | 'outcome'> | undefined, outcome: SignSubtreeOutcome): void {
  requests?.inc({ origin: outcome.origin ?? SIGN_SUBTREE_OTHER_ORIGIN, outcome: outcome.kind === 'signed' ? 'signed' : outcome.code });
}

const ORIGIN_HASH_RE = /^[0-9a-fA-F]{64}$/;

export function registerCosignRoutes(app: FastifyInstance, deps: CosignRouteDeps): void {
  const { service, tally } = deps;
  const retryAfter = String(deps.retryAfterSeconds ?? 1);

  void app.register(function cosignRoutes(scope, _opts, done) {
    // The body is bytes whatever the Content-Type (C2SP tlog-witness defines no media type for it).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, next) => {
      next(null, body);
    });

    scope.post(
      '/add-checkpoint',
      { config: { rawBody: true }, schema: { summary: 'C2SP tlog-witness add-checkpoint: cosign a log checkpoint (docs/protocol.md §5)' } },
      async (request, reply) => {
        const body = request.body;
        const bytes = body instanceof Uint8Array ? body : new Uint8Array(0);
        let outcome: AddCheckpointOutcome;
        try {
          outcome = await service.addCheckpoint(bytes);
        } catch (e) {
          if (isStoreUnavailable(e)) {
            request.log.warn({ err: e }, 'cosign: store unavailable');
            return sendLine(reply, 503, 'store unavailable; retry later', { 'retry-after': retryAfter });
          }
          throw e;
        }
        tally?.record(outcome);
        switch (outcome.kind) {
          case 'cosigned':
            return reply.code(200).header('content-type', TEXT_PLAIN).header('cache-control', 'no-store').send(outcome.body);
          case 'conflict':
            return reply
              .code(409)
              .header('content-type', TLOG_SIZE_TYPE)
              .header('cache-control', 'no-store')
              .send(formatConflictReply(outcome.size));
          case 'rejected':
            return sendLine(reply, outcome.status, outcome.detail, rejectionHeaders(outcome));
        }
      },
    );

    const subtrees = deps.signSubtree;
    if (subtrees !== undefined) {
      scope.post(
        '/sign-subtree',
        {
          config: { rawBody: true },
          schema: {
            summary:
              'C2SP tlog-witness sign-subtree: ML-DSA-44 subtree/v1 cosignatures (T = 0) of a subtree of a checkpoint this witness cosigned (docs/protocol.md §5.4)',
          },
        },
        async (request, reply) => {
          const body = request.body;
          const bytes = body instanceof Uint8Array ? body : new Uint8Array(0);
          const outcome = await subtrees.service.signSubtree(bytes, subtreeClient(request));
          recordSubtree(subtrees.requests, outcome);
          if (outcome.kind === 'signed') {
            return reply.code(200).header('content-type', TEXT_PLAIN).header('cache-control', 'no-store').send(outcome.body);
          }
          return sendLine(reply, outcome.status, outcome.detail, rejectionHeaders(outcome));
        },
      );
    }

    scope.get(
      '/:originHash/checkpoint',
      { schema: { summary: 'The latest checkpoint this witness cosigned for the origin with this SHA-256 (hex), with its cosignatures' } },
      async (request, reply) => {
        const { originHash } = request.params as { originHash: string };
        if (!ORIGIN_HASH_RE.test(originHash)) {
          reply.callNotFound();
          return reply;
        }
        const origin = deps.originForHash(originHash.toLowerCase());
        let latest: { note: string } | undefined;
        try {
          latest = origin === undefined ? undefined : await service.latest(origin);
        } catch (e) {
          if (isStoreUnavailable(e)) {
            return sendLine(reply, 503, 'store unavailable; retry later', { 'retry-after': retryAfter });
          }
          throw e;
        }
        if (latest === undefined) return sendLine(reply, 404, 'this witness has not cosigned a checkpoint for that origin');
        return reply.code(200).header('content-type', TEXT_PLAIN).header('cache-control', 'public, max-age=5').send(latest.note);
      },
    );
    done();
  });
}
