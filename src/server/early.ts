/**
 * Requests Node's http server would answer, drop or mishandle itself before any 'request' listener:
 * an `Expect` other than `100-continue` (417, RFC 9110 §10.1.1), CONNECT (400), protocol upgrades
 * (served, then the connection closed) and HTTP versions other than 1.0 / 1.1 (400). Each is
 * answered with problem+json and `Connection: close`; the why of each case is in docs/http.md.
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
  const members = value
    .split(',')
    .map((m) => m.replace(OWS, ''))
    .filter((m) => m !== '');
  const other = members.find((m) => m.toLowerCase() !== '100-continue');
  if (other === undefined) return null;
  const shown = other.length > 60 ? `${other.slice(0, 60)}…` : other;
  return {
    status: 417,
    code: 'expectation_failed',
    detail: `unsupported expectation ${JSON.stringify(shown)}; only 100-continue is supported`,
  };
}

/** Only HTTP/1.0 and HTTP/1.1 are served (the parser also accepts 0.9 and 2.0 request lines). */
export function versionProblem(major: number, minor: number): EarlyProblem | null {
  if (major === 1 && (minor === 0 || minor === 1)) return null;
  return { status: 400, code: 'malformed_request', detail: `HTTP/${major}.${minor} is not supported; use HTTP/1.1` };
}

export const CONNECT_PROBLEM: EarlyProblem = {
  status: 400,
  code: 'malformed_request',
  detail: 'CONNECT is not supported: this server is not a proxy',
};

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
