/**
 * The monitor's HTML report (`anchor-witness monitor … --html FILE`, docs/client.md): one
 * self-contained file (no script, no external asset, a strict CSP in a `<meta>`) with per-seed
 * charts and the findings with their evidence. A pure function of the monitor's state and this
 * run's poll reports (structural subsets of `MonitorState` / `PollReport`); everything a witness
 * sent is escaped as hostile text.
 */
import { formatCount, formatDuration, formatUtc, plural } from '../pages/format.ts';
import { html } from '../pages/html.ts';
import { renderPage } from '../pages/layout.ts';
import { logSection, seedSection } from './monitor-report-charts.ts';
import { collectFindings, findingBlock } from './monitor-report-findings.ts';
import type { MonitorReportInput } from './monitor-report-input.ts';

export type {
  MonitorReportInput,
  ReportAnchor,
  ReportFinding,
  ReportObservation,
  ReportPoll,
  ReportState,
  ReportWitnessStatus,
} from './monitor-report-input.ts';

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
    return html`<tr><td><code>${name}</code>${st === undefined ? '' : html`<br><span class="muted">${st.url}</span>`}</td><td>${status}</td><td class="num">${st?.logSize === undefined ? '—' : formatCount(st.logSize)}</td><td class="num">${hw}</td><td>${rec === undefined ? '—' : html`<code>${rec.public_key}</code><br><span class="muted">${rec.log_origin}</span>`}</td></tr>`;
  });

  const shown = views.slice(0, max);
  const body = html`<section class="cards">
<div class="card" id="summary-alerts"><div class="label">alerts now</div><div class="value">${alerts}</div><div class="note">${plural(warnings, 'warning')} now</div></div>
<div class="card" id="summary-witnesses"><div class="label">witnesses</div><div class="value">${reachable === undefined ? witnessNames.length : `${reachable}/${latest!.witnesses.length}`}</div><div class="note">${reachable === undefined ? 'known from the state' : 'reachable at the last poll'}</div></div>
<div class="card" id="summary-seeds"><div class="label">seeds watched</div><div class="value">${seeds.length}</div><div class="note">&nbsp;</div></div>
<div class="card" id="summary-polls"><div class="label">polls</div><div class="value">${polls.length}</div><div class="note">${polls.length === 0 ? 'none in this run' : polls.length === 1 ? formatUtc(polls[0]!.time) : `over ${formatDuration(polls.at(-1)!.time - polls[0]!.time)}`}</div></div>
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
<table id="witness-table"><thead><tr><th>witness</th><th>last poll</th><th class="num">log size</th><th class="num">high-water checkpoint</th><th>pinned key and log origin</th></tr></thead><tbody>${witnessRows}</tbody></table>`;
  return renderPage({
    title: `monitor report ${formatUtc(generatedAt)}`,
    heading: 'anchor-witness monitor report',
    subtitle: html`generated ${formatUtc(generatedAt)} · ${plural(witnessNames.length, 'witness', 'witnesses')} · ${plural(seeds.length, 'seed')}${alerts > 0 ? html` · <strong>${plural(alerts, 'alert')}</strong>` : ''}`,
    body,
    footer: html`Self-contained: no script, nothing loaded from anywhere. The evidence verifies offline with <code>anchor-witness verify</code>; the pinned keys are the monitor's (witness set or first use), never a key a response carried.`,
  });
}
