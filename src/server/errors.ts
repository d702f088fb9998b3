/**
 * Errors of the shared HTTP layer.
 *
 *  - `HttpProblem`: what a handler (or a hook) throws to answer with an RFC 9457 problem. The error
 *    handler turns it into `application/problem+json` with exactly these status, code, detail and
 *    headers.
 *  - `ServerConfigError`: a bad option given to `createServer` / the flag parsers (`invalid_cidr`,
 *    `invalid_rate_limit`, `invalid_option`). The CLI prints it and exits.
 */
import { ProtocolError } from '../errors.ts';

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

export class ServerConfigError extends ProtocolError {}
