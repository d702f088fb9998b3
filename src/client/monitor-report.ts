/**
 * The monitor's HTML report (`anchor-witness monitor … --html FILE`, docs/client.md): one
 * self-contained file (no script, no external asset, a strict CSP in a `<meta>`) with per-seed
 * charts and the findings with their evidence. A pure function of the monitor's state and this
 * run's poll reports (structural subsets of `MonitorState` / `PollReport`); everything a witness
 * sent is escaped as hostile text.
 */
import { stringifyJson } from '../encoding/json.ts';
import { stepChart, type ChartMarker, type ChartPoint, type ChartSeries } from '../pages/chart.ts';
import { formatCount, formatDuration, formatUtc, plural } from '../pages/format.ts';
import { dataUrl, html, joinHtml, shellCommand, type SafeHtml } from '../pages/html.ts';
import { renderPage } from '../pages/layout.ts';

export interface ReportAnchor {
  index: number;
  head: string;
}

export interface ReportObservation {
  witness: string;
  anchor: ReportAnchor;
  /** Unix seconds, first seen. */
  seen: number;
}

export interface ReportState {
  witnesses: Record<string, { public_key: string; log_origin: string; checkpoint?: string | undefined }>;
  seeds: Record<string, { observations: readonly ReportObservation[] }>;
}

export interface ReportFinding {
  id: string;
  kind: string;
  severity: 'alert' | 'warning';
  message: string;
  witness?: string | undefined;
  seed?: string | undefined;
  evidence?: Record<string, unknown> | undefined;
}

export interface ReportWitnessStatus {
  url: string;
  name?: string | undefined;
  reachable: boolean;
  logSize?: number | undefined;
  anchors: Record<string, number | null>;
}

export interface ReportPoll {
  /** Unix seconds. */
  time: number;
  findings: readonly ReportFinding[];
  witnesses: readonly ReportWitnessStatus[];
}

export interface MonitorReportInput {
  state: ReportState;
  /** This run's polls, oldest first (the last is the current one). May be empty. */
  polls: readonly ReportPoll[];
  /** Unix seconds. */
  generatedAt: number;
  /** Findings shown at most (default 200); the rest are counted. */
  maxFindings?: number;
}

const short = (hex: string): string => (hex.length > 16 ? `${hex.slice(0, 16)}…` : hex);
const safeName = (s: string): string => s.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 60);

interface FindingView {
  finding: ReportFinding;
  /** Poll times it was first and last reported (undefined without polls). */
  first?: number;
  last?: number;
  current: boolean;
}

/** Every finding of the run once (latest copy), with when it was first and last reported. */
function collectFindings(polls: readonly ReportPoll[]): FindingView[] {
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
      files.push({ name: `${base}-${safeName(key)}.json`, mime: 'application/json', body: stringifyJson(value, 2) + '\n', label });
    }
  }
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
  return out;
}

