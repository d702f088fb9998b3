/**
 * Errors of the shared HTTP layer.
 *
 *  - `HttpProblem`: what a handler (or a hook) throws to answer with an RFC 9457 problem. The error
 *    handler turns it into `application/problem+json` with exactly these status, code, detail and
 *    headers. A route's codes belong to its module's union (e.g. WitnessProblemCode,
 *    BridgeErrorCode); the codes this layer answers by itself are ServerProblemCode.
 *  - `ServerConfigError`: a bad option given to `createServer` / the flag parsers. The CLI prints it
 *    and exits.
 */
import { CodedError, ProtocolError } from '../errors.ts';

/** The problems the shared HTTP layer answers itself, before or around every route (docs/http.md). */
export type ServerProblemCode =
  | 'malformed_request' // Host, request line, CONNECT, bytes behind an upgrade
  | 'malformed_url'
  | 'malformed_body' // the default schema-failure codes, per part of the request
  | 'malformed_query'
  | 'malformed_params'
  | 'malformed_headers'
  | 'not_found'
  | 'method_not_allowed'
  | 'request_timeout'
  | 'body_too_large'
  | 'unsupported_media_type'
  | 'expectation_failed'
  | 'headers_too_large'
  | 'rate_limited'
  | 'overloaded'
  | 'store_unavailable'
  | 'signer_unavailable' // an external key cannot sign (SignerError, protocol §1.1)
  | 'not_ready' // GET /ready: the store or a needed signer is down (protocol §1.1)
  | 'internal';

export type ServerConfigErrorCode = 'invalid_cidr' | 'invalid_rate_limit' | 'invalid_option';

export class HttpProblem extends ProtocolError {
  readonly status: number;
  readonly detail: string;
  readonly headers: Readonly<Record<string, string>>;
  constructor(status: number, code: string, detail: string, headers: Readonly<Record<string, string>> = {}) {
    super(code, detail);
    this.status = status;
    this.detail = detail;
    this.headers = headers;
  }
}

export class ServerConfigError extends CodedError<ServerConfigErrorCode> {}
