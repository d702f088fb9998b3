/**
 * A fake witness on loopback for monitor tests, serving what test/helpers/malicious-witness.ts
 * mints under its (arbitrary) key: GET /health, /log/checkpoint (its whole log, or `checkpoint`
 * when set), /log/tile/… (from its leaf hashes), /v1/anchor/<seed> (`anchors`), and a peer's
 * monitoring endpoint /<sha256(origin) hex>/checkpoint (`monitoring`, by origin). `requests`
 * records every path asked for.
 */
import { createServer, type Server } from 'node:http';
import { sha256Hex } from '../../src/crypto/sha256.ts';
import { encodeHex } from '../../src/encoding/hex.ts';
import { stringifyJson } from '../../src/encoding/json.ts';
import { memoryHashReader } from '../../src/tlog/merkle.ts';
import { buildTile, parseTilePath } from '../../src/tlog/tiles.ts';
import { checkpointNote, type FakeWitness } from './malicious-witness.ts';
import { closeServer, listenLoopback } from './loopback.ts';

export class FakeWitnessServer {
  readonly w: FakeWitness;
  /** Served at /log/checkpoint instead of the note of all its leaves. */
  checkpoint: string | undefined;
  /** By seed hex: the 200 body of GET /v1/anchor/<seed>. */
  readonly anchors = new Map<string, unknown>();
  /** By log origin: the note served at /<sha256(origin)>/checkpoint. */
  readonly monitoring = new Map<string, string>();
  readonly requests: string[] = [];
  url = '';
  private server: Server | undefined;

  constructor(w: FakeWitness) {
    this.w = w;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0]!;
      this.requests.push(path);
      const send = (status: number, body: string | Uint8Array, type = 'application/json'): void => {
        res.writeHead(status, { 'content-type': type });
        res.end(body);
      };
      const byHash = /^\/([0-9a-f]{64})\/checkpoint$/.exec(path);
      if (path === '/health') {
        send(
          200,
          stringifyJson({
            status: 'ok',
            witness_name: this.w.name,
            roles: ['anchor', 'cosign'],
            version: 'test',
            log: { origin: this.w.origin, size: this.w.leaves.length },
            keys: { witness: encodeHex(this.w.publicKey), log_vkey: '', cosign_vkey: null },
          }),
        );
      } else if (path === '/log/checkpoint') {
        send(200, this.checkpoint ?? checkpointNote(this.w), 'text/plain; charset=utf-8');
      } else if (path.startsWith('/log/tile/')) {
        const tile = parseTilePath(path.slice('/log/'.length));
        if (tile.kind !== 'tile') send(404, '{}');
        else send(200, buildTile(tile, memoryHashReader(this.w.leaves)), 'application/octet-stream');
      } else if (path.startsWith('/v1/anchor/')) {
        const body = this.anchors.get(path.slice('/v1/anchor/'.length));
        if (body === undefined) send(404, stringifyJson({ code: 'not_found' }));
        else send(200, stringifyJson(body));
      } else if (byHash !== null) {
        const origin = [...this.monitoring.keys()].find((o) => sha256Hex(o) === byHash[1]);
        if (origin === undefined) send(404, 'this witness has not cosigned a checkpoint for that origin\n', 'text/plain');
        else send(200, this.monitoring.get(origin)!, 'text/plain; charset=utf-8');
      } else {
        send(404, stringifyJson({ code: 'not_found' }));
      }
    });
    this.url = `http://127.0.0.1:${await listenLoopback(this.server)}`;
    return this;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (s !== undefined) await closeServer(s);
  }
}
