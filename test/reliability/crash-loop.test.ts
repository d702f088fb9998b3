// Crash loop: PROFILE.crashCycles (20) × SIGKILL of a witness child process (roles anchor and
// cosign) in the middle of mixed load — anchor submissions on many seeds and add-checkpoint
// requests for several logs. After EVERY restart, before new load: the log is audited from its
// tiles (entry bundles and hash tiles against the signed checkpoint; every checkpoint ever handed to
// a client is a prefix of it), every acknowledged anchor is at its leaf, no (seed, index) has two
// co-signed heads, and every log's cosigned checkpoint is at least the last acknowledged one, is the
// log's real root, and its cosignature time never went back. A client that lost its answer re-sends
// the identical request (SPEC §3.3: it gets the replay or the co-signature); a cosign client follows
// the 409's size, which must never be below what it was acknowledged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { decodeAnchor } from '../../src/anchor/codec.ts';
import type { AnchorWire } from '../../src/anchor/types.ts';
import { checkAnchors, CosignAudit, WitnessAudit, type AckedAnchor } from '../helpers/rel-audit.ts';
import { figures, httpRequest, PROFILE, round, sleep } from '../helpers/rel-common.ts';
import { cosignPublicKey, Lane, makeDeployment, NAME, ORIGIN, serveArgs, startServe, witnessPublicKey } from '../helpers/rel-node.ts';
import { tempDir } from '../helpers/tmp.ts';
import { holdHeavyLock } from '../helpers/heavy-lock.ts';

// One load-generating suite at a time (see heavy-lock.ts).
await holdHeavyLock();

const ANCHOR_WORKERS = 12;
const LOGS = 4;

