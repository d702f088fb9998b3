// The RFC 9112 §3.2 Host rule as a pure function (the server test covers it over sockets).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hostHeaderProblem } from '../../src/server/host-header.ts';

void test('hostHeaderProblem: count, version and value syntax', () => {
  const h = (...pairs: string[]) => pairs;
  assert.equal(hostHeaderProblem(1, 1, h('Host', 'witness.example')), null);
  assert.equal(hostHeaderProblem(1, 1, h('host', 'witness.example:443', 'Accept', '*/*')), null);
  assert.equal(hostHeaderProblem(1, 1, h('Host', '192.0.2.1:8080')), null);
  assert.equal(hostHeaderProblem(1, 1, h('Host', '[2001:db8::1]:8080')), null);
  assert.equal(hostHeaderProblem(1, 1, h('Host', 'xn--bcher-kva.example')), null);
  assert.equal(hostHeaderProblem(1, 1, h('Host', '')), null); // RFC 9112: empty when the target has no authority
  assert.equal(hostHeaderProblem(1, 0, h()), null);

  assert.match(hostHeaderProblem(1, 1, h()) ?? '', /missing/);
  assert.match(hostHeaderProblem(1, 1, h('Accept', '*/*')) ?? '', /missing/);
  assert.match(hostHeaderProblem(1, 0, h('Host', 'a', 'Host', 'a')) ?? '', /more than one/);
  assert.match(hostHeaderProblem(1, 1, h('Host', 'a', 'hOsT', 'b')) ?? '', /more than one/);
  for (const bad of ['a b', 'a/b', 'user@a', 'a?b', 'a#b', '[::1', '::1', 'a:port', '[::1]x', 'a%zz', 'a\\b', '"a"']) {
    assert.match(hostHeaderProblem(1, 1, h('Host', bad)) ?? '', /not a valid/, bad);
  }
  // a header whose name only contains "host" is not a Host header
  assert.match(hostHeaderProblem(1, 1, h('X-Forwarded-Host', 'a')) ?? '', /missing/);
});
