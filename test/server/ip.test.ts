// IP parsing, CIDR matching and SPEC §2's client-IP rule (right-most untrusted X-Forwarded-For
// entry). Canonical IPv6 text per RFC 5952.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CidrSet,
  clientKey,
  formatIp,
  normalizeIp,
  parseCidr,
  parseForwardedEntry,
  parseIp,
  resolveClientIp,
} from '../../src/server/ip.ts';

void test('parseIp/formatIp: IPv4, IPv6, IPv4-mapped, RFC 5952 output', () => {
  const cases: [string, string][] = [
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['::FFFF:7f00:1', '127.0.0.1'],
    ['::1', '::1'],
    ['::', '::'],
    ['2001:DB8:0:0:0:0:2:1', '2001:db8::2:1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'], // first of two equal runs
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'], // a single zero group is not compressed
    ['fe80::1%eth0', 'fe80::1'],
    ['64:ff9b::192.0.2.33', '64:ff9b::c000:221'],
    ['1:2:3:4:5:6:7::', '1:2:3:4:5:6:7:0'],
  ];
  for (const [input, out] of cases) assert.equal(normalizeIp(input), out, input);
  for (const bad of [
    '',
    '1.2.3',
    '1.2.3.4.5',
    '256.1.1.1',
    '01.2.3.4',
    '1.2.3.4 ',
    ':::',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    '12345::',
    'g::1',
    '1:2:3:4:5:6:7:8::',
    'localhost',
  ]) {
    assert.equal(parseIp(bad), null, bad);
  }
});

void test('CIDR: IPv4 ranges match IPv4-mapped peers; IPv6 ranges; single hosts; bad input refused', () => {
  const set = new CidrSet(['10.0.0.0/8', '192.168.1.7', '2001:db8::/32', '::ffff:100.64.0.0/106']);
  const has = (a: string): boolean => set.contains(parseIp(a)!);
  assert.equal(has('10.255.1.2'), true);
  assert.equal(has('::ffff:10.1.2.3'), true);
  assert.equal(has('11.0.0.1'), false);
  assert.equal(has('192.168.1.7'), true);
  assert.equal(has('192.168.1.8'), false);
  assert.equal(has('2001:db8:ffff::1'), true);
  assert.equal(has('2001:db9::1'), false);
  assert.equal(has('100.127.255.255'), true); // 100.64/10 written as a mapped IPv6 range
  assert.equal(has('100.128.0.0'), false);
  assert.equal(new CidrSet(['0.0.0.0/0']).contains(parseIp('8.8.8.8')!), true);
  assert.equal(new CidrSet(['0.0.0.0/0']).contains(parseIp('2001:db8::1')!), false);
  assert.equal(new CidrSet(['::/0']).contains(parseIp('2001:db8::1')!), true);
  assert.deepEqual(formatIp(parseCidr('10.1.2.3/8').base), '10.0.0.0');
  for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/08', 'example.com', '10.0.0.0/-1']) {
    assert.throws(() => parseCidr(bad), { code: 'invalid_cidr' }, bad);
  }
});

void test('clientKey: IPv4 address, IPv6 /64', () => {
  assert.equal(clientKey(parseIp('::ffff:203.0.113.9')!), '203.0.113.9');
  assert.equal(clientKey(parseIp('2001:db8:1:2:aaaa::1')!), '2001:db8:1:2::/64');
  assert.equal(clientKey(parseIp('2001:db8:1:2:bbbb::2')!), '2001:db8:1:2::/64');
});

void test('X-Forwarded-For entries: ports and brackets stripped', () => {
  assert.equal(formatIp(parseForwardedEntry(' 203.0.113.1:4711 ')!), '203.0.113.1');
  assert.equal(formatIp(parseForwardedEntry('[2001:db8::1]:443')!), '2001:db8::1');
  assert.equal(formatIp(parseForwardedEntry('[2001:db8::1]')!), '2001:db8::1');
  assert.equal(parseForwardedEntry('unknown'), null);
  assert.equal(parseForwardedEntry('[2001:db8::1]x'), null);
});

void test('client IP: socket peer unless the peer is a trusted proxy, then right-most untrusted entry', () => {
  const trusted = new CidrSet(['127.0.0.0/8', '10.0.0.0/8']);
  const ip = (peer: string, xff: string | readonly string[] | undefined, t: CidrSet | null = trusted): string =>
    formatIp(resolveClientIp(peer, xff, t));
  // no trust configured: the header is ignored
  assert.equal(ip('127.0.0.1', '203.0.113.5', null), '127.0.0.1');
  // untrusted peer: header ignored (a client cannot spoof its address)
  assert.equal(ip('198.51.100.2', '203.0.113.5'), '198.51.100.2');
  // trusted peer: right-most entry not inside the trusted ranges
  assert.equal(ip('::ffff:127.0.0.1', '203.0.113.5'), '203.0.113.5');
  assert.equal(ip('127.0.0.1', '1.1.1.1, 203.0.113.5, 10.0.0.3'), '203.0.113.5');
  assert.equal(ip('127.0.0.1', ['1.1.1.1', '203.0.113.6, 10.1.1.1']), '203.0.113.6');
  // all entries trusted: the left-most one
  assert.equal(ip('127.0.0.1', '10.0.0.9, 10.0.0.3'), '10.0.0.9');
  // garbage before any untrusted entry: the last trusted hop, not the garbage
  assert.equal(ip('127.0.0.1', '203.0.113.5, bogus, 10.0.0.3'), '10.0.0.3');
  assert.equal(ip('127.0.0.1', undefined), '127.0.0.1');
  assert.equal(ip('127.0.0.1', ''), '127.0.0.1');
});
