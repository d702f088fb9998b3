/**
 * Errors to problems (docs/http.md "Errors"): every error a route, hook or parser throws is
 * answered as problem+json. In order: an `HttpProblem` as given; the server's `mapError` hook (a
 * role maps its own ProtocolError codes); the built-in mapping here (strict JSON and codec errors,
 * schema failures with the JSON pointer of the first one, fastify's 4xx, a store outage → 503 +
 * Retry-After, an external signer's failure → 503 `signer_unavailable`, SPEC §1.1); anything else → 500 `internal` naming the request id, logged at error level.
 */
import http from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { JsonError } from '../encoding/json.ts';
import { EncodingError } from '../encoding/errors.ts';
import { isStoreUnavailable } from '../store/errors.ts';
import { SignerError } from '../keys/errors.ts';
import { HttpProblem } from './errors.ts';
import type { RouteConfig } from './options.ts';
import { sendProblem, truncate } from './problem.ts';
import type { ProblemInit } from './problem.ts';
import { requestStateOf, withVia } from './state.ts';
import type { ServerState } from './state.ts';

interface AjvErrorLike {
  instancePath?: string;
  keyword?: string;
  params?: Record<string, unknown>;
  message?: string;
}

function statusCodeName(status: number): string {
  return (http.STATUS_CODES[status] ?? 'error')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');
}

function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** A schema failure: the route's code for that request part, the JSON pointer of the first failure. */
function validationProblem(error: { validation: unknown; validationContext?: unknown }, config: RouteConfig | undefined): ProblemInit {
  const ctx = typeof error.validationContext === 'string' ? error.validationContext : 'body';
  const codes = config?.validationCodes;
  const defaults: Record<string, string> = {
    body: 'malformed_body',
    querystring: 'malformed_query',
    params: 'malformed_params',
    headers: 'malformed_headers',
  };
  const code = (codes as Record<string, string | undefined> | undefined)?.[ctx] ?? defaults[ctx] ?? 'malformed_request';
  const first = (Array.isArray(error.validation) ? (error.validation[0] as AjvErrorLike | undefined) : undefined) ?? {};
  let pointer = first.instancePath ?? '';
  let message = first.message ?? 'is invalid';
  const params = first.params ?? {};
  if (first.keyword === 'required' && typeof params.missingProperty === 'string') {
    pointer += '/' + escapePointer(params.missingProperty);
    message = 'required member is missing';
  } else if (first.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    pointer += '/' + escapePointer(params.additionalProperty);
    message = 'unknown member';
  }
  const where = ctx === 'body' ? '' : `${ctx === 'querystring' ? 'query' : ctx} `;
  const detail = pointer === '' ? `${ctx === 'querystring' ? 'query' : ctx}: ${message}` : `${where}${pointer}: ${message}`;
  return { status: 400, code, detail };
}

/** The built-in error → problem mapping (after HttpProblem and the server's mapError hook), or null for 500. */
function builtinProblem(error: unknown, request: FastifyRequest, server: ServerState): ProblemInit | null {
  const config = requestStateOf(request)?.config;
  const bodyCode = config?.validationCodes?.body ?? 'malformed_body';
  if (error instanceof JsonError) {
    return {
      status: 400,
      code: bodyCode,
      detail: error.pointer === '' ? `invalid JSON: ${error.message}` : `invalid JSON at ${error.message}`,
    };
  }
  if (error instanceof EncodingError) return { status: 400, code: bodyCode, detail: error.message };
  if (isStoreUnavailable(error)) {
    return {
      status: 503,
      code: 'store_unavailable',
      detail: 'the store is unavailable; retry later',
      headers: { 'retry-after': server.retryAfter },
    };
  }
  if (error instanceof SignerError) {
    // SPEC §1.1: an external key that cannot sign (or signed badly, or changed) answers
    // signer_unavailable; a full signer queue answers overloaded. Both 503 with Retry-After: 5.
    const code = error.code === 'overloaded' ? 'overloaded' : 'signer_unavailable';
    return { status: 503, code, detail: truncate(error.message), headers: { 'retry-after': '5' } };
  }
  if (typeof error !== 'object' || error === null) return null;
  const e = error as { code?: unknown; statusCode?: unknown; validation?: unknown; validationContext?: unknown; message?: unknown };
  if (Array.isArray(e.validation)) return validationProblem({ validation: e.validation, validationContext: e.validationContext }, config);
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE': {
      const limit = request.routeOptions.bodyLimit;
      return { status: 413, code: 'body_too_large', detail: `request body exceeds ${limit} bytes`, headers: { connection: 'close' } };
    }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, code: 'unsupported_media_type', detail: 'unsupported or malformed Content-Type' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return { status: 400, code: bodyCode, detail: 'Content-Length does not match the body' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { status: 400, code: bodyCode, detail: 'invalid JSON' };
    case 'FST_ERR_NOT_FOUND':
      return { status: 404, code: 'not_found', detail: 'not found' };
    default:
      break;
  }
  if (
    typeof e.statusCode === 'number' &&
    e.statusCode >= 400 &&
    e.statusCode < 500 &&
    typeof e.code === 'string' &&
    e.code.startsWith('FST_')
  ) {
    return {
      status: e.statusCode,
      code: statusCodeName(e.statusCode),
      detail: typeof e.message === 'string' ? truncate(e.message) : (http.STATUS_CODES[e.statusCode] ?? 'client error'),
    };
  }
  // A body that could not be read because the client went away: nobody will see the answer.
  if (e.code === 'ECONNRESET' || e.code === 'ECONNABORTED' || e.message === 'aborted')
    return { status: 400, code: bodyCode, detail: 'request body aborted' };
  return null;
}

/** The server's error handler: map, log, and answer with the problem alone. */
export function answerError(server: ServerState, error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply | undefined {
  let p: ProblemInit | null;
  try {
    if (error instanceof HttpProblem) p = error;
    else p = server.mapError?.(error, request) ?? builtinProblem(error, request, server);
  } catch (mapErr) {
    request.log.error({ err: mapErr }, 'error mapping failed');
    p = null;
  }
  if (p === null) {
    request.log.error({ err: error }, 'internal error');
    p = { status: 500, code: 'internal', detail: `internal error; request id ${request.id}` };
  } else if (isStoreUnavailable(error)) {
    // A store outage: one line per episode through the store's health, not a stack per request.
    if (server.storeHealth !== undefined) server.storeHealth.failed(error, true);
    else request.log.warn({ code: p.code, cause: error.message }, 'service unavailable');
  } else if (p.status >= 500) {
    request.log.warn({ err: error, code: p.code }, 'service unavailable');
  }
  if (p.status === 413) server.metrics.rejected.inc(withVia(requestStateOf(request), { reason: 'body_too_large' }));
  if (reply.raw.headersSent) {
    reply.raw.destroy();
    return undefined;
  }
  // Headers a handler set before failing (Cache-Control: immutable, ETag, …) must not describe
  // the error: a problem carries only its own headers (plus the common ones added in onSend).
  for (const name of Object.keys(reply.getHeaders())) reply.removeHeader(name);
  return sendProblem(reply, p.status, p.code, p.detail, p.headers);
}
