// Slow and many clients: PROFILE.slowSockets (1 000 by default) concurrent slowloris sockets —
// a third drip their headers one line a second, a third send headers and then drip the body a
// byte a second, a third connect and say nothing — against a witness child process with the
// default limits (deadline 10 s, 4 096 connections, 64 per client IP). The sockets come from 20+
// loopback source addresses (127.0.0.2 …, all of 127.0.0.0/8 is loopback on Linux) so each stays
// under the per-IP cap; health probes and valid submissions come from 127.0.0.1 meanwhile.
// Expected: health p99 < 100 ms, every valid request served (200), every slow socket answered
// 408 request_timeout and closed by the deadline (+ the 250 ms check interval), idle ones closed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { figures, httpRequest, loopbackAddresses, percentile, PROFILE, round, sleep } from '../helpers/rel-common.ts';
import { Lane, makeDeployment, serveArgs, startServe } from '../helpers/rel-node.ts';
import { tempDir } from '../helpers/tmp.ts';
import { holdHeavyLock } from '../helpers/heavy-lock.ts';

// One load-generating suite at a time (see heavy-lock.ts).
await holdHeavyLock();

const DEADLINE_MS = 10_000;
const PER_ADDRESS = 50;

function openFiles(): number {
  const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
  return m === null || m[1] === 'unlimited' ? Infinity : Number(m[1]);
}

type Kind = 'headers' | 'body' | 'idle';

interface SlowResult {
  kind: Kind;
  status: number;
  code: string;
  closed: boolean;
  /** ms from the first byte sent (connect for idle) to the answer or the close */
  ms: number;
  error?: string;
}

function slowSocket(port: number, localAddress: string, kind: Kind, maxMs: number): Promise<SlowResult> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: '127.0.0.1', localAddress });
    let t0 = performance.now();
    let buf = '';
    let drip: NodeJS.Timeout | undefined;
    let done = false;
    const finish = (closed: boolean, error?: string): void => {
      if (done) return;
      done = true;
      clearInterval(drip);
      clearTimeout(cap);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(buf)?.[1] ?? 0);
      const code = /"code":"([a-z_]+)"/.exec(buf)?.[1] ?? '';
      sock.destroy();
      resolve({ kind, status, code, closed, ms: performance.now() - t0, ...(error === undefined ? {} : { error }) });
    };
    const cap = setTimeout(() => {
      finish(false, 'still open');
    }, maxMs);
    sock.setNoDelay(true);
    sock.on('connect', () => {
      t0 = performance.now();
      if (kind === 'idle') return;
      if (kind === 'headers') {
        sock.write('POST /v1/anchor HTTP/1.1\r\nHost: witness\r\n');
        let i = 0;
        drip = setInterval(
          () => {
            sock.write(`X-Drip-${i++}: ${'a'.repeat(8)}\r\n`);
          },
          1_000 + Math.random() * 200,
        );
      } else {
        sock.write('POST /v1/anchor HTTP/1.1\r\nHost: witness\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{');
        drip = setInterval(
          () => {
            sock.write(' ');
          },
          1_000 + Math.random() * 200,
        );
      }
    });
    sock.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
    });
    sock.on('close', () => {
      finish(true);
    });
    sock.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ECONNRESET' || e.code === 'EPIPE') return;
      finish(true, e.code ?? e.message);
    });
  });
}

