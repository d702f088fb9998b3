// The monitor report's findings: each finding of the run once, with its evidence as downloads and
// the offline commands that check it.
import { decodeHex } from '../encoding/hex.ts';
import { stringifyJson } from '../encoding/json.ts';
import { SIG_TYPE_ED25519 } from '../note/signed-note.ts';
import { formatVkey } from '../note/vkey.ts';
import { LOG_EQUIVOCATION_V } from '../verify/log-equivocation.ts';
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

/** What to call a piece of evidence in a download, and how to check it offline. */
function evidenceFiles(f: ReportFinding, n: number): { name: string; mime: string; body: string; label: string }[] {
  const ev = f.evidence;
  if (ev === undefined) return [];
  const base = `finding-${n}-${safeName(f.kind)}`;
  const files: { name: string; mime: string; body: string; label: string }[] = [];
  for (const [key, value] of Object.entries(ev)) {
    if (value === undefined || value === null || typeof value === 'number' || typeof value === 'boolean') continue;
    if (typeof value === 'string') {
      if (!value.includes('\n')) continue; // short strings (ids, roots) are in the JSON
      files.push({
        name: `${base}-${safeName(key)}.txt`,
        mime: 'text/plain',
        body: value,
        label: key === 'previous' || key === 'current' ? `${key} checkpoint` : key === 'a' || key === 'b' ? `checkpoint ${key}` : key,
      });
    } else {
      const who = (value as { witness?: unknown }).witness;
      const label =
        key === 'duplicity_proof'
          ? 'duplicity proof'
          : key === 'a' || key === 'b'
            ? `co-signed anchor ${key} (${typeof who === 'string' ? who : '?'})`
            : key;
      // SPEC §6.2: what did not verify is a bounded excerpt, and says so.
      const unverified = (value as { unverified?: unknown }).unverified === true;
      files.push({
        name: `${base}-${safeName(key)}${unverified ? '-unverified' : ''}.json`,
        mime: 'application/json',
        body: stringifyJson(value, 2) + '\n',
        label: unverified ? `${label} (unverified excerpt, not evidence of anything)` : label,
      });
    }
  }
  if (f.kind === 'log_equivocation' && ev.v === LOG_EQUIVOCATION_V)
    files.push({
      name: `${base}-log-equivocation.json`,
      mime: 'application/json',
      body: stringifyJson(ev, 2) + '\n',
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
  const origin = f.evidence?.origin;
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
