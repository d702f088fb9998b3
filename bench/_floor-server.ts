/**
 * The server side of bench/floor.ts: the least an HTTP server on this runtime can do for one
 * add-checkpoint-sized request (read the body, answer one text line), optionally with the request's
 * signature work done inline (one strict Ed25519 verify and one Ed25519 sign, as a cosignature
 * costs). Modes: `node-http`, `node-http-crypto` (node:http alone), `fastify`, `fastify-crypto`
 * (fastify 5 with the raw-body parser the cosign role uses). Prints the listening URL on stdout.
 * Not a witness: no parsing, no state, no store.
 *
 * The anchor floor (`fastify-anchor`, `fastify-anchor-pool`): what POST /v1/anchor costs on this
 * stack without the witness's state. fastify 5, the witness's own strict JSON parser and anchor
 * codec, the two messages, the strict party-signature verify and the cosignature (inline, or on a
 * SignaturePool of one worker as the witness does on two cores), the leaf hash, and the 200 body
 * written by the witness's own cosignedBodyJson with an 11-hash proof. Left out: the registry
 * lookup, the sequencer and its batches, the store and its COMMIT, the Merkle tree and checkpoint,
 * the seed and quota caches, the hardening hooks.
 */
import http from 'node:http';
import Fastify from 'fastify';
import { generateEd25519, signEd25519, verifyEd25519 } from '../src/crypto/ed25519.ts';
import { decodeAnchor } from '../src/anchor/codec.ts';
import { cosignMessage, partyMessage } from '../src/anchor/messages.ts';
import { cosignedBodyJson } from '../src/anchoring/reply.ts';
import { SignaturePool } from '../src/anchoring/verify-pool.ts';
import { sha256 } from '../src/crypto/sha256.ts';
import { encodeHex } from '../src/encoding/hex.ts';
import { decodeUtf8, isJsonObject, parseStrictJson } from '../src/encoding/json.ts';
import { formatInclusion } from '../src/log/proofs.ts';

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
} else if (mode.startsWith('fastify-anchor')) {
  const pool = mode === 'fastify-anchor-pool' ? new SignaturePool(1, key.privateKey) : undefined;
  const witness = { name: 'witness.bench/w', publicKeyHex: encodeHex(pub) };
  const proof = Array.from({ length: 11 }, (_, i) => sha256(new Uint8Array([i])));
  const checkpoint = {
    size: 2000,
    root: sha256(new Uint8Array(1)),
    note: `witness.bench/w\n2000\n${Buffer.from(sha256(new Uint8Array(1))).toString('base64')}\n\n— witness.bench/w ${'A'.repeat(88)}\n`,
  };
  const bigIntegerKeys = new Set(['cumulative']);
  let leaves = 0;
  const app = Fastify({ logger: false, keepAliveTimeout: 60_000, ajv: { customOptions: { removeAdditional: false, coerceTypes: false } } });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_r, body, done) => {
    try {
      done(null, parseStrictJson(decodeUtf8(body as Buffer), { bigIntegerKeys }));
    } catch (e) {
      done(e as Error, undefined);
    }
  });
  app.post('/v1/anchor', async (request, reply) => {
    const body = request.body;
    if (!isJsonObject(body)) return reply.code(400).send('not an object');
    const anchor = decodeAnchor(body.anchor);
    const signed = partyMessage(anchor);
    const message = cosignMessage(anchor);
    const sig = anchor.sigParty;
    let signature: Uint8Array | undefined;
    if (pool !== undefined) {
      const r = await pool.verifyAndSign(sig.publicKey, signed, sig.signature, message);
      if (r.valid) signature = r.signature;
    } else if (verifyEd25519(sig.publicKey, signed, sig.signature)) {
      signature = signEd25519(key.privateKey, message);
    }
    if (signature === undefined) return reply.code(400).send('bad signature');
    sha256(new Uint8Array([0]), message); // the leaf hash
    const leafIndex = leaves++ % 2000;
    const record = {
      seedId: anchor.seedId,
      owner: 'did:keri:EParty0',
      createdAt: 0,
      latest: anchor,
      cosignature: { signature, timestamp: 1700000000, leafIndex },
    };
    const inclusion = formatInclusion('witness.bench/w', leafIndex, checkpoint, proof);
    return reply
      .code(200)
      .type('application/json; charset=utf-8')
      .send(cosignedBodyJson(witness, record, inclusion, false));
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  process.stdout.write(`${url}\n`);
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