function findingBlock(v: FindingView, n: number, state: ReportState): SafeHtml {
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
    <p>
      <span class="pill ${f.severity}">${f.severity}</span
      ><strong>${f.kind}</strong
      >${v.current ? html` <span class="pill">holds now</span>` : html` <span class="pill">no longer reported</span>`}${when}
    </p>
    <p class="message">${f.message}</p>
    <p class="muted">
      ${f.witness === undefined ? '' : html`witness <code>${f.witness}</code> `}${f.seed === undefined ? '' : html`seed <code>${f.seed}</code>`}
    </p>
    ${
      files.length === 0
        ? ''
        : html`<p class="downloads">
              Evidence: ${files.map((x) => html`<a download="${x.name}" href="${dataUrl(x.mime, x.body)}">${x.label}</a>`)}
            </p>
            ${cmds.length === 0 ? '' : html`<pre class="checks">${cmds.join('\n')}</pre>`}
            <details>
              <summary>show the evidence</summary>
              <pre class="evidence">${stringifyJson(f.evidence, 2)}</pre>
            </details>`
    }
  </article>`;
}

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

function seedSection(
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
    const ev = v.finding.evidence ?? {};
    const idx =
      typeof ev.index === 'number'
        ? ev.index
        : typeof ev.expected === 'number'
          ? ev.expected
          : (series.find((s) => s.label === v.finding.witness)?.points.at(-1)?.v ?? 0);
    return { t: v.first ?? generatedAt, v: idx, label: `${v.finding.kind}: ${v.finding.message}`, severity: v.finding.severity };
  });
  const latest = names.map((w) => {
    const pts = seriesFor(seed, w, state, polls);
    const last = pts.at(-1);
    return html`<tr>
      <td><code>${w}</code></td>
      <td class="num">${last?.v ?? '—'}</td>
      <td>${last === undefined ? '' : formatUtc(last.t)}</td>
      <td class="num">${pts.length}</td>
    </tr>`;
  });
  return html`<section class="seed" id="seed-${seed}">
    <h3>Seed <code>${seed}</code></h3>
    ${related.length === 0 ? html`<p class="muted">No finding for this seed.</p>` : html`<p>${joinHtml(related.map((v) => html`<a href="#finding-${views.indexOf(v) + 1}"><span class="pill ${v.finding.severity}">${v.finding.kind}</span></a>`))}</p>`}
    <figure>
      ${stepChart({ title: `Latest co-signed index of seed ${seed} per witness over time`, series, markers, end: generatedAt, yLabel: 'index' })}
      <figcaption>
        Latest index each witness co-signed for this seed (from the monitor's observations and this run's polls; a hollow dot is a poll
        where the witness had no anchor). Triangles mark findings.
      </figcaption>
    </figure>
    <details>
      <summary>data</summary>
      <table>
        <thead>
          <tr>
            <th>witness</th>
            <th class="num">latest index</th>
            <th>since</th>
            <th class="num">points</th>
          </tr>
        </thead>
        <tbody>
          ${latest}
        </tbody>
      </table>
    </details>
  </section>`;
}

function logSection(
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
      severity: v.finding.severity,
    }));
  return html`<h2 id="logs">Witness logs</h2>
    <figure>
      ${stepChart({ title: 'Log size per witness over this run', series, markers, end: generatedAt, yLabel: 'log size' })}
      <figcaption>
        Each witness's log size at every poll of this run. Triangles mark log findings (rollback, split view, inconsistency, tiles).
      </figcaption>
    </figure>`;
}

export function renderMonitorReport(input: MonitorReportInput): string {
  const { state, polls, generatedAt } = input;
  const views = collectFindings(polls);
  const max = input.maxFindings ?? 200;
  const latest = polls.at(-1);
  const witnessNames = [
    ...new Set([...Object.keys(state.witnesses), ...polls.flatMap((p) => p.witnesses.map((w) => w.name ?? w.url))]),
  ].sort();
  const seeds = [
    ...new Set([...Object.keys(state.seeds), ...polls.flatMap((p) => p.witnesses.flatMap((w) => Object.keys(w.anchors)))]),
  ].sort();
  const current = views.filter((v) => v.current);
  const alerts = current.filter((v) => v.finding.severity === 'alert').length;
  const warnings = current.length - alerts;
  const reachable = latest?.witnesses.filter((w) => w.reachable).length;

  const witnessRows = witnessNames.map((name) => {
    const rec = state.witnesses[name];
    const st = latest?.witnesses.find((w) => (w.name ?? w.url) === name);
    const status =
      st === undefined
        ? html`<span class="muted">not polled</span>`
        : st.reachable
          ? html`<span class="pill ok">reachable</span>`
          : html`<span class="pill warning">unreachable</span>`;
    let hw = '—';
    if (rec?.checkpoint !== undefined) {
      const line = rec.checkpoint.split('\n')[1];
      if (line !== undefined && /^[0-9]+$/.test(line)) hw = formatCount(Number(line));
    }
    return html`<tr>
      <td><code>${name}</code>${st === undefined ? '' : html`<br /><span class="muted">${st.url}</span>`}</td>
      <td>${status}</td>
      <td class="num">${st?.logSize === undefined ? '—' : formatCount(st.logSize)}</td>
      <td class="num">${hw}</td>
      <td>${rec === undefined ? '—' : html`<code>${rec.public_key}</code><br /><span class="muted">${rec.log_origin}</span>`}</td>
    </tr>`;
  });

  const shown = views.slice(0, max);
  const body = html`<section class="cards">
      <div class="card" id="summary-alerts">
        <div class="label">alerts now</div>
        <div class="value">${alerts}</div>
        <div class="note">${plural(warnings, 'warning')} now</div>
      </div>
      <div class="card" id="summary-witnesses">
        <div class="label">witnesses</div>
        <div class="value">${reachable === undefined ? witnessNames.length : `${reachable}/${latest!.witnesses.length}`}</div>
        <div class="note">${reachable === undefined ? 'known from the state' : 'reachable at the last poll'}</div>
      </div>
      <div class="card" id="summary-seeds">
        <div class="label">seeds watched</div>
        <div class="value">${seeds.length}</div>
        <div class="note">&nbsp;</div>
      </div>
      <div class="card" id="summary-polls">
        <div class="label">polls</div>
        <div class="value">${polls.length}</div>
        <div class="note">
          ${polls.length === 0 ? 'none in this run' : polls.length === 1 ? formatUtc(polls[0]!.time) : `over ${formatDuration(polls.at(-1)!.time - polls[0]!.time)}`}
        </div>
      </div>
    </section>
    <h2 id="findings">Findings</h2>
    ${
      views.length === 0
        ? html`<p class="pill ok" id="no-findings">no finding</p>`
        : html`${shown.map((v, i) => findingBlock(v, i + 1, state))}${views.length > shown.length ? html`<p class="muted">and ${formatCount(views.length - shown.length)} more findings not shown</p>` : ''}`
    }
    <h2 id="seeds">Seeds</h2>
    ${seeds.length === 0 ? html`<p class="muted">No seed watched (<code>--seed</code>).</p>` : seeds.map((s) => seedSection(s, views, state, polls, witnessNames, generatedAt))}
    ${logSection(views, polls, witnessNames, generatedAt)}
    <h2 id="witnesses">Witnesses</h2>
    <table id="witness-table">
      <thead>
        <tr>
          <th>witness</th>
          <th>last poll</th>
          <th class="num">log size</th>
          <th class="num">high-water checkpoint</th>
          <th>pinned key and log origin</th>
        </tr>
      </thead>
      <tbody>
        ${witnessRows}
      </tbody>
    </table>`;
  return renderPage({
    title: `monitor report ${formatUtc(generatedAt)}`,
    heading: 'anchor-witness monitor report',
    subtitle: html`generated ${formatUtc(generatedAt)} · ${plural(witnessNames.length, 'witness', 'witnesses')} ·
    ${plural(seeds.length, 'seed')}${alerts > 0 ? html` · <strong>${plural(alerts, 'alert')}</strong>` : ''}`,
    body,
    footer: html`Self-contained: no script, nothing loaded from anywhere. The evidence verifies offline with
      <code>anchor-witness verify</code>; the pinned keys are the monitor's (witness set or first use), never a key a response carried.`,
  });
}
