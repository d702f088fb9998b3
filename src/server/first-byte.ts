/**
 * When a request's first byte arrived: its deadline runs from there (docs/http.md "Deadline"), so
 * slow headers count against it. Node's HTTP parser calls its kOnMessageBegin slot (index 0,
 * unset by Node itself) when a request's first byte is parsed; `hookParser` puts a function there
 * that records the time on the parser. Guarded: if Node's parser layout differs, nothing is
 * hooked and requests fall back to "headers complete" as their start.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

const kMessageStart = Symbol('messageStart');
const kParserOwner = Symbol('parserOwner');

type ParserLike = Record<number | symbol, unknown>;

function onMessageBegin(this: ParserLike): void {
  this[kMessageStart] = performance.now();
}

/** Hook the parser of a new connection (for TLS, once the handshake is done and the parser exists). */
export function hookParser(socket: Socket): void {
  const parser = (socket as unknown as { parser?: ParserLike | null }).parser;
  if (parser === null || parser === undefined || typeof parser !== 'object') return;
  if (typeof parser[1] !== 'function') return; // kOnHeaders: not the parser layout we know
  const slot = parser[0];
  if (slot !== null && slot !== undefined && slot !== onMessageBegin) return;
  parser[0] = onMessageBegin;
  parser[kParserOwner] = socket;
  parser[kMessageStart] = undefined;
}

/** The `performance.now()` of the request's first byte, or `now` when it was not recorded. */
export function messageStart(raw: IncomingMessage, now: number): number {
  const parser = (raw.socket as unknown as { parser?: ParserLike | null } | null)?.parser;
  if (parser === null || parser === undefined || parser[kParserOwner] !== raw.socket) return now;
  const t = parser[kMessageStart];
  return typeof t === 'number' && t <= now ? t : now;
}
