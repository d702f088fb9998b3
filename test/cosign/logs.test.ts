// Known logs (SPEC §5): the logs file, logs/v0 list import (new origins only), reloads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateEd25519 } from '../../src/crypto/ed25519.ts';
import { formatVkey } from '../../src/note/vkey.ts';
import { SIG_TYPE_COSIGNATURE_V1, SIG_TYPE_ED25519 } from '../../src/note/signed-note.ts';
import { KnownLogsSource, loadLogsFile, mergeKnownLogs, parseLogsConfig } from '../../src/cosign/logs.ts';
import type { KnownLog } from '../../src/cosign/logs.ts';
import { LogsConfigError } from '../../src/cosign/errors.ts';
import { tempDir } from '../helpers/tmp.ts';

const vkeyA = 'example.com/log+01882cac+ASVDuS/xCVURR2rcg2nbbdyTNmWhGXjdoUBO4QZsqVWd'; // Appendix C log vkey
const geomys = 'geomys.org/witness/test-log+c0787ff4+AeMb5VOzy60PTGdGmLPxOKGAa0jNyDGsgv2rnprGju1t';
const freshVkey = (name: string, type = SIG_TYPE_ED25519): string => formatVkey(name, type as 1, generateEd25519().publicKey);

function configError(doc: unknown, pattern: RegExp, own?: string): void {
  assert.throws(
    () => parseLogsConfig(doc, own),
    (e: unknown) => e instanceof LogsConfigError && e.code === 'invalid_logs_config' && pattern.test(e.message),
  );
}

void test('logs file: valid documents', () => {
  const rotated = freshVkey('example.com/log');
  const logs = parseLogsConfig({
    logs: [
      { origin: 'example.com/log', keys: [vkeyA, rotated], qpd: 86400 },
      { origin: 'geomys.org/witness/test-log', keys: [geomys] },
      // A vkey's name need not equal the origin (logs/v0 allows `origin` ≠ key name).
      { origin: 'other origin with spaces', keys: [freshVkey('signer.example')] },
    ],
  });
  assert.equal(logs.length, 3);
  assert.deepEqual(
    logs[0]!.verifiers.map((v) => v.vkey),
    [vkeyA, rotated],
  );
  assert.equal(logs[0]!.qpd, 86400);
  assert.equal(logs[1]!.qpd, undefined);
  assert.equal(logs[0]!.source, 'logs file');
  assert.deepEqual(parseLogsConfig({ logs: [] }), []);
});

void test('logs file: everything else is refused', () => {
  const ok = { origin: 'example.com/log', keys: [vkeyA] };
  configError([], /must be an object/);
  configError({ logs: [], extra: 1 }, /unknown member "extra"/);
  configError({ logs: {} }, /"logs" must be an array/);
  configError({ logs: [{ ...ok, bastion: 'x' }] }, /\/logs\/0: unknown member "bastion"/);
  configError({ logs: [{ keys: [vkeyA] }] }, /\/logs\/0\/origin/);
  configError({ logs: [{ ...ok, origin: '' }] }, /\/logs\/0\/origin/);
  configError({ logs: [{ ...ok, origin: 'a\nb' }] }, /\/logs\/0\/origin/);
  configError({ logs: [ok, ok] }, /\/logs\/1\/origin: "example.com\/log" is listed twice/);
  configError({ logs: [ok] }, /own log origin/, 'example.com/log');
  configError({ logs: [{ ...ok, keys: [] }] }, /\/logs\/0\/keys: must be a non-empty array/);
  configError({ logs: [{ ...ok, keys: vkeyA }] }, /\/logs\/0\/keys/);
  configError({ logs: [{ ...ok, keys: [vkeyA, vkeyA] }] }, /\/logs\/0\/keys\/1: duplicate key/);
  configError(
    { logs: [{ ...ok, keys: [freshVkey('w.example', SIG_TYPE_COSIGNATURE_V1)] }] },
    /is not a log key: type 0x01 \(Ed25519\) or 0x06/,
  );
  configError({ logs: [{ ...ok, keys: [vkeyA.replace('01882cac', '01882cad')] }] }, /\/logs\/0\/keys\/0: .*key ID/);
  configError(
    { logs: [{ ...ok, keys: ['example.com/log+01882cac+BiVDuS/xCVURR2rcg2nbbdyTNmWhGXjdoUBO4QZsqVWd'] }] },
    /ML-DSA-44 vkey key must be 1312 bytes/,
  );
  configError(
    { logs: [{ ...ok, keys: ['example.com/log+01882cac+BSVDuS/xCVURR2rcg2nbbdyTNmWhGXjdoUBO4QZsqVWd'] }] },
    /unsupported signature type 0x05/,
  );
  configError({ logs: [{ ...ok, keys: [42] }] }, /\/logs\/0\/keys\/0: must be a vkey string/);
  for (const qpd of [0, -1, 1.5, '10', null, 2e9]) configError({ logs: [{ ...ok, qpd }] }, /\/logs\/0\/qpd/);
});

