/**
 * `anchor-witness monitor`: poll witnesses, verify what they sign under pinned keys, and report
 * withholding, disagreement (with the duplicity evidence), anchors and duplicity proofs the party
 * never signed (party keys from --registry), split views, log rollback / inconsistency (proven
 * from tiles) and anchor rollback. What was seen persists in --state, written atomically after
 * every poll, so a restarted monitor cannot be fooled by a witness restored from an old copy.
 * Human output by default, --json for one JSON object per poll; --once exits 1 on any finding.
 */
import type { Command } from 'commander';
import { stringifyJson } from '../encoding/json.ts';
import { formatTimestamp } from '../encoding/time.ts';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from '../crypto/sha256.ts';
import { readJsonFile, writeFileAtomic, writeJsonAtomic } from '../client/files.ts';
import { renderMonitorReport } from '../client/monitor-report.ts';
import {
  emptyMonitorState,
  monitorPoll,
  parseMonitorState,
  type Finding,
  type MonitorConfig,
  type MonitorState,
  type PollReport,
  deliverDueAlerts,
  enqueueAlerts,
  nextAlertDue,
  parseWebhook,
  pendingAlerts,
  recordEpisodes,
  type AlertDelivery,
} from '../client/monitor.ts';
import { parseVkey, type NoteVerifier } from '../note/vkey.ts';
import { action, addHttpOptions, examples, EXIT, hexArg, httpOptions, readWitnessSet, type HttpFlags } from './client-io.ts';
import { collectList, durationArg, intArg, unitArg } from './options.ts';
import { encodeHex } from '../encoding/hex.ts';
import { ProtocolError } from '../errors.ts';
import { openMonitorParties, type MonitorParties } from './monitor-parties.ts';
import { formatHuman } from './monitor-human.ts';
import { UsageError } from '../verify/errors.ts';

interface MonitorFlags extends HttpFlags {
  alertWebhook?: string[];
  alertSecretFile?: string;
  darkAfter?: number;
  peer?: string[];
  logCosigner?: string[];
  logQuorum?: number;
  logVkey?: string[];
  evidenceDir?: string;
  witness?: string[];
  seed?: string[];
  witnessSet?: string;
  registry?: string;
  kelSource?: string;
  state?: string;
  interval: number;
  once?: boolean;
  json?: boolean;
  withholdingGrace: number;
  allDuplicities?: boolean;
  html?: string;
}

/** Polls kept in memory for the --html report's charts (the state's observations reach further back). */
const MAX_REPORT_POLLS = 1_000;

