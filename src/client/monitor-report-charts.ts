// The monitor report's charts: per seed, the latest index each witness co-signed over time; per
// witness, its log size over the run; findings marked on both.
import { stepChart, type ChartMarker, type ChartPoint, type ChartSeries } from '../pages/chart.ts';
import { formatUtc } from '../pages/format.ts';
import { html, joinHtml, type SafeHtml } from '../pages/html.ts';
import type { FindingView } from './monitor-report-findings.ts';
import { unhandledKind, type Finding } from './monitor/findings.ts';
import type { ReportFinding, ReportPoll, ReportState } from './monitor-report-input.ts';

const short = (hex: string): string => (hex.length > 16 ? `${hex.slice(0, 16)}…` : hex);

/** Points (time, latest index) of one witness for one seed: observations first seen, then every poll. */
function seriesFor(seed: string, witness: string, state: ReportState, polls: readonly ReportPoll[]): ChartPoint[] {
  const raw: ChartPoint[] = [];
  for (const o of state.seeds[seed]?.observations ?? []) {
    if (o.witness === witness)
      raw.push({
        t: o.seen,
        v: o.anchor.index,
        note: `${witness}: index ${o.anchor.index}, head ${short(o.anchor.head)}, first seen ${formatUtc(o.seen)}`,
      });
  }
  for (const p of polls) {
    for (const w of p.witnesses) {
      if ((w.name ?? w.url) !== witness || !(seed in w.anchors)) continue;
      const v = w.anchors[seed] ?? null;
      raw.push({ t: p.time, v, note: `${witness}: ${v === null ? 'no anchor' : `index ${v}`} at poll ${formatUtc(p.time)}` });
    }
  }
  raw.sort((a, b) => a.t - b.t);
  const out: ChartPoint[] = [];
  for (const p of raw) {
    const prev = out.at(-1);
    if (prev !== undefined && prev.v === p.v) continue;
    out.push(p);
  }
  return out;
}
export function seedSection(
  seed: string,
  views: readonly FindingView[],
  state: ReportState,
  polls: readonly ReportPoll[],
  witnesses: readonly string[],
  generatedAt: number,
): SafeHtml {
  const names = witnesses.filter((w) => seriesFor(seed, w, state, polls).length > 0);
  const series: ChartSeries[] = names.map((w) => ({ label: w, points: seriesFor(seed, w, state, polls) }));
  const related = views.filter((v) => v.finding.seed === seed);
  const markers: ChartMarker[] = related.map((v) => {
    const idx = markerIndex(v.finding) ?? series.find((s) => s.label === v.finding.witness)?.points.at(-1)?.v ?? 0;
    return { t: v.first ?? generatedAt, v: idx, label: `${v.finding.kind}: ${v.finding.message}`, severity: markerSeverity(v.finding) };
  });
  const latest = names.map((w) => {
    const pts = seriesFor(seed, w, state, polls);
    const last = pts.at(-1);
    return html`<tr><td><code>${w}</code></td><td class="num">${last?.v ?? '—'}</td><td>${last === undefined ? '' : formatUtc(last.t)}</td><td class="num">${pts.length}</td></tr>`;
  });
  return html`<section class="seed" id="seed-${seed}">
<h3>Seed <code>${seed}</code></h3>
${related.length === 0 ? html`<p class="muted">No finding for this seed.</p>` : html`<p>${joinHtml(related.map((v) => html`<a href="#finding-${views.indexOf(v) + 1}"><span class="pill ${v.finding.severity}">${v.finding.kind}</span></a>`))}</p>`}
<figure>${stepChart({ title: `Latest co-signed index of seed ${seed} per witness over time`, series, markers, end: generatedAt, yLabel: 'index' })}
<figcaption>Latest index each witness co-signed for this seed (from the monitor's observations and this run's polls; a hollow dot is a poll where the witness had no anchor). Triangles mark findings.</figcaption></figure>
<details><summary>data</summary><table><thead><tr><th>witness</th><th class="num">latest index</th><th>since</th><th class="num">points</th></tr></thead><tbody>${latest}</tbody></table></details>
</section>`;
}
export function logSection(
  views: readonly FindingView[],
  polls: readonly ReportPoll[],
  witnesses: readonly string[],
  generatedAt: number,
): SafeHtml {
  const series: ChartSeries[] = [];
  for (const w of witnesses) {
    const pts: ChartPoint[] = [];
    for (const p of polls) {
      const s = p.witnesses.find((x) => (x.name ?? x.url) === w);
      if (s?.logSize !== undefined) pts.push({ t: p.time, v: s.logSize, note: `${w}: log size ${s.logSize} at ${formatUtc(p.time)}` });
    }
    if (pts.length > 0) series.push({ label: w, points: pts });
  }
  if (series.length === 0) return html``;
  const logKinds = new Set(['log_rollback', 'log_equivocation', 'log_inconsistent', 'tiles_mismatch']);
  const markers: ChartMarker[] = views
    .filter((v) => logKinds.has(v.finding.kind) && v.finding.witness !== undefined)
    .map((v) => ({
      t: v.first ?? generatedAt,
      v: series.find((s) => s.label === v.finding.witness)?.points.find((p) => p.t === v.first)?.v ?? 0,
      label: `${v.finding.kind}: ${v.finding.message}`,
      severity: markerSeverity(v.finding),
    }));
  return html`<h2 id="logs">Witness logs</h2>
<figure>${stepChart({ title: 'Log size per witness over this run', series, markers, end: generatedAt, yLabel: 'log size' })}
<figcaption>Each witness's log size at every poll of this run. Triangles mark log findings (rollback, split view, inconsistency, tiles).</figcaption></figure>`;
}

/** Where a finding sits on a seed's index axis: the index it names, else none. */
function markerIndex(f: ReportFinding): number | undefined {
  switch (f.kind) {
    case 'withholding':
      return f.evidence.index ?? f.evidence.expected;
    case 'disagreement':
    case 'equivocation':
    case 'seed_dark':
      return f.evidence.index;
    case 'duplicity':
    case 'forged_anchor':
    case 'forged_duplicity':
    case 'log_rollback':
    case 'log_equivocation':
    case 'log_inconsistent':
    case 'log_unwitnessed':
    case 'anchor_rollback':
    case 'tiles_mismatch':
    case 'invalid_response':
    case 'key_changed':
    case 'unknown_witness':
    case 'unreachable':
    case 'witness_key_rotated':
    case 'witness_key_rotation_invalid':
      return undefined;
    default:
      return unhandledKind(f);
  }
}

/** Charts mark alerts and the rest (an info finding is drawn as a warning). */
const markerSeverity = (f: Finding): ChartMarker['severity'] => (f.severity === 'alert' ? 'alert' : 'warning');
