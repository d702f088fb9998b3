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
} from '../client/monitor.ts';
import { action, addHttpOptions, examples, EXIT, hexArg, httpOptions, readWitnessSet, type HttpFlags } from './client-io.ts';
import { collectList, intArg } from './options.ts';
import { ClientError } from '../client/errors.ts';
import { encodeHex } from '../encoding/hex.ts';
import { ProtocolError } from '../errors.ts';
import { parseRegistry, type Registry } from '../anchor/registry.ts';
import { readDocument } from '../config/config-file.ts';

interface MonitorFlags extends HttpFlags {
  witness?: string[];
  seed?: string[];
  witnessSet?: string;
  registry?: string;
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

/** The parties' keys: the SPEC §3.2 registry file (JSON, or YAML by extension), as the witnesses read it. */
function readRegistry(path: string): Registry {
  let doc: unknown;
  try {
    doc = readDocument(path);
  } catch (e) {
    throw new ClientError('usage', `--registry ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    return parseRegistry(doc);
  } catch (e) {
    throw new ClientError('usage', `--registry ${path}: ${e instanceof ProtocolError ? e.message : String(e)}`);
  }
}

function printHuman(report: PollReport, findings: Finding[]): void {
  const out: string[] = [];
  const ws = report.witnesses
    .map((w) => (w.reachable ? `${w.name ?? w.url} (log ${w.logSize ?? '?'})` : `${w.url} unreachable`))
    .join(', ');
  out.push(`${formatTimestamp(report.time)} polled ${ws}: ${findings.length === 0 ? 'no new findings' : `${findings.length} finding(s)`}`);
  for (const f of findings) {
    out.push(`${f.severity === 'alert' ? 'ALERT' : 'WARNING'} ${f.kind}: ${f.message}`);
    const ev = f.evidence;
    if (ev === undefined) continue;
    if (ev.duplicity_proof !== undefined)
      out.push(`  duplicity proof (check with: anchor-witness verify duplicity FILE):\n  ${stringifyJson(ev.duplicity_proof)}`);
    if (f.kind === 'disagreement' || f.kind === 'equivocation') {
      for (const k of ['a', 'b'] as const) {
        const side = ev[k] as { witness: string; anchor: unknown; cosignature: unknown };
        out.push(`  ${side.witness} co-signed: ${stringifyJson({ anchor: side.anchor, cosignature: side.cosignature })}`);
      }
    }
    if (f.kind === 'forged_anchor') out.push(`  co-signed: ${stringifyJson({ anchor: ev.anchor, cosignature: ev.cosignature })}`);
    if (f.kind === 'log_equivocation') {
      out.push(`  checkpoint a:\n${indent(String(ev.a))}`);
      out.push(`  checkpoint b:\n${indent(String(ev.b))}`);
    }
    if (f.kind === 'log_rollback' || f.kind === 'log_inconsistent') {
      out.push(`  previous checkpoint:\n${indent(String(ev.previous))}`);
      out.push(`  current checkpoint:\n${indent(String(ev.current))}`);
      if (ev.consistency_proof !== undefined)
        out.push(
          `  old root from tiles ${String(ev.old_root_from_tiles)}; consistency proof from it to the current root: ${stringifyJson(ev.consistency_proof)}`,
        );
    }
  }
  process.stdout.write(out.join('\n') + '\n');
}

const indent = (text: string): string =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');

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
          "the parties' keys (SPEC §3.2 registry, JSON or YAML): only anchors and duplicity proofs signed under them count; required with --seed or --all-duplicities",
        )
        .option('--state <file>', 'what the monitor has seen, kept across restarts (recommended; without it nothing persists)')
        .option('--interval <seconds>', 'seconds between polls', intArg(1, 86_400), 60)
        .option('--once', 'poll once; exit 1 when there is any finding')
        .option('--json', 'one JSON object per poll on stdout')
        .option('--withholding-grace <seconds>', 'report a witness behind the others only after this long', intArg(0), 0)
        .option('--all-duplicities', "also page through every witness's stored duplicity proofs")
        .option(
          '--html <file>',
          'after every poll, (re)write a self-contained HTML report: index over time per witness and seed, findings with their evidence',
        ),
      [
        'anchor-witness monitor --witness https://w1.example,https://w2.example,https://w3.example --registry registry.json --seed 34bd10b6ba98832e3303b89981018793572ce78a82ff45bc4446772e80ca6012 --state monitor.json',
        'anchor-witness monitor --once --json --witness-set set.json --registry registry.json --witness https://w1.example --witness https://w2.example --seed $SEED --state monitor.json',
        'anchor-witness monitor --interval 30 --withholding-grace 120 --witness https://w1.example --witness https://w2.example --state monitor.json',
        'anchor-witness monitor --once --witness https://w1.example,https://w2.example --registry registry.json --seed $SEED --state monitor.json --html report.html',
      ],
    ),
  ).action(
    action(async (opts: MonitorFlags) => {
      const witnesses = opts.witness ?? [];
      if (witnesses.length === 0) throw new ClientError('usage', 'give at least one --witness URL');
      const seeds = (opts.seed ?? []).map((s) => encodeHex(hexArg(32, '--seed')(s)));
      if ((seeds.length > 0 || opts.allDuplicities === true) && opts.registry === undefined) {
        throw new ClientError(
          'usage',
          "--seed and --all-duplicities need --registry FILE: the parties' keys (an anchor a party never signed must not count)",
        );
      }
      let state: MonitorState = emptyMonitorState();
      if (opts.state !== undefined) {
        const doc = readJsonFile(opts.state);
        if (doc !== undefined) state = parseMonitorState(doc);
      } else if (opts.once !== true) {
        process.stderr.write(
          'warning: no --state: what the monitor sees is forgotten when it stops (a rolled-back witness would go unnoticed)\n',
        );
      }
      const config: MonitorConfig = {
        witnesses,
        seeds,
        withholdingGraceSec: opts.withholdingGrace,
        allDuplicities: opts.allDuplicities === true,
        http: httpOptions(opts),
        ...(opts.witnessSet !== undefined ? { witnessSet: readWitnessSet(opts.witnessSet) } : {}),
        ...(opts.registry !== undefined ? { registry: readRegistry(opts.registry) } : {}),
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
        const report = await monitorPoll(config, state, Math.floor(Date.now() / 1000));
        if (opts.state !== undefined) writeJsonAtomic(opts.state, state);
        if (opts.html !== undefined) {
          polls.push(report);
          if (polls.length > MAX_REPORT_POLLS) polls.splice(0, polls.length - MAX_REPORT_POLLS);
          writeFileAtomic(opts.html, renderMonitorReport({ state, polls, generatedAt: report.time }), 0o644);
        }
        // In a long run, a standing condition is printed once; --once prints everything that holds.
        const fresh = opts.once === true ? report.findings : report.findings.filter((f) => !printed.has(f.id));
        for (const f of fresh) printed.add(f.id);
        if (opts.json === true)
          process.stdout.write(stringifyJson({ time: formatTimestamp(report.time), witnesses: report.witnesses, findings: fresh }) + '\n');
        else printHuman(report, fresh);
        if (opts.once === true) {
          process.exitCode = report.findings.length > 0 ? EXIT.finding : EXIT.ok;
          return;
        }
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, opts.interval * 1000);
          wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
      }
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }),
  );
}