void test('logs file: JSON (strict) and YAML by extension', () => {
  const { dir, cleanup } = tempDir();
  try {
    const yaml = join(dir, 'logs.yaml');
    writeFileSync(yaml, `logs:\n  - origin: example.com/log\n    keys:\n      - ${vkeyA}\n    qpd: 24\n`);
    const [l] = loadLogsFile(yaml);
    assert.equal(l!.origin, 'example.com/log');
    assert.equal(l!.qpd, 24);
    const json = join(dir, 'logs.json');
    writeFileSync(json, `{"logs":[{"origin":"a.example","keys":["${vkeyA}"],"origin":"b.example"}]}`);
    assert.throws(
      () => loadLogsFile(json),
      (e: unknown) => e instanceof LogsConfigError && /logs\.json/.test(e.message),
    );
  } finally {
    cleanup();
  }
});

function config(origin: string, vkey: string, qpd?: number): KnownLog {
  return parseLogsConfig({ logs: [{ origin, keys: [vkey], ...(qpd === undefined ? {} : { qpd }) }] })[0]!;
}

void test('logs file: "disabled" switches an (imported) origin off; the logs file wins over imports', () => {
  const imported = new Map<string, KnownLog>([
    ['example.com/log', { ...config('example.com/log', freshVkey('example.com/log'), 5), source: 'list l' }],
    ['geomys.org/witness/test-log', { ...config('geomys.org/witness/test-log', geomys), source: 'list l' }],
    ['c.example/log', { ...config('c.example/log', freshVkey('c.example/log')), source: 'list l' }],
  ]);
  const configured = parseLogsConfig({
    logs: [
      { origin: 'example.com/log', keys: [vkeyA], qpd: 7 },
      { origin: 'geomys.org/witness/test-log', disabled: true },
      { origin: 'c.example/log', keys: [freshVkey('c.example/log')], disabled: false },
    ],
  });
  assert.equal(configured[1]!.disabled, true);
  assert.deepEqual(configured[1]!.verifiers, []);
  const view = mergeKnownLogs(configured, imported);
  assert.deepEqual([...view.keys()].sort(), ['c.example/log', 'example.com/log']);
  assert.equal(view.get('example.com/log')!.qpd, 7);
  assert.equal(view.get('example.com/log')!.source, 'logs file');
  assert.equal(view.get('c.example/log')!.source, 'logs file');
  configError({ logs: [{ origin: 'a.example', disabled: 'yes' }] }, /\/logs\/0\/disabled/);
  configError({ logs: [{ origin: 'a.example', disabled: false }] }, /\/logs\/0\/keys/);
  configError({ logs: [{ origin: 'a.example', disabled: true, keys: ['x'] }] }, /\/logs\/0\/keys\/0/);
});

void test('KnownLogsSource: start-up refuses bad files; a bad reload keeps the previous copy; rename into place reloads', async () => {
  const { dir, cleanup } = tempDir();
  try {
    const file = join(dir, 'logs.json');
    writeFileSync(file, JSON.stringify({ logs: [{ origin: 'example.com/log', keys: [vkeyA] }] }));
    assert.throws(() => new KnownLogsSource({ logsFile: join(dir, 'missing.json') }), LogsConfigError);
    writeFileSync(join(dir, 'own.json'), JSON.stringify({ logs: [{ origin: 'own.example/anchors', keys: [vkeyA] }] }));
    assert.throws(() => new KnownLogsSource({ logsFile: join(dir, 'own.json'), ownOrigin: 'own.example/anchors' }), /own log origin/);

    const failures: string[] = [];
    const imported = new Map([[geomys.split('+')[0]!, config(geomys.split('+')[0]!, geomys)]]);
    const src = new KnownLogsSource({ logsFile: file, imported: () => imported, events: { failed: (r) => failures.push(r) } });
    assert.deepEqual([...src.current().keys()].sort(), ['example.com/log', 'geomys.org/witness/test-log']);
    writeFileSync(file, '{"logs": [');
    assert.equal(src.reload(), false);
    assert.equal(failures.length, 1);
    assert.equal(src.current().size, 2);
    // A new file renamed into place is picked up by the directory watch (debounced).
    src.start(20);
    const tmp = join(dir, 'logs.json.tmp');
    writeFileSync(
      tmp,
      JSON.stringify({
        logs: [
          { origin: 'example.com/log', keys: [vkeyA] },
          { origin: 'b.example/log', keys: [freshVkey('b.example/log')] },
        ],
      }),
    );
    renameSync(tmp, file);
    const deadline = Date.now() + 3000;
    while (!src.current().has('b.example/log') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    src.stop();
    assert.ok(src.current().has('b.example/log'));
    assert.equal(src.current().size, 3);
  } finally {
    cleanup();
  }
});
