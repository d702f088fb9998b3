/**
 * The server side of bench/floor.ts: the least an HTTP server on this runtime can do for one
 * add-checkpoint-sized request (read the body, answer one text line), optionally with the request's
 * signature work done inline (one strict Ed25519 verify and one Ed25519 sign, as a cosignature
 * costs). Modes: `node-http`, `node-http-crypto` (node:http alone), `fastify`, `fastify-crypto`
 * (fastify 5 with the raw-body parser the cosign role uses). Prints the listening URL on stdout.
 * Not a witness: no parsing, no state, no store.
 */
import http from 'node:http';
import Fastify from 'fastify';
import { generateEd25519, signEd25519, verifyEd25519 } from '../src/crypto/ed25519.ts';

const mode = process.argv[2] ?? 'node-http';
const crypto = mode.endsWith('-crypto');
const key = generateEd25519();
const pub = key.publicKey;
const line = Buffer.from(
  '— witness.example/w AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\n',
);

/** The signature work of one add-checkpoint: verify the log's signature (here: over the body), sign a cosignature. */
function signatures(body: Uint8Array): void {
  const sig = signEd25519(key.privateKey, body.subarray(0, 128));
  if (!verifyEd25519(pub, body.subarray(0, 128), sig)) throw new Error('verify failed');
}

if (mode.startsWith('node-http')) {
  const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      if (crypto) signatures(body);
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': line.length });
      res.end(line);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const a = server.address() as { port: number };
    process.stdout.write(`http://127.0.0.1:${a.port}\n`);
  });
} else {
  const app = Fastify({ logger: false, keepAliveTimeout: 60_000, ajv: { customOptions: { removeAdditional: false, coerceTypes: false } } });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_r, body, done) => {
    done(null, body);
  });
  app.post('/add-checkpoint', async (request, reply) => {
    const body = request.body as Buffer;
    if (crypto) signatures(body);
    return reply.code(200).header('content-type', 'text/plain; charset=utf-8').send(line);
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  process.stdout.write(`${url}\n`);
}
