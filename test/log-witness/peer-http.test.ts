// The one POST to a peer witness (src/log-witness/peer-http.ts) against loopback servers that try
// to hold or steer it: a peer that never answers, or trickles its body, is cut at the deadline; a
// body past the cap is abandoned; redirects come back as the 3xx they are; Retry-After is read.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { PeerFailure } from '../../src/log-witness/errors.ts';
import { httpPeerPost } from '../../src/log-witness/peer-http.ts';
import { closeServer, listenLoopback } from '../helpers/loopback.ts';

let server: http.Server;
let base: string;
let followed = 0;

before(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      switch (req.url) {
        case '/silent/add-checkpoint':
          return; // never answers
        case '/trickle/add-checkpoint': {
          res.writeHead(200, { 'content-type': 'text/plain' });
          const t = setInterval(() => {
            res.write('x');
          }, 50);
          res.on('close', () => {
            clearInterval(t);
          });
          return;
        }
        case '/big/add-checkpoint':
          // chunked: no length to refuse up front, the reader counts
          res.writeHead(200);
          res.write('y'.repeat(40_000));
          return void res.end('y'.repeat(40_000));
        case '/big-declared/add-checkpoint':
          return void res.writeHead(200, { 'content-length': String(10_000_000) }).end();
        case '/redirect/add-checkpoint':
          return void res.writeHead(302, { location: '/target' }).end();
        case '/target':
          followed++;
          return void res.writeHead(200).end('— followed\n');
        case '/limited/add-checkpoint':
          return void res.writeHead(429, { 'retry-after': '7' }).end('later\n');
        default:
          return void res.writeHead(409, { 'content-type': 'text/x.tlog.size' }).end('12\n');
      }
    });
  });
  base = `http://127.0.0.1:${await listenLoopback(server)}`;
});
after(async () => {
  await closeServer(server);
});

const post = httpPeerPost({ timeoutMs: 300, maxBytes: 64 * 1024 });
const failsWith = async (path: string, code: PeerFailure['code']): Promise<number> => {
  const t = performance.now();
  await assert.rejects(post(`${base}${path}`, 'old 0\n\nx\n'), (e: unknown) => e instanceof PeerFailure && e.code === code);
  return performance.now() - t;
};

void test('a peer that never answers, or trickles its body, is cut at the deadline', async () => {
  assert.ok((await failsWith('/silent/add-checkpoint', 'peer_unreachable')) < 2000);
  assert.ok((await failsWith('/trickle/add-checkpoint', 'peer_unreachable')) < 2000);
});

void test('a reply past 64 KiB (streamed or declared) is refused', async () => {
  await failsWith('/big/add-checkpoint', 'invalid_peer_response');
  await failsWith('/big-declared/add-checkpoint', 'invalid_peer_response');
});

void test('redirects are not followed; 409 bodies and Retry-After come back as sent', async () => {
  assert.equal((await post(`${base}/redirect/add-checkpoint`, 'b')).status, 302);
  assert.equal(followed, 0);
  assert.deepEqual(await post(`${base}/x/add-checkpoint`, 'b'), { status: 409, body: '12\n', retryAfterMs: undefined });
  assert.deepEqual(await post(`${base}/limited/add-checkpoint`, 'b'), { status: 429, body: 'later\n', retryAfterMs: 7000 });
  await assert.rejects(
    post('http://127.0.0.1:1/add-checkpoint', 'b'),
    (e: unknown) => e instanceof PeerFailure && e.code === 'peer_unreachable',
  );
});