void test(
  `crash loop: ${PROFILE.crashCycles} × SIGKILL under mixed anchor + add-checkpoint load; audited after every restart`,
  { timeout: 600_000 },
  async (t) => {
    const { dir, cleanup } = tempDir('aw-rel-crash-');
    const d = makeDeployment(dir, { logCount: LOGS });
    const audit = new WitnessAudit(ORIGIN, witnessPublicKey(d));
    const cosignAudit = new CosignAudit(NAME, cosignPublicKey(d));
    const lanes = Array.from({ length: ANCHOR_WORKERS }, (_, i) => new Lane(d.party, `crash-${i}`));
    const acked: AckedAnchor[] = [];
    const ackedSize = new Map<string, number>(d.logs.map((l) => [l.origin, 0]));
    const stats = {
      anchorAcks: 0,
      replaysAfterCrash: 0,
      checkpointAcks: 0,
      conflictsFollowed: 0,
      lostAnswers: 0,
      restarts: 0,
      startMs: [] as number[],
      auditMs: [] as number[],
      killedAfterMs: [] as number[],
    };
    let lastCycleAnchors = 0;

    const auditNow = async (url: string): Promise<void> => {
      const t0 = performance.now();
      const entries = await audit.audit(url);
      const found = checkAnchors(entries, acked);
      assert.equal(found.found, acked.length, 'acknowledged anchors missing');
      assert.equal(audit.equivocations, 0, 'two checkpoints of one size with different roots');
      for (const log of d.logs) {
        const size = await cosignAudit.size(url, log);
        assert.ok(
          size >= ackedSize.get(log.origin)!,
          `${log.origin}: cosigned size ${size} is below the acknowledged ${ackedSize.get(log.origin)!}`,
        );
      }
      stats.auditMs.push(performance.now() - t0);
    };

    try {
      for (let cycle = 0; cycle <= PROFILE.crashCycles; cycle++) {
        const t0 = performance.now();
        const w = await startServe(serveArgs(d, ['--log-level', 'warn']));
        stats.startMs.push(performance.now() - t0);
        stats.restarts++;
        try {
          await auditNow(w.url);
        } catch (e) {
          await w.kill();
          throw e;
        }
        if (cycle === PROFILE.crashCycles) {
          await w.stop();
          break;
        }
        let alive = true;
        const agent = new http.Agent({ keepAlive: true, maxSockets: ANCHOR_WORKERS + LOGS });
        const anchorWorkers = lanes.map(async (lane) => {
          while (alive) {
            let a;
            try {
              a = await httpRequest(`${w.url}/v1/anchor`, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: lane.body(),
                agent,
                timeoutMs: 10_000,
              });
            } catch {
              stats.lostAnswers++; // killed mid-request: outcome unknown, re-send the same anchor next cycle
              return;
            }
            assert.equal(a.status, 200, a.text);
            const b = JSON.parse(a.text) as { anchor: AnchorWire; replay: boolean; inclusion: { leaf_index: number; checkpoint: string } };
            const anchor = decodeAnchor({ ...b.anchor, cumulative: String(b.anchor.cumulative) });
            assert.equal(anchor.index, lane.next);
            acked.push({ anchor, leafIndex: b.inclusion.leaf_index });
            audit.record(b.inclusion.checkpoint);
            stats.anchorAcks++;
            if (b.replay) stats.replaysAfterCrash++;
            lane.next++;
          }
        });
        const cosignWorkers = d.logs.map(async (log) => {
          let old = ackedSize.get(log.origin)!;
          while (alive) {
            const size = old + 1 + Math.floor(Math.random() * 4);
            let a;
            try {
              a = await httpRequest(`${w.url}/add-checkpoint`, { method: 'POST', body: log.request(old, size), agent, timeoutMs: 10_000 });
            } catch {
              stats.lostAnswers++;
              return;
            }
            if (a.status === 409) {
              // the witness is ahead: an answer was lost in a crash; never behind an acknowledgement
              const stored = Number(a.text.trim());
              assert.ok(
                stored >= ackedSize.get(log.origin)!,
                `${log.origin}: 409 says ${stored}, acknowledged ${ackedSize.get(log.origin)!}`,
              );
              old = stored;
              stats.conflictsFollowed++;
              continue;
            }
            assert.equal(a.status, 200, `${log.origin} old ${old} → ${size}: ${a.status} ${a.text}`);
            ackedSize.set(log.origin, size);
            stats.checkpointAcks++;
            old = size;
          }
        });
        const before = stats.anchorAcks;
        const killAfter = 150 + Math.random() * 450;
        await sleep(killAfter);
        stats.killedAfterMs.push(killAfter);
        await w.kill();
        alive = false;
        await Promise.all([...anchorWorkers, ...cosignWorkers]);
        agent.destroy();
        lastCycleAnchors = stats.anchorAcks - before;
      }
      const f = {
        sigkills: PROFILE.crashCycles,
        restarts: stats.restarts,
        writes_acknowledged: { anchors: stats.anchorAcks, add_checkpoints: stats.checkpointAcks },
        writes_found: { anchors: acked.length, cosigned_sizes_at_or_above_ack: LOGS },
        answers_lost_in_kills: stats.lostAnswers,
        resent_and_replayed: stats.replaysAfterCrash,
        cosign_409_followed: stats.conflictsFollowed,
        equivocations: audit.equivocations,
        checkpoints_checked_as_prefix: audit.seen.size,
        audits: audit.audits,
        final_log_size: audit.lastSize,
        kill_after_ms: { min: round(Math.min(...stats.killedAfterMs), 0), max: round(Math.max(...stats.killedAfterMs), 0) },
        restart_ms: {
          mean: round(stats.startMs.reduce((a, b) => a + b, 0) / stats.startMs.length, 0),
          max: round(Math.max(...stats.startMs), 0),
        },
        audit_ms_max: round(Math.max(...stats.auditMs), 0),
        anchors_in_last_cycle: lastCycleAnchors,
      };
      figures(t, 'crash-loop', f);
      assert.ok(stats.anchorAcks > PROFILE.crashCycles * 5, 'too little load between kills');
      assert.ok(stats.checkpointAcks > PROFILE.crashCycles, 'too little cosign load between kills');
    } finally {
      cleanup();
    }
  },
);
