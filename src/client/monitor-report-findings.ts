// The monitor report's findings: each finding of the run once, with its evidence as downloads and
// the offline commands that check it.
import { decodeHex } from '../encoding/hex.ts';
import { stringifyJson } from '../encoding/json.ts';
import { SIG_TYPE_ED25519 } from '../note/signed-note.ts';
import { formatVkey } from '../note/vkey.ts';
import { unhandledKind } from './monitor/findings.ts';
import { formatUtc } from '../pages/format.ts';
import { dataUrl, html, shellCommand, type SafeHtml } from '../pages/html.ts';
import type { ReportFinding, ReportPoll, ReportState } from './monitor-report-input.ts';

const safeName = (s: string): string => s.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60);

export interface FindingView {
  finding: ReportFinding;
  /** Poll times it was first and last reported (undefined without polls). */
  first?: number;
  last?: number;
  current: boolean;
}

/** Every finding of the run once (latest copy), with when it was first and last reported. */
export function collectFindings(polls: readonly ReportPoll[]): FindingView[] {
  const byId = new Map<string, FindingView>();
  const latest = polls.at(-1);
  for (const p of polls) {
    for (const f of p.findings) {
      const v = byId.get(f.id);
      if (v === undefined) byId.set(f.id, { finding: f, first: p.time, last: p.time, current: false });
      else {
        v.finding = f;
        v.last = p.time;
      }
    }
  }
  for (const f of latest?.findings ?? []) byId.get(f.id)!.current = true;
  const rank = (v: FindingView): number => (v.current ? 0 : 2) + (v.finding.severity === 'alert' ? 0 : 1);
  return [...byId.values()].sort((a, b) => rank(a) - rank(b) || (a.first ?? 0) - (b.first ?? 0) || (a.finding.id < b.finding.id ? -1 : 1));
}

interface EvidenceFile {
  name: string;
  mime: string;
  body: string;
  label: string;
}

/** One field of a finding's evidence, with what to call it in a download. */
interface Piece {
  key: string;
  value: unknown;
  label: string;
  /** SPEC §6.2: what did not verify is a bounded excerpt, and says so. */
  unverified?: boolean;
}

const piece = (key: string, value: unknown, label = key): Piece => ({ key, value, label });
const excerpt = (key: string, value: unknown, label: string): Piece => ({ key, value, label, unverified: true });

/** A finding's evidence fields in the order the monitor writes them, named per kind. */
function evidencePieces(f: ReportFinding): Piece[] {
  switch (f.kind) {
    case 'withholding': {
      const ev = f.evidence;
      return [piece('index', ev.index), piece('expected', ev.expected), piece('by', ev.by), piece('since', ev.since)];
    }
    case 'disagreement':
    case 'equivocation': {
      const ev = f.evidence;
      return [
        piece('index', ev.index),
        piece('a', ev.a, `co-signed anchor a (${ev.a.witness})`),
        piece('b', ev.b, `co-signed anchor b (${ev.b.witness})`),
        ...(ev.duplicity_proof === undefined ? [] : [piece('duplicity_proof', ev.duplicity_proof, 'duplicity proof')]),
      ];
    }
    case 'duplicity':
      return [piece('duplicity_proof', f.evidence.duplicity_proof, 'duplicity proof')];
    case 'forged_duplicity':
      return [excerpt('duplicity_proof', f.evidence.duplicity_proof, 'duplicity proof')];
    case 'forged_anchor':
      return [piece('anchor', f.evidence.anchor), piece('cosignature', f.evidence.cosignature)];
    case 'log_rollback':
      return [piece('previous', f.evidence.previous, 'previous checkpoint'), piece('current', f.evidence.current, 'current checkpoint')];
    case 'log_equivocation': {
      const ev = f.evidence;
      return [
        piece('v', ev.v),
        piece('origin', ev.origin),
        piece('a', ev.a, 'checkpoint a'),
        piece('b', ev.b, 'checkpoint b'),
        piece('old_root_from_tiles', ev.old_root_from_tiles),
        piece('consistency_proof', ev.consistency_proof),
      ];
    }
    case 'log_inconsistent': {
      const ev = f.evidence;
      return [
        piece('previous', ev.previous, 'previous checkpoint'),
        piece('current', ev.current, 'current checkpoint'),
        piece('old_root_from_tiles', ev.old_root_from_tiles),
        piece('consistency_proof', ev.consistency_proof),
      ];
    }
    case 'log_unwitnessed':
      return [piece('checkpoint', f.evidence.checkpoint)];
    case 'seed_dark': {
      const ev = f.evidence;
      return [piece('index', ev.index), piece('timestamp', ev.timestamp), piece('witness', ev.witness), piece('dark_after', ev.dark_after)];
    }
    case 'anchor_rollback':
      return [piece('previous', f.evidence.previous), piece('current', f.evidence.current)];
    case 'invalid_response':
      return f.evidence === undefined ? [] : [excerpt('checkpoint', f.evidence.checkpoint, 'checkpoint')];
    case 'witness_key_rotated':
    case 'witness_key_rotation_invalid':
      return [piece('entry', f.evidence.entry)];
    case 'tiles_mismatch':
    case 'key_changed':
    case 'unknown_witness':
    case 'unreachable':
      return [];
    default:
      return unhandledKind(f);
  }
}

