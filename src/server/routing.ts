/**
 * Unknown routes (docs/http.md "Methods"): a path some route answers with another method gets 405
 * with `Allow` (HEAD implied by GET; OPTIONS is never implied), any other path 404. Answered in
 * onRequest, before any body is read.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendProblem, truncate } from './problem.ts';
import { requestStateOf } from './state.ts';
import type { ServerState, Transport } from './state.ts';

const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** Remember the methods a new route answers (the candidates for `Allow`). */
export function recordRouteMethods(server: ServerState, method: string | readonly string[]): void {
  for (const m of Array.isArray(method) ? method : [method]) server.methods.add(String(m).toUpperCase());
}

/** The methods some route answers at this path, in the order GET, HEAD, POST, PUT, PATCH, DELETE, then by name. */
function allowedMethods(server: ServerState, app: FastifyInstance, rawUrl: string): string[] {
  const q = rawUrl.indexOf('?');
  const path = q === -1 ? rawUrl : rawUrl.slice(0, q);
  const out: string[] = [];
  for (const method of server.methods) {
    // findRoute matches a concrete path (find-my-way `find`); it returns null at run time when no
    // route matches, whatever its type says.
    const found: unknown = app.findRoute({ method, url: path });
    if (found !== null && found !== undefined) out.push(method);
  }
  return out.sort((a, b) => {
    const ia = METHOD_ORDER.indexOf(a);
    const ib = METHOD_ORDER.indexOf(b);
    return ia !== ib ? (ia === -1 ? 99 : ia) - (ib === -1 ? 99 : ib) : a < b ? -1 : a > b ? 1 : 0;
  });
}

/** True when `path` fits the route template `url` (`:name` = one non-empty segment). */
function fitsTemplate(url: string, path: string): boolean {
  const want = url.split('/');
  const got = path.split('/');
  return want.length === got.length && want.every((w, i) => (w.startsWith(':') ? got[i] !== '' : w === got[i]));
}

const servesMethod = (listed: string, method: string): boolean => listed === method || (listed === 'GET' && method === 'HEAD');

/** A transport (state.ts) serves this method on this route template (HEAD wherever GET). */
export function transportServes(transport: Transport, method: string, route: string): boolean {
  return transport.routes.some((r) => servesMethod(r.method, method) && r.url === route);
}

/**
 * 405 + Allow when another method is routed at this path, else 404. A request that came through a
 * transport only sees the routes the transport serves.
 */
export function answerNotFound(server: ServerState, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const app = server.app;
  const path = (request.raw.url ?? '/').split('?')[0]!;
  const transport = requestStateOf(request)?.transport ?? null;
  let allowed = app === null ? [] : allowedMethods(server, app, request.raw.url ?? '/');
  if (transport !== null)
    allowed = allowed.filter((m) => transport.routes.some((r) => servesMethod(r.method, m) && fitsTemplate(r.url, path)));
  if (allowed.length > 0 && !allowed.includes(request.method)) {
    return sendProblem(reply, 405, 'method_not_allowed', `${request.method} is not allowed here; allowed: ${allowed.join(', ')}`, {
      allow: allowed.join(', '),
    });
  }
  return sendProblem(reply, 404, 'not_found', `no resource at ${truncate(path, 120)}`);
}
