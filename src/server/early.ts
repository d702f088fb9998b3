/**
 * Requests Node's http server answers, drops or mishandles itself, before any 'request' listener
 * (so before fastify and the shared layer). `createServer` takes each of them over and answers
 * with problem+json and `Connection: close` (docs/http.md):
 *
 * - An HTTP/1.1 `Expect` other than `100-continue`: Node emits 'checkExpectation' instead of
 *   'request' and, with no listener, answers a bare 417 on a kept-alive connection with the body
 *   unread. Here: 417 `expectation_failed` (RFC 9110 §10.1.1); an empty list is no expectation.
 *   HTTP/1.0 `Expect` is ignored (RFC 9110 §10.1.1), as Node does. For `100-continue` Node emits
 *   'checkContinue'; 100 Continue is sent once the checks here pass (Node sends it before any
 *   check, inviting the body of a request that is then refused).
 * - CONNECT: Node emits 'connect' and, with no listener, destroys the socket without an answer.
 *   Here: 400 `malformed_request` (this is no proxy).
 * - A request asking for a protocol upgrade (`Connection: upgrade` and `Upgrade`): with no
 *   'upgrade' listener Node serves it as a plain request, but its parser stops at the end of that
 *   request and the bytes after it in the same read are lost (a pipelined request vanishes, or its
 *   tail is parsed as a new request). Here it is served and the connection closed after its
 *   answer; a request parsed behind it on that connection never reaches a route.
 * - HTTP versions the parser accepts besides 1.0 and 1.1 (0.9, 2.0 written as text): 400.
 *
 * The Host rule (RFC 9112 §3.2) is in host-header.ts; parse errors, oversized headers and chunk
 * extensions, and timeouts arrive as 'clientError' (connections.ts).
 */
import { hostHeaderProblem } from './host-header.ts';

export interface EarlyProblem {
  readonly status: number;
  readonly code: string;
  readonly detail: string;
}

const OWS = /^[ \t]+|[ \t]+$/g;

/**
 * The answer to an HTTP/1.1 request that Node routes to 'checkExpectation' (an `Expect` value
 * other than `100-continue`; several lines arrive joined by ", "), or null when the list holds no
 * expectation other than 100-continue (then the request is served).
 */
export function expectationProblem(value: string | undefined): EarlyProblem | null {
  if (value === undefined) return null;
  const members = value.split(',').map((m) => m.replace(OWS, '')).filter((m) => m !== '');
  const other = members.find((m) => m.toLowerCase() !== '100-continue');
  if (other === undefined) return null;
  const shown = other.length > 60 ? `${other.slice(0, 60)}…` : other;
  return { status: 417, code: 'expectation_failed', detail: `unsupported expectation ${JSON.stringify(shown)}; only 100-continue is supported` };
}

/** Only HTTP/1.0 and HTTP/1.1 are served (the parser also accepts 0.9 and 2.0 request lines). */
export function versionProblem(major: number, minor: number): EarlyProblem | null {
  if (major === 1 && (minor === 0 || minor === 1)) return null;
  return { status: 400, code: 'malformed_request', detail: `HTTP/${major}.${minor} is not supported; use HTTP/1.1` };
}

export const CONNECT_PROBLEM: EarlyProblem = { status: 400, code: 'malformed_request', detail: 'CONNECT is not supported: this server is not a proxy' };

export const AFTER_UPGRADE_PROBLEM: EarlyProblem = {
  status: 400,
  code: 'malformed_request',
  detail: 'request pipelined behind a request asking for a protocol upgrade; the connection closes, resend it on a new connection',
};

interface RequestHead {
  readonly httpVersionMajor: number;
  readonly httpVersionMinor: number;
  readonly rawHeaders: readonly string[];
  readonly headers: { readonly expect?: string | undefined };
}

/**
 * The early answer to a request, or null to route it: version, then Host, then (for requests Node
 * handed to 'checkExpectation') the expectation.
 */
export function earlyProblem(req: RequestHead, viaCheckExpectation: boolean): EarlyProblem | null {
  const version = versionProblem(req.httpVersionMajor, req.httpVersionMinor);
  if (version !== null) return version;
  const host = hostHeaderProblem(req.httpVersionMajor, req.httpVersionMinor, req.rawHeaders);
  if (host !== null) return { status: 400, code: 'malformed_request', detail: host };
  return viaCheckExpectation ? expectationProblem(req.headers.expect) : null;
}
