// The monitoring kit in deploy/: the Prometheus alert rules pass `promtool check rules` (Debian's
// `prometheus` package; .ci/run installs it), and every metric the rules and the Grafana dashboard
// name is exported on /metrics by a witness started with every role and feature that has metrics
// (anchor with a KEL source, cosign with an ML-DSA-44 key and a log list, a witnessed own log, a
// bastion) and by a bridge.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { parse as parseYaml } from 'yaml';
import { startBridge } from '../../src/bridge/node.ts';
import { ed25519KeyFromSeed, ed25519PrivateKeyToPem, ed25519PublicKeyBytes } from '../../src/crypto/ed25519.ts';
import { generateMlDsa44 } from '../../src/crypto/ml-dsa.ts';
import { signingKeyToPem } from '../../src/crypto/signing-key.ts';
import { writeNewKeyFile } from '../../src/keys/keyfile.ts';
import { SIG_TYPE_COSIGNATURE_V1 } from '../../src/note/signed-note.ts';
import { formatVkey } from '../../src/note/vkey.ts';
import { fill } from '../helpers/anchors.ts';
import { startFakeBastion } from '../helpers/fake-bastion.ts';
import { spawnServe } from '../helpers/spawn-serve.ts';
import { tempDir } from '../helpers/tmp.ts';
import { metricFamilies, promqlMetricNames } from '../helpers/promql.ts';

const DEPLOY = join(import.meta.dirname, '..', '..', 'deploy');
const ALERTS = join(DEPLOY, 'prometheus', 'alerts.yml');
const DASHBOARD = join(DEPLOY, 'grafana', 'anchor-witness.json');

/** `promtool`: $PROMTOOL, else the one on PATH; skip outside CI when missing, fail under CI=true. */
function promtool(): { bin: string } | { skip: string } | { fail: string } {
  const bin = process.env.PROMTOOL ?? 'promtool';
  if (spawnSync(bin, ['--version'], { stdio: 'ignore' }).status === 0) return { bin };
  const why = `${bin} not found (install Debian's: apt-get install -y prometheus; or set PROMTOOL)`;
  if (/^(1|true)$/i.test(process.env.CI ?? '')) return { fail: `${why}: CI=true, so the alert rules must be checked` };
  return { skip: `alert rules not checked with promtool: ${why}` };
}

const tool = promtool();

/** Exported families the dashboard leaves out on purpose (diagnostics, not operations). */
const IGNORED = new Set(['log_witness_lag_entries', 'log_witness_published_size', 'log_witnesses_reloads_total', 'build_info']);

