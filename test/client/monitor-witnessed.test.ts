// SPEC §4.1 "Clients" against real nodes: three anchor witnesses cosign each other's own logs
// (quorum 2); `monitor --log-cosigner … --log-quorum 2` finds every published checkpoint
// witnessed, and with every node also named as a --peer, the checkpoints their cosign roles serve
// at GET /<sha256(origin)>/checkpoint agree with each log's own (no log_equivocation). A fourth
// node without --log-witnesses publishes only its own signature: log_unwitnessed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseVkey } from '../../src/note/vkey.ts';
import { emptyMonitorState, monitorPoll, type MonitorConfig } from '../../src/client/monitor.ts';
import { anchorAt, makePeer, publishedCheckpoint, startPeer, type Peer } from '../helpers/log-witness-peers.ts';
import { until } from '../helpers/poll.ts';
import { tempDir } from '../helpers/tmp.ts';

let tmp: ReturnType<typeof tempDir>;
let peers: Peer[];
let lone: Peer;
before(async () => {
  tmp = tempDir('aw-monitor-witnessed-');
  peers = [await makePeer(1, tmp.dir), await makePeer(2, tmp.dir), await makePeer(3, tmp.dir)];
  lone = await makePeer(4, tmp.dir);
  for (const p of peers)
    await startPeer(
      p,
      peers.filter((q) => q !== p),
      {},
      2,
    );
  await startPeer(lone, []);
});
after(async () => {
  for (const p of [...peers, lone]) await p.node?.close();
  tmp.cleanup();
});

const publishedSize = async (p: Peer): Promise<number> => (await publishedCheckpoint(p)).cp.size;

void test('real nodes: witnessed checkpoints pass the quorum, peers agree; a node without log witnesses is log_unwitnessed', async () => {
  for (const p of peers) {
    const size = await anchorAt(p, 2);
    await until(`${p.name} to publish size ${size}`, async () => ((await publishedSize(p)) >= size ? true : undefined));
  }
  await anchorAt(lone, 1);
  const config: MonitorConfig = {
    witnesses: [...peers, lone].map((p) => p.url),
    seeds: [],
    http: { timeoutMs: 5000, retries: 0 },
    logCosigners: peers.map((p) => parseVkey(p.cosignVkey)),
    logQuorum: 2,
    peers: peers.map((p) => p.url),
  };
  const state = emptyMonitorState();
  const report = await monitorPoll(config, state, Math.floor(Date.now() / 1000));
  assert.deepEqual(
    report.findings.map((f) => `${f.kind} ${f.witness ?? ''}`),
    [`log_unwitnessed ${lone.name}`],
    report.findings.map((f) => f.message).join('\n'),
  );
  assert.match(report.findings[0]!.message, /0 of 2 required cosignatures/);
  // The peers' monitoring endpoints were read: each cosigned the two other logs.
  const seen = state.peer_checkpoints ?? [];
  for (const p of peers) {
    const origins = seen.filter((c) => c.note.startsWith(`${p.origin}\n`)).map((c) => c.peer);
    assert.equal(new Set(origins).size, 2, `${p.origin} seen from two peers: ${origins.join(', ')}`);
  }
});
