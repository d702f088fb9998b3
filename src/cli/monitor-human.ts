/**
 * The monitor's human output: one line per poll, then each new finding with its evidence in the
 * form an operator checks it in (`anchor-witness verify …`).
 */
import { stringifyJson } from '../encoding/json.ts';
import { formatTimestamp } from '../encoding/time.ts';
import { unhandledKind, type Finding, type PollReport } from '../client/monitor.ts';

/** One poll's report and its new findings, as printed (ends with a newline). */
export function formatHuman(
  report: PollReport,
  findings: Finding[],
  files: ReadonlyMap<string, string>,
  alerts: { sent: number; pending: number } | undefined,
): string {
  const out: string[] = [];
  const ws = report.witnesses
    .map((w) => (w.reachable ? `${w.name ?? w.url} (log ${w.logSize ?? '?'})` : `${w.url} unreachable`))
    .join(', ');
  const alerted = alerts === undefined ? '' : `; alerts: ${alerts.sent} sent, ${alerts.pending} pending`;
  out.push(
    `${formatTimestamp(report.time)} polled ${ws}: ${findings.length === 0 ? 'no new findings' : `${findings.length} finding(s)`}${alerted}`,
  );
  for (const f of findings) {
    out.push(`${f.severity === 'alert' ? 'ALERT' : f.severity === 'info' ? 'INFO' : 'WARNING'} ${f.kind}: ${f.message}`);
    out.push(...evidenceLines(f, files));
  }
  return out.join('\n') + '\n';
}

const indent = (text: string): string =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');

const duplicityProofLine = (proof: unknown): string =>
  `  duplicity proof (check with: anchor-witness verify duplicity FILE):\n  ${stringifyJson(proof)}`;

/** A finding's evidence, in the form an operator checks it in. */
function evidenceLines(f: Finding, files: ReadonlyMap<string, string>): string[] {
  switch (f.kind) {
    case 'disagreement':
    case 'equivocation': {
      const ev = f.evidence;
      return [
        ...(ev.duplicity_proof === undefined ? [] : [duplicityProofLine(ev.duplicity_proof)]),
        ...[ev.a, ev.b].map(
          (side) => `  ${side.witness} co-signed: ${stringifyJson({ anchor: side.anchor, cosignature: side.cosignature })}`,
        ),
      ];
    }
    case 'duplicity':
      return [duplicityProofLine(f.evidence.duplicity_proof)];
    case 'forged_duplicity': {
      // The party's key did not sign it: nothing to check with `verify duplicity` (SPEC §6.2).
      const ev = f.evidence.duplicity_proof;
      const size = `${String(ev.bytes)} bytes, sha256 ${ev.sha256}${ev.truncated ? ', first 4 KiB' : ''}`;
      return [
        `  what the witness served as a duplicity proof (unverified excerpt, not evidence of anything: the party's key did not sign it; ${size}):`,
        `  ${ev.excerpt}`,
      ];
    }
    case 'forged_anchor':
      return [`  co-signed: ${stringifyJson({ anchor: f.evidence.anchor, cosignature: f.evidence.cosignature })}`];
    case 'log_equivocation': {
      const ev = f.evidence;
      const out = [`  checkpoint a:\n${indent(ev.a)}`, `  checkpoint b:\n${indent(ev.b)}`];
      if (ev.consistency_proof !== undefined)
        out.push(
          `  root of b's first leaves from its tiles ${String(ev.old_root_from_tiles)}; consistency proof: ${stringifyJson(ev.consistency_proof)}`,
        );
      const file = files.get(f.id);
      if (file !== undefined)
        out.push(`  evidence written to ${file} (check it with: anchor-witness verify log-equivocation FILE --log-vkey VKEY)`);
      return out;
    }
    case 'log_rollback':
      return [`  previous checkpoint:\n${indent(f.evidence.previous)}`, `  current checkpoint:\n${indent(f.evidence.current)}`];
    case 'log_inconsistent': {
      const ev = f.evidence;
      return [
        `  previous checkpoint:\n${indent(ev.previous)}`,
        `  current checkpoint:\n${indent(ev.current)}`,
        `  old root from tiles ${ev.old_root_from_tiles}; consistency proof from it to the current root: ${stringifyJson(ev.consistency_proof)}`,
      ];
    }
    case 'withholding':
    case 'log_unwitnessed':
    case 'seed_dark':
    case 'anchor_rollback':
    case 'tiles_mismatch':
    case 'invalid_response':
    case 'key_changed':
    case 'unknown_witness':
    case 'unreachable':
    case 'witness_key_rotated':
    case 'witness_key_rotation_invalid':
      return []; // in --json and the --html report
    default:
      return unhandledKind(f);
  }
}