void test('deploy/prometheus/alerts.yml passes promtool check rules', { skip: 'skip' in tool ? tool.skip : false }, (t) => {
  if ('fail' in tool) assert.fail(tool.fail);
  const bin = (tool as { bin: string }).bin;
  const r = spawnSync(bin, ['check', 'rules', ALERTS], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const found = /SUCCESS: (\d+) rules found/.exec(r.stdout + r.stderr);
  assert.ok(found !== null && Number(found[1]) >= 20, r.stdout);
  t.diagnostic(`promtool: ${found[1]} rules`);

  // the check can fail: a rule with a PromQL syntax error is refused
  const { dir, cleanup } = tempDir('aw-promtool-');
  try {
    const bad = join(dir, 'bad.yml');
    writeFileSync(bad, readFileSync(ALERTS, 'utf8').replace('delta(log_size[15m]) < 0', 'delta(log_size[15m] < 0'));
    const b = spawnSync(bin, ['check', 'rules', bad], { encoding: 'utf8' });
    assert.notEqual(b.status, 0, 'promtool accepted a broken expression');
  } finally {
    cleanup();
  }
});

interface Dashboard {
  panels: { type: string; title: string; targets?: { expr: string }[]; datasource?: { uid: string } }[];
  templating: { list: { name: string; query?: unknown; definition?: string }[] };
}

function alertExpressions(): string[] {
  const doc = parseYaml(readFileSync(ALERTS, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] };
  return doc.groups.flatMap((g) => g.rules.map((r) => r.expr));
}

function dashboardExpressions(): string[] {
  const d = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
  const exprs: string[] = [];
  for (const p of d.panels) {
    if (p.type === 'row') continue;
    assert.ok((p.targets ?? []).length > 0, `panel "${p.title}" has no query`);
    assert.equal(p.datasource?.uid, '${datasource}', `panel "${p.title}" does not use the datasource variable`);
    for (const t of p.targets!) exprs.push(t.expr);
  }
  for (const v of d.templating.list) if (v.definition !== undefined) exprs.push(v.definition.replace(/^label_values\(([^,]+),.*$/, '$1'));
  return exprs;
}

function writeKey(path: string, seed: number): string {
  writeNewKeyFile(path, ed25519PrivateKeyToPem(ed25519KeyFromSeed(fill(seed))));
  return path;
}

/** /metrics of a witness with every feature that has metrics, and of a bridge. */
async function scrapeAll(dir: string): Promise<{ witness: string; bridge: string }> {
  const key = writeKey(join(dir, 'witness.pem'), 0x41);
  const cosign = writeKey(join(dir, 'cosign.pem'), 0x42);
  const mldsa = join(dir, 'cosign-mldsa.pem');
  writeNewKeyFile(mldsa, signingKeyToPem({ algorithm: 'ml-dsa-44', ...generateMlDsa44() }));
  const bastionKey = writeKey(join(dir, 'bastion.pem'), 0x43);
  const kels = join(dir, 'kels');
  mkdirSync(kels);
  const registry = join(dir, 'registry.json');
  writeFileSync(registry, JSON.stringify({ parties: [] }));
  const logs = join(dir, 'logs.json');
  writeFileSync(logs, JSON.stringify({ logs: [] }));
  const list = join(dir, 'log-list.txt');
  writeFileSync(list, 'logs/v0\n');
  // a peer witness of the own log that never answers (its metrics exist from the start)
  const peers = join(dir, 'log-witnesses.json');
  writeFileSync(
    peers,
    JSON.stringify({
      quorum: 1,
      witnesses: [
        {
          url: 'http://127.0.0.1:9/',
          vkeys: [formatVkey('peer.example/w', SIG_TYPE_COSIGNATURE_V1, ed25519PublicKeyBytes(ed25519KeyFromSeed(fill(0x44))))],
        },
      ],
    }),
  );
  const fake = await startFakeBastion();
  const stops: (() => Promise<unknown>)[] = [() => fake.close()];
  try {
    const ca = join(dir, 'bastion-ca.pem');
    writeFileSync(ca, fake.ca);
    const w = await spawnServe(
      [
        'serve',
        '--listen',
        '127.0.0.1:0',
        '--data-dir',
        join(dir, 'data'),
        '--name',
        'witness.test/metrics',
        '--roles',
        'anchor,cosign',
        '--key',
        key,
        '--cosign-key',
        `${cosign},${mldsa}`,
        '--registry',
        registry,
        '--kel-source',
        `dir:${kels}`,
        '--logs',
        logs,
        '--logs-list',
        list,
        '--log-witnesses',
        peers,
        '--bastion',
        fake.addr,
        '--bastion-key',
        bastionKey,
        '--bastion-ca',
        ca,
      ],
      { onOtherLine: () => {} }, // "bastion key hash …", "serving via bastion …"
    );
    stops.unshift(() => w.stop());
    const bridge = await startBridge(
      { host: '127.0.0.1', port: 0, dev: true, keyDir: join(dir, 'bridge-keys'), alg: 'ES256' },
      pino({ level: 'silent' }),
    );
    stops.unshift(() => bridge.close());
    const [witness, bridgeText] = await Promise.all([
      fetch(`${w.url}/metrics`).then((r) => r.text()),
      fetch(`${bridge.url}/metrics`).then((r) => r.text()),
    ]);
    return { witness, bridge: bridgeText };
  } finally {
    for (const stop of stops) await stop();
  }
}

void test('every metric named by the alert rules and the Grafana dashboard is exported', { timeout: 90_000 }, async (t) => {
  const alerts = alertExpressions();
  const dashboard = dashboardExpressions();
  const { dir, cleanup } = tempDir('aw-dash-');
  try {
    const { witness, bridge } = await scrapeAll(dir);
    const exported = new Set([...metricFamilies(witness), ...metricFamilies(bridge), 'up']);
    const missing: string[] = [];
    const named = new Set<string>();
    for (const [where, exprs] of [
      ['alerts.yml', alerts],
      ['dashboard', dashboard],
    ] as const) {
      for (const e of exprs) {
        for (const name of promqlMetricNames(e)) {
          named.add(name);
          if (!exported.has(name)) missing.push(`${where}: ${name} in ${e.replace(/\s+/g, ' ')}`);
        }
      }
    }
    assert.deepEqual(missing, [], `not on /metrics:\n${missing.join('\n')}`);
    assert.ok(named.size >= 35, `only ${named.size} metrics named`);
    // and the other way round: the dashboard shows every family the programs export
    const onDashboard = new Set(dashboard.flatMap(promqlMetricNames));
    const unshown = [...exported].filter((m) => m !== 'up' && !onDashboard.has(m) && !IGNORED.has(m));
    assert.deepEqual(unshown, [], 'exported but on no dashboard panel');
    t.diagnostic(
      `${named.size} metrics named by ${alerts.length} alert rules and ${dashboard.length} dashboard queries; ${exported.size - 1} exported`,
    );
  } finally {
    cleanup();
  }
});

void test('promqlMetricNames: metric names only (no functions, keywords, labels, strings or durations)', () => {
  assert.deepEqual(
    promqlMetricNames(
      'histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{route=~"/v1/anchor|x"}[5m]))) > 0.25 and on (instance) increase(anchors_cosigned_total[5m]) == 0',
    ),
    ['http_request_duration_seconds', 'anchors_cosigned_total'],
  );
  assert.deepEqual(promqlMetricNames('time() - logs_list_last_success_seconds{instance=~"$instance"} > 3 * 3600'), [
    'logs_list_last_success_seconds',
  ]);
  assert.deepEqual(promqlMetricNames('topk(10, cosign_origin_size) or vector(0)'), ['cosign_origin_size']);
  assert.deepEqual(promqlMetricNames('bridge_signing_keys{state="next"} offset 5m > 0'), ['bridge_signing_keys']);
  assert.deepEqual([...metricFamilies('# HELP a_b x\n# TYPE a_b counter\na_b 1\n# TYPE h histogram\nh_bucket{le="1"} 0\n')], ['a_b', 'h']);
});