/** What to call a piece of evidence in a download, and how to check it offline. */
function evidenceFiles(f: ReportFinding, n: number): EvidenceFile[] {
  const ev = f.evidence;
  if (ev === undefined) return [];
  const base = `finding-${n}-${safeName(f.kind)}`;
  const files: EvidenceFile[] = [];
  for (const { key, value, label, unverified = false } of evidencePieces(f)) {
    if (value === undefined || value === null || typeof value === 'number' || typeof value === 'boolean') continue;
    if (typeof value === 'string') {
      if (!value.includes('\n')) continue; // short strings (ids, roots) are in the JSON
      files.push({ name: `${base}-${safeName(key)}.txt`, mime: 'text/plain', body: value, label });
    } else {
      files.push({
        name: `${base}-${safeName(key)}${unverified ? '-unverified' : ''}.json`,
        mime: 'application/json',
        body: stringifyJson(value, 2) + '\n',
        label: unverified ? `${label} (unverified excerpt, not evidence of anything)` : label,
      });
    }
  }
  if (f.kind === 'log_equivocation')
    files.push({
      name: `${base}-log-equivocation.json`,
      mime: 'application/json',
      body: stringifyJson(f.evidence, 2) + '\n',
      label: 'log-equivocation evidence',
    });
  files.push({
    name: `${base}-evidence.json`,
    mime: 'application/json',
    body:
      stringifyJson(
        { finding: { id: f.id, kind: f.kind, severity: f.severity, message: f.message, witness: f.witness, seed: f.seed }, evidence: ev },
        2,
      ) + '\n',
    label: 'all evidence (JSON)',
  });
  return files;
}

/** Offline checks for the evidence files (commands to copy). */
function checks(f: ReportFinding, files: { name: string }[], state: ReportState): string[] {
  const out: string[] = [];
  const file = (suffix: string): string | undefined => files.find((x) => x.name.endsWith(suffix))?.name;
  const proof = file('-duplicity_proof.json');
  if (proof !== undefined) out.push(shellCommand(['anchor-witness', 'verify', 'duplicity', proof]));
  const prev = file('-previous.txt');
  const cur = file('-current.txt');
  const pin = f.witness === undefined ? undefined : state.witnesses[f.witness];
  if (prev !== undefined && cur !== undefined && pin !== undefined) {
    out.push(shellCommand(['anchor-witness', 'verify', 'checkpoint', prev, '--witness-key', pin.public_key, '--origin', pin.log_origin]));
    out.push(shellCommand(['anchor-witness', 'verify', 'checkpoint', cur, '--witness-key', pin.public_key, '--origin', pin.log_origin]));
  }
  const a = file('-a.txt');
  const b = file('-b.txt');
  if (f.kind === 'log_equivocation' && a !== undefined && b !== undefined && pin !== undefined) {
    out.push(shellCommand(['anchor-witness', 'verify', 'checkpoint', a, '--witness-key', pin.public_key, '--origin', pin.log_origin]));
    out.push(shellCommand(['anchor-witness', 'verify', 'checkpoint', b, '--witness-key', pin.public_key, '--origin', pin.log_origin]));
  }
  const evidence = file('-log-equivocation.json');
  const origin = f.kind === 'log_equivocation' ? f.evidence.origin : undefined;
  const log = Object.values(state.witnesses).find((w) => w.log_origin === origin);
  if (evidence !== undefined && log !== undefined) {
    try {
      const vkey = formatVkey(log.log_origin, SIG_TYPE_ED25519, decodeHex(log.public_key, 32));
      out.push(shellCommand(['anchor-witness', 'verify', 'log-equivocation', evidence, '--log-vkey', vkey]));
    } catch {
      // a recorded key or origin that makes no vkey: no command to offer
    }
  }
  return out;
}

export function findingBlock(v: FindingView, n: number, state: ReportState): SafeHtml {
  const f = v.finding;
  const files = evidenceFiles(f, n);
  const cmds = checks(f, files, state);
  const when =
    v.first === undefined
      ? ''
      : v.first === v.last
        ? html` · reported ${formatUtc(v.first)}`
        : html` · reported ${formatUtc(v.first)} – ${formatUtc(v.last ?? v.first)}`;
  return html`<article class="finding ${f.severity}" id="finding-${n}" data-kind="${f.kind}">
<p><span class="pill ${f.severity}">${f.severity}</span><strong>${f.kind}</strong>${v.current ? html` <span class="pill">holds now</span>` : html` <span class="pill">no longer reported</span>`}${when}</p>
<p class="message">${f.message}</p>
<p class="muted">${f.witness === undefined ? '' : html`witness <code>${f.witness}</code> `}${f.seed === undefined ? '' : html`seed <code>${f.seed}</code>`}</p>
${
  files.length === 0
    ? ''
    : html`<p class="downloads">Evidence: ${files.map((x) => html`<a download="${x.name}" href="${dataUrl(x.mime, x.body)}">${x.label}</a>`)}</p>
${cmds.length === 0 ? '' : html`<pre class="checks">${cmds.join('\n')}</pre>`}
<details><summary>show the evidence</summary><pre class="evidence">${stringifyJson(f.evidence, 2)}</pre></details>`
}
</article>`;
}
