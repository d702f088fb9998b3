// SPEC §3.6.10 item 9: in each of 100 rounds, two conflicting ixns at one (prefix, sn) arrive at
// once — SQLite: two concurrent requests to one node; PostgreSQL: one to each of two replicas on
// one database. Exactly one is accepted (200) and the other gets 409 (a duplicity proof); the
// ledger holds one accepted event per sn.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { interact } from 'signify-ts';
import type { RunningWitness } from '../../src/witness/node.ts';
import { pgSkip, startPgServer } from '../helpers/pg-server.ts';
import { tempDir } from '../helpers/tmp.ts';
import { Controller, send, startKelNode } from './harness.ts';

const ROUNDS = 100;

async function race(a: RunningWitness, b: RunningWitness, tag: number): Promise<void> {
  const w = a.kel!.identity.prefix;
  assert.equal(b.kel!.identity.prefix, w);
  const ctl = await Controller.create(tag);
  const icp = ctl.incept([w]);
  assert.equal((await send(a.url, '/receipts', icp.raw, ctl.sign(icp))).status, 200);
  let tip = icp.said;
  for (let sn = 1; sn <= ROUNDS; sn++) {
    const x = interact({ pre: ctl.pre, dig: tip, sn, data: [], version: undefined, kind: undefined });
    const y = interact({ pre: ctl.pre, dig: tip, sn, data: [{ d: icp.said }], version: undefined, kind: undefined });
    const [rx, ry] = await Promise.all([send(a.url, '/receipts', x.raw, ctl.sign(x)), send(b.url, '/receipts', y.raw, ctl.sign(y))]);
    assert.deepEqual([rx.status, ry.status].sort(), [200, 409], `round ${sn}: ${rx.text} / ${ry.text}`);
    tip = rx.status === 200 ? x.said : y.said;
  }
  const accepted = await a.store.kelLedger.events(ctl.pre);
  assert.equal(accepted.length, ROUNDS + 1, 'one stored event per sn: the losers are never stored');
  assert.equal((await a.store.kelLedger.tip(ctl.pre))!.said, tip);
}

void test('SQLite: two concurrent conflicting ixns per round, 100 rounds: exactly one accepted', async (t) => {
  const tmp = tempDir();
  const node = await startKelNode(tmp.dir, { kelLimits: { prefixEventsPerMinute: 10_000, rateLimit: null } });
  t.after(async () => {
    await node.close();
    tmp.cleanup();
  });
  await race(node, node, 41);
});

const skip = pgSkip();
void describe('PostgreSQL', { skip }, () => {
  void test('two replicas on one database, one conflicting ixn each per round, 100 rounds: exactly one accepted', async (t) => {
    const server = await startPgServer();
    const tmp = tempDir();
    const url = await server.createDatabase('kelrace');
    const over = { store: url, kelLimits: { prefixEventsPerMinute: 10_000, rateLimit: null } };
    const a = await startKelNode(join(tmp.dir, 'a'), over);
    const b = await startKelNode(join(tmp.dir, 'b'), over);
    t.after(async () => {
      await a.close();
      await b.close();
      await server.stop();
      tmp.cleanup();
    });
    await race(a, b, 42);
  });
});
