/**
 * Bodies in and out (docs/http.md "Content types"). All of fastify's default parsers are removed
 * (text/plain included) and one catch-all parser reads every body as bytes: a `rawBody` route gets
 * the Buffer whatever its Content-Type; any other route gets strict JSON (strict UTF-8, then
 * parseStrictJson: duplicates, depth, integer rules; `bigIntegerKeys` as decimal strings). A JSON
 * route (POST/PUT/PATCH without `rawBody`) needs a JSON content type, checked in onRequest, before
 * the body is read. Replies and response schemas serialize losslessly (bigints as integers).
 */
import type { FastifyInstance } from 'fastify';
import { decodeUtf8, parseStrictJson, stringifyJson } from '../encoding/json.ts';
import { HttpProblem } from './errors.ts';
import type { RouteConfig } from './options.ts';
import { isJsonContentType } from './problem.ts';
import { requestStateOf } from './state.ts';

const bigKeySets = new WeakMap<readonly string[], ReadonlySet<string>>();

function bigKeys(keys: readonly string[] | undefined): ReadonlySet<string> | undefined {
  if (keys === undefined) return undefined;
  let s = bigKeySets.get(keys);
  if (s === undefined) {
    s = new Set(keys);
    bigKeySets.set(keys, s);
  }
  return s;
}

/** A JSON route: its body must be JSON (415 before the body is read otherwise). */
export function needsJson(method: string, config: RouteConfig): boolean {
  return (method === 'POST' || method === 'PUT' || method === 'PATCH') && config.rawBody !== true;
}

/** Replace fastify's body parsers and serializers with the strict, lossless ones. */
export function installBodyCodecs(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    const config = requestStateOf(request)?.config ?? request.routeOptions.config;
    if (config.rawBody === true) {
      done(null, body);
      return;
    }
    if (!isJsonContentType(request.headers['content-type'])) {
      done(new HttpProblem(415, 'unsupported_media_type', 'the body must be JSON (Content-Type: application/json)'), undefined);
      return;
    }
    try {
      const keys = bigKeys(config.bigIntegerKeys);
      done(null, parseStrictJson(decodeUtf8(body as Buffer), keys === undefined ? {} : { bigIntegerKeys: keys }));
    } catch (e) {
      done(e instanceof Error ? e : new Error(String(e)), undefined);
    }
  });
  app.setReplySerializer((payload) => stringifyJson(payload));
  app.setSerializerCompiler(() => (data: unknown) => stringifyJson(data));
}