/** The HMAC key of --alert-secret-file: the file's bytes without one final newline (LF or CRLF); never empty. */
function readAlertSecret(path: string): Uint8Array {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new UsageError(`--alert-secret-file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  let end = bytes.length;
  if (end > 0 && bytes[end - 1] === 0x0a) end--;
  if (end > 0 && bytes[end - 1] === 0x0d) end--;
  if (end === 0) throw new UsageError(`--alert-secret-file ${path} is empty`);
  return new Uint8Array(bytes.subarray(0, end));
}

function vkeyArg(text: string, flag: string): NoteVerifier {
  try {
    return parseVkey(text);
  } catch (e) {
    throw new UsageError(`${flag} ${text}: ${e instanceof ProtocolError ? e.message : String(e)}`);
  }
}

function peerArg(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`--peer ${text}: not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UsageError(`--peer ${text}: must be http(s)://`);
  return text;
}

/** Each log_equivocation evidence document as a file (by the finding's id); the paths by finding id. */
function writeEvidence(dir: string, findings: readonly Finding[]): Map<string, string> {
  const files = new Map<string, string>();
  for (const f of findings) {
    if (f.kind !== 'log_equivocation') continue;
    mkdirSync(dir, { recursive: true });
    const path = join(dir, `log-equivocation-${sha256Hex(f.id).slice(0, 16)}.json`);
    writeJsonAtomic(path, f.evidence, 0o644);
    files.set(f.id, path);
  }
  return files;
}

export function addMonitorCommand(program: Command): void {
  addHttpOptions(
    examples(
      program
        .command('monitor')
        .description(
          'watch witnesses: withholding, disagreement (with duplicity evidence), anchors or duplicity proofs the party never signed, split views, log rollback or inconsistency (proven from tiles), anchor rollback',
        )
        .option('--witness <url...>', 'witness base URL (repeatable, or comma-separated)', collectList)
        .option('--seed <hex...>', 'seed id to watch (repeatable, or comma-separated)', collectList)
        .option(
          '--witness-set <file>',
          'pin witness keys and log origins from a witness set (default: trust on first use, recorded in --state)',
        )
        .option(
          '--registry <file>',
          "the parties' keys (docs/protocol.md §3.2 registry, JSON or YAML): only anchors and duplicity proofs signed under them count; required with --seed or --all-duplicities",
        )
        .option(
          '--kel-source <dir:PATH|git:PATH>',
          "with --registry: derive the parties' keys from key event logs as the witnesses do (docs/protocol.md §3.5; the same registry file and a copy of the same KEL source), read again before every poll",
        )
        .option('--state <file>', 'what the monitor has seen, kept across restarts (recommended; without it nothing persists)')
        .option('--interval <seconds>', 'time between polls (seconds, or 5m, 1h)', unitArg('s', 1, 86_400), 60)
        .option('--once', 'poll once; exit 1 when there is any finding')
        .option('--json', 'one JSON object per poll on stdout')
        .option(
          '--withholding-grace <seconds>',
          'report a witness behind the others only after this long (seconds, or 5m, 1h)',
          unitArg('s', 0),
          0,
        )
        .option('--all-duplicities', "also page through every witness's stored duplicity proofs")
        .option(
          '--html <file>',
          'after every poll, (re)write a self-contained HTML report: index over time per witness and seed, findings with their evidence',
        )
        .option(
          '--alert-webhook <url...>',
          'POST every new finding there as anchor-witness/alert/v1 JSON (repeatable; https://, or http:// on loopback; retried for 24 h, queued in --state)',
          collectList,
        )
        .option('--alert-secret-file <file>', 'sign alerts: X-Alert-Signature = sha256=HMAC-SHA256(file content, timestamp "." body)')
        .option(
          '--dark-after <duration>',
          "report seed_dark when a watched seed's newest co-signed anchor is older (90s, 5m, 1h, 7d)",
          durationArg(1),
        )
        .option(
          '--peer <url...>',
          "a peer witness whose monitoring endpoint GET /<sha256(origin)>/checkpoint is compared with each pinned log's own checkpoint (repeatable)",
          collectList,
        )
        .option(
          '--log-vkey <vkey...>',
          'pin a log key (type 0x01, or 0x06 ML-DSA-44; named after its origin) for checkpoints of that log (repeatable)',
          collectList,
        )
        .option(
          '--log-cosigner <vkey...>',
          "every witness's published /log/checkpoint must carry cosignatures of these (type 0x04, or 0x06 ML-DSA-44; repeatable), else log_unwitnessed",
          collectList,
        )
        .option('--log-quorum <k>', 'how many --log-cosigner witnesses suffice, counted by name (default: all)', intArg(1))
        .option(
          '--evidence-dir <dir>',
          'write each log_equivocation evidence file here (check it with: anchor-witness verify log-equivocation)',
        ),
      [
        'anchor-witness monitor --witness https://w1.example,https://w2.example,https://w3.example --registry registry.json --seed 34bd10b6ba98832e3303b89981018793572ce78a82ff45bc4446772e80ca6012 --state monitor.json',
        'anchor-witness monitor --once --json --witness-set set.json --registry registry.json --witness https://w1.example --witness https://w2.example --seed $SEED --state monitor.json',
        'anchor-witness monitor --interval 30 --withholding-grace 120 --witness https://w1.example --witness https://w2.example --state monitor.json',
        'anchor-witness monitor --once --witness https://w1.example,https://w2.example --registry registry.json --seed $SEED --state monitor.json --html report.html',
        'anchor-witness monitor --witness https://w1.example --registry registry.json --kel-source dir:kels --seed $SEED --state monitor.json',
        'anchor-witness monitor --witness https://w1.example --peer https://w2.example --log-cosigner "w2.example+1a2b3c4d+BA…" --log-cosigner "w3.example+5e6f7a8b+BA…" --log-quorum 1 --alert-webhook https://hooks.example/T0KEN --alert-secret-file alert.key --registry registry.json --seed $SEED --dark-after 7d --state monitor.json',
      ],
    ),
  ).action(
    action(async (opts: MonitorFlags) => {
      const witnesses = opts.witness ?? [];
      if (witnesses.length === 0 && (opts.peer ?? []).length === 0) throw new UsageError('give at least one --witness (or --peer) URL');
      const seeds = (opts.seed ?? []).map((s) => encodeHex(hexArg(32, '--seed')(s)));
      if ((seeds.length > 0 || opts.allDuplicities === true) && opts.registry === undefined) {
        throw new UsageError(
          "--seed and --all-duplicities need --registry FILE: the parties' keys (an anchor a party never signed must not count)",
        );
      }
      if (opts.kelSource !== undefined && opts.registry === undefined)
        throw new UsageError('--kel-source needs --registry: the registry file stays the list of parties (docs/protocol.md §3.5)');
      let state: MonitorState = emptyMonitorState();
      if (opts.state !== undefined) {
        const doc = readJsonFile(opts.state);
        if (doc !== undefined) state = parseMonitorState(doc);
      } else if (opts.once !== true) {
        process.stderr.write(
          'warning: no --state: what the monitor sees is forgotten when it stops (a rolled-back witness would go unnoticed)\n',
        );
      }
      const webhooks = (opts.alertWebhook ?? []).map(parseWebhook);
      if (webhooks.length === 0 && state.alerts !== undefined) {
        // Alerting is off: its episodes and queue go (an alert queued for a webhook no longer given is never sent).
        if (state.alerts.queue.length > 0)
          process.stderr.write(`alerts: ${state.alerts.queue.length} undelivered alert(s) dropped (no --alert-webhook)\n`);
        delete state.alerts;
      }
      if (opts.alertSecretFile !== undefined && webhooks.length === 0) throw new UsageError('--alert-secret-file needs --alert-webhook');
      const secret = opts.alertSecretFile === undefined ? undefined : readAlertSecret(opts.alertSecretFile);
      if (webhooks.length > 0 && opts.state === undefined)
        process.stderr.write(
          'warning: no --state: alerts not yet delivered are lost when the monitor stops, and every start alerts again\n',
        );
      const config: MonitorConfig = {
        witnesses,
        seeds,
        withholdingGraceSec: opts.withholdingGrace,
        allDuplicities: opts.allDuplicities === true,
        http: httpOptions(opts),
        ...(opts.witnessSet !== undefined ? { witnessSet: await readWitnessSet(opts.witnessSet) } : {}),
        ...(opts.logCosigner !== undefined ? { logCosigners: opts.logCosigner.map((v) => vkeyArg(v, '--log-cosigner')) } : {}),
        ...(opts.logQuorum !== undefined ? { logQuorum: opts.logQuorum } : {}),
        ...(opts.logVkey !== undefined ? { logKeys: opts.logVkey.map((v) => vkeyArg(v, '--log-vkey')) } : {}),
        ...(opts.peer !== undefined ? { peers: opts.peer.map(peerArg) } : {}),
        ...(opts.darkAfter !== undefined ? { darkAfterSec: opts.darkAfter } : {}),
      };
      const parties: MonitorParties | undefined =
        opts.registry === undefined ? undefined : await openMonitorParties(opts.registry, opts.kelSource);
      try {
        await watch(opts, config, state, parties, webhooks, secret);
      } finally {
        await parties?.close();
      }
    }),
  );
}

async function watch(
  opts: MonitorFlags,
  config: MonitorConfig,
  state: MonitorState,
  parties: MonitorParties | undefined,
  webhooks: ReturnType<typeof parseWebhook>[],
  secret: Uint8Array | undefined,
): Promise<void> {
  const delivery: AlertDelivery = {
    webhooks,
    ...(secret !== undefined ? { secret } : {}),
    http: httpOptions(opts),
    now: () => Date.now(),
    log: (line) => process.stderr.write(`${line}\n`),
  };
  const save = (): void => {
    if (opts.state !== undefined) writeJsonAtomic(opts.state, state);
  };
  let sent = 0;
  const deliver = async (): Promise<void> => {
    if (webhooks.length === 0) return;
    sent += (await deliverDueAlerts(state, delivery)).sent;
    save();
  };
  const printed = new Set<string>();
  const polls: PollReport[] = [];
  const ctl = { stop: false };
  let wake: (() => void) | undefined;
  const onSignal = (): void => {
    ctl.stop = true;
    wake?.();
  };
  if (opts.once !== true) {
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  while (!ctl.stop) {
    if (parties !== undefined) config.registry = await parties.current();
    const report = await monitorPoll(config, state, Math.floor(Date.now() / 1000));
    if (webhooks.length > 0) enqueueAlerts(state, recordEpisodes(state, report.findings, report.time), webhooks, Date.now());
    save(); // the queue is durable before any attempt
    await deliver();
    if (opts.html !== undefined) {
      polls.push(report);
      if (polls.length > MAX_REPORT_POLLS) polls.splice(0, polls.length - MAX_REPORT_POLLS);
      writeFileAtomic(opts.html, renderMonitorReport({ state, polls, generatedAt: report.time }), 0o644);
    }
    // In a long run, a standing condition is printed once; --once prints everything that holds.
    const fresh = opts.once === true ? report.findings : report.findings.filter((f) => !printed.has(f.id));
    for (const f of fresh) printed.add(f.id);
    const files = opts.evidenceDir === undefined ? new Map<string, string>() : writeEvidence(opts.evidenceDir, fresh);
    const alerts = webhooks.length === 0 ? undefined : { sent, pending: pendingAlerts(state) };
    sent = 0;
    if (opts.json === true)
      process.stdout.write(
        stringifyJson({
          time: formatTimestamp(report.time),
          witnesses: report.witnesses,
          findings: fresh,
          alerts_sent: alerts?.sent ?? 0,
          alerts_pending: alerts?.pending ?? 0,
        }) + '\n',
      );
    else process.stdout.write(formatHuman(report, fresh, files, alerts));
    if (opts.once === true) {
      // info findings (a verified witness-key rotation followed) report; they are not a failure
      process.exitCode = report.findings.some((f) => f.severity !== 'info') ? EXIT.finding : EXIT.ok;
      return;
    }
    // Sleep until the next poll, waking for every alert retry that falls due before it.
    const nextPoll = Date.now() + opts.interval * 1000;
    const stopped = (): boolean => ctl.stop;
    while (!stopped() && Date.now() < nextPoll) {
      const due = nextAlertDue(state);
      const until = Math.min(nextPoll, due ?? Number.POSITIVE_INFINITY);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.max(0, until - Date.now()));
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      if (!stopped() && due !== undefined && due <= Date.now()) await deliver();
    }
  }
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
}
