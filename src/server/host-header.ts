/**
 * The Host header rule of RFC 9112 §3.2: a server MUST answer 400 to an HTTP/1.1 request without
 * a Host header, with more than one Host header line, or with an invalid Host value. Node's own
 * check (`requireHostHeader`) covers only the first case and answers it with a bare 400 (no
 * problem body, no request id); Node keeps the first of several Host lines and drops the rest,
 * so two hosts would reach the routes as one. The server turns this check off in Node and runs
 * this one on every request before routing.
 */

/** A Host value: RFC 3986 `host [ ":" port ]` (IP literal in brackets, IPv4, or reg-name; may be empty). */
const HOST_VALUE = /^(?:\[[0-9A-Fa-f:.]+\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)(?::[0-9]*)?$/;

/** Why the request's Host header is not acceptable, or null when it is. `rawHeaders` alternates names and values. */
export function hostHeaderProblem(httpVersionMajor: number, httpVersionMinor: number, rawHeaders: readonly string[]): string | null {
  let count = 0;
  let value = '';
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') {
      count++;
      value = rawHeaders[i + 1] ?? '';
    }
  }
  if (count > 1) return 'more than one Host header';
  if (count === 0) return httpVersionMajor === 1 && httpVersionMinor === 0 ? null : 'the Host header is missing (required in HTTP/1.1)';
  if (!HOST_VALUE.test(value)) return 'the Host header is not a valid host[:port]';
  return null;
}