void test(
  `slowloris: ${PROFILE.slowSockets} slow sockets; health p99 < 100 ms, valid requests served, slow sockets 408 and closed`,
  { timeout: 180_000 },
  async (t) => {
    const n = PROFILE.slowSockets;
    const limit = openFiles();
    if (limit < n + 500) {
      t.skip(`ulimit -n is ${limit}; this test needs at least ${n + 500} (raise it with ulimit -n)`);
      return;
    }
    const { dir, cleanup } = tempDir('aw-rel-slow-');
    const d = makeDeployment(dir);
    const w = await startServe(serveArgs(d, ['--log-level', 'warn']));
    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 2 });
    try {
      const addresses = loopbackAddresses(Math.ceil(n / PER_ADDRESS));
      // Open the slow sockets in batches (the listen backlog is finite), then let them drip.
      const kinds: Kind[] = ['headers', 'body', 'idle'];
      const slow: Promise<SlowResult>[] = [];
      for (let i = 0; i < n; i++) {
        slow.push(slowSocket(w.port, addresses[Math.floor(i / PER_ADDRESS)]!, kinds[i % 3]!, DEADLINE_MS + 8_000));
        if (i % 100 === 99) await sleep(30);
      }
      let stormOver = false;
      const storm = Promise.all(slow).then((r) => {
        stormOver = true;
        return r;
      });

      // Health probes (~40/s) and valid submissions (anchors and add-checkpoints) until the storm ends.
      const health: number[] = [];
      const healthErrors: string[] = [];
      const probes = (async () => {
        while (!stormOver) {
          const t0 = performance.now();
          try {
            const a = await httpRequest(`${w.url}/health`, { agent: keepAlive, timeoutMs: 5_000 });
            if (a.status !== 200) healthErrors.push(String(a.status));
          } catch (e) {
            healthErrors.push((e as Error).message);
          }
          health.push(performance.now() - t0);
          await sleep(25);
        }
      })();
      const lane = new Lane(d.party, 'slowloris');
      const log = d.logs[0]!;
      const submitted = { anchors: 0, checkpoints: 0, failed: [] as string[], latencies: [] as number[] };
      const submitter = (async () => {
        let size = 0;
        while (!stormOver) {
          const a = await httpRequest(`${w.url}/v1/anchor`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: lane.body(),
            agent: keepAlive,
            timeoutMs: 15_000,
          });
          submitted.latencies.push(a.ms);
          if (a.status === 200) {
            submitted.anchors++;
            lane.next++;
          } else submitted.failed.push(`anchor ${a.status} ${a.text.slice(0, 100)}`);
          const c = await httpRequest(`${w.url}/add-checkpoint`, {
            method: 'POST',
            body: log.request(size, size + 3),
            agent: keepAlive,
            timeoutMs: 15_000,
          });
          submitted.latencies.push(c.ms);
          if (c.status === 200) {
            submitted.checkpoints++;
            size += 3;
          } else submitted.failed.push(`add-checkpoint ${c.status} ${c.text.slice(0, 100)}`);
          await sleep(100);
        }
      })();
      const peakDuring = (async () => {
        let peak = 0;
        while (!stormOver) {
          peak = Math.max(peak, w.rssKiB());
          await sleep(500);
        }
        return peak;
      })();
      const results = await storm;
      await Promise.all([probes, submitter]);
      const rssDuring = await peakDuring;

      const by = (k: Kind) => results.filter((r) => r.kind === k);
      const summary = (k: Kind) => {
        const r = by(k);
        const times = r.map((x) => x.ms);
        const statuses: Record<string, number> = {};
        for (const x of r)
          statuses[
            `${x.status}${x.code === '' ? '' : ` ${x.code}`}${x.closed ? '' : ' (open)'}${x.error === undefined ? '' : ` ${x.error}`}`
          ] =
            (statuses[
              `${x.status}${x.code === '' ? '' : ` ${x.code}`}${x.closed ? '' : ' (open)'}${x.error === undefined ? '' : ` ${x.error}`}`
            ] ?? 0) + 1;
        return {
          sockets: r.length,
          answers: statuses,
          close_ms_min: round(Math.min(...times), 0),
          close_ms_max: round(Math.max(...times), 0),
        };
      };
      const metrics = await httpRequest(`${w.url}/metrics`);
      const open = Number(/^http_open_connections (\d+)/m.exec(metrics.text)?.[1] ?? NaN);
      const f = {
        slow_sockets: n,
        source_addresses: addresses.length,
        per_address: PER_ADDRESS,
        deadline_ms: DEADLINE_MS,
        slow_headers: summary('headers'),
        slow_body: summary('body'),
        idle: summary('idle'),
        health: {
          probes: health.length,
          errors: healthErrors.length,
          p50_ms: round(percentile(health, 50)),
          p99_ms: round(percentile(health, 99)),
          max_ms: round(Math.max(...health)),
        },
        valid: {
          anchors: submitted.anchors,
          add_checkpoints: submitted.checkpoints,
          failed: submitted.failed.length,
          p50_ms: round(percentile(submitted.latencies, 50)),
          p99_ms: round(percentile(submitted.latencies, 99)),
        },
        open_connections_after: open,
        server_rss_mib_during: round(rssDuring / 1024),
        server_peak_rss_mib: round(w.peakRssKiB() / 1024),
      };
      figures(t, 'slowloris', f);

      assert.deepEqual(healthErrors, []);
      assert.ok(f.health.p99_ms < 100, `health p99 ${f.health.p99_ms} ms`);
      assert.deepEqual(submitted.failed, []);
      assert.ok(submitted.anchors > 0 && submitted.checkpoints > 0);
      for (const r of [...by('headers'), ...by('body')]) {
        assert.equal(r.status, 408, `${r.kind}: ${JSON.stringify(r)}`);
        assert.equal(r.code, 'request_timeout');
        assert.ok(r.closed, `${r.kind}: not closed`);
        assert.ok(r.ms < DEADLINE_MS + 1_500, `${r.kind}: answered after ${round(r.ms)} ms`);
      }
      for (const r of by('idle')) {
        assert.ok(r.closed, `idle socket still open after ${round(r.ms)} ms`);
        assert.ok(r.ms < DEADLINE_MS + 1_500, `idle socket closed after ${round(r.ms)} ms`);
      }
      assert.ok(open <= 4, `${open} connections still open after the storm`);
    } finally {
      keepAlive.destroy();
      await w.stop();
      cleanup();
    }
  },
);
