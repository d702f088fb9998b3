/**
 * An inline SVG step chart (value over time, one line per series) for the monitor report. No
 * script and no `style` attributes: colours are SVG presentation attributes (not governed by the
 * CSP's style-src), text and axes use `currentColor` so they follow the page's colour scheme.
 * Every label is escaped. Pure.
 *
 *   stepChart({ title: 'seed 34bd…', series: [{ label: 'w1', points: [{ t, v: 3 }, …] }], end: now })
 */
import { formatUtc } from './format.ts';
import { html, joinHtml, type SafeHtml } from './html.ts';

export interface ChartPoint {
  /** Unix seconds. */
  t: number;
  /** The value from `t` on; null = none (the line breaks). */
  v: number | null;
  /** Tooltip text (default: label, value and time). */
  note?: string;
}

export interface ChartSeries {
  label: string;
  points: readonly ChartPoint[];
}

export interface ChartMarker {
  t: number;
  v: number;
  label: string;
  severity: 'alert' | 'warning';
}

export interface StepChartOptions {
  /** Accessible name of the chart (plain text). */
  title: string;
  series: readonly ChartSeries[];
  markers?: readonly ChartMarker[];
  /** Extend each series' last value to this time (unix s), e.g. the report time. */
  end?: number;
  yLabel?: string;
  width?: number;
  height?: number;
}

/** Line colours readable on light and dark backgrounds. */
export const SERIES_COLOURS = ['#2f81f7', '#d4762c', '#2da44e', '#a371f7', '#e3559b', '#1b9aaa', '#b08800', '#8c959f'] as const;
const ALERT = '#e5534b';
const WARNING = '#c69026';

const r1 = (n: number): string => (Math.round(n * 10) / 10).toString();

/** Integer tick step giving at most ~6 ticks over `span`. */
function niceStep(span: number): number {
  const raw = Math.max(1, span / 5);
  const mag = 10 ** Math.floor(Math.log10(raw));
  for (const f of [1, 2, 5, 10]) if (f * mag >= raw) return Math.max(1, f * mag);
  return 10 * mag;
}

function timeLabel(t: number, span: number): string {
  const iso = formatUtc(t);
  if (span > 2 * 86_400) return iso.slice(5, 10);
  if (span < 600) return iso.slice(11, 19);
  return iso.slice(11, 16);
}

export function stepChart(o: StepChartOptions): SafeHtml {
  const width = o.width ?? 720;
  // Legend: as many columns (≤ 3) as the longest label allows (about 7 px per character at 12 px).
  const labelChars = Math.min(48, Math.max(1, ...o.series.map((s) => s.label.length)));
  const columns = Math.max(1, Math.min(3, Math.floor((width - 70) / (28 + labelChars * 7))));
  const legendRows = Math.ceil(o.series.length / columns);
  const height = (o.height ?? 220) + legendRows * 18;
  const left = 52;
  const right = 18;
  const top = 14 + legendRows * 18;
  const bottom = 34;
  const plotW = width - left - right;
  const plotH = height - top - bottom;

  const times: number[] = [];
  const values: number[] = [];
  for (const s of o.series) {
    for (const p of s.points) {
      times.push(p.t);
      if (p.v !== null) values.push(p.v);
    }
  }
  for (const m of o.markers ?? []) {
    times.push(m.t);
    values.push(m.v);
  }
  if (o.end !== undefined && times.length > 0) times.push(o.end);
  let t0 = times.length === 0 ? 0 : Math.min(...times);
  let t1 = times.length === 0 ? 60 : Math.max(...times);
  if (t1 - t0 < 60) {
    const mid = (t0 + t1) / 2;
    t0 = mid - 30;
    t1 = mid + 30;
  }
  const v0 = Math.min(0, ...values);
  let v1 = values.length === 0 ? 1 : Math.max(...values);
  if (v1 <= v0) v1 = v0 + 1;
  const step = niceStep(v1 - v0);
  v1 = Math.ceil(v1 / step) * step;

  const x = (t: number): number => left + ((t - t0) / (t1 - t0)) * plotW;
  const y = (v: number): number => top + plotH - ((v - v0) / (v1 - v0)) * plotH;

  const yTicks: SafeHtml[] = [];
  for (let v = v0; v <= v1 + 1e-9; v += step) {
    yTicks.push(
      html`<line x1="${r1(left)}" x2="${r1(left + plotW)}" y1="${r1(y(v))}" y2="${r1(y(v))}" stroke="currentColor" stroke-opacity="0.15"/><text x="${r1(left - 6)}" y="${r1(y(v) + 4)}" text-anchor="end" font-size="11" fill="currentColor">${v}</text>`,
    );
  }
  const xTicks: SafeHtml[] = [];
  for (let i = 0; i <= 4; i++) {
    const t = t0 + ((t1 - t0) * i) / 4;
    xTicks.push(
      html`<line x1="${r1(x(t))}" x2="${r1(x(t))}" y1="${r1(top + plotH)}" y2="${r1(top + plotH + 4)}" stroke="currentColor" stroke-opacity="0.5"/><text x="${r1(x(t))}" y="${r1(top + plotH + 17)}" text-anchor="${i === 0 ? 'start' : i === 4 ? 'end' : 'middle'}" font-size="11" fill="currentColor">${timeLabel(t, t1 - t0)}</text>`,
    );
  }

  const lines = o.series.map((s, i) => {
    const colour = SERIES_COLOURS[i % SERIES_COLOURS.length]!;
    const pts = [...s.points].sort((a, b) => a.t - b.t);
    const segments: string[] = [];
    let d = '';
    for (let j = 0; j < pts.length; j++) {
      const p = pts[j]!;
      const next = j + 1 < pts.length ? pts[j + 1]!.t : (o.end ?? p.t);
      if (p.v === null) {
        if (d !== '') segments.push(d);
        d = '';
        continue;
      }
      const yy = r1(y(p.v));
      d += d === '' ? `M${r1(x(p.t))} ${yy}` : ` V${yy}`;
      d += ` H${r1(x(Math.max(p.t, next)))}`;
    }
    if (d !== '') segments.push(d);
    const dots = pts.map((p) => {
      const note = p.note ?? `${s.label}: ${p.v === null ? 'none' : `index ${p.v}`} at ${formatUtc(p.t)}`;
      return p.v === null
        ? html`<circle cx="${r1(x(p.t))}" cy="${r1(top + plotH)}" r="3.5" fill="none" stroke="${colour}" stroke-width="1.5"><title>${note}</title></circle>`
        : html`<circle cx="${r1(x(p.t))}" cy="${r1(y(p.v))}" r="3.5" fill="${colour}"><title>${note}</title></circle>`;
    });
    return html`<g class="series" data-series="${s.label}">${segments.map((seg) => html`<path d="${seg}" fill="none" stroke="${colour}" stroke-width="2.2" stroke-linejoin="round"/>`)}${dots}</g>`;
  });

  const markers = (o.markers ?? []).map((m) => {
    const colour = m.severity === 'alert' ? ALERT : WARNING;
    const cx = x(m.t);
    const cy = y(m.v);
    return html`<g class="marker"><path d="M${r1(cx)} ${r1(cy - 8)} L${r1(cx + 7)} ${r1(cy + 5)} L${r1(cx - 7)} ${r1(cy + 5)} Z" fill="${colour}" stroke="currentColor" stroke-width="0.8"><title>${m.label}</title></path></g>`;
  });

  const legend = o.series.map((s, i) => {
    const colour = SERIES_COLOURS[i % SERIES_COLOURS.length]!;
    const lx = left + (i % columns) * (plotW / columns);
    const ly = 12 + Math.floor(i / columns) * 18;
    const label = s.label.length > 48 ? `${s.label.slice(0, 47)}…` : s.label;
    return html`<rect x="${r1(lx)}" y="${r1(ly - 8)}" width="14" height="4" fill="${colour}"/><text x="${r1(lx + 20)}" y="${r1(ly - 2)}" font-size="12" fill="currentColor">${label}<title>${s.label}</title></text>`;
  });

  return html`<svg class="chart" role="img" aria-label="${o.title}" viewBox="0 0 ${width} ${height}" xmlns="http://www.w3.org/2000/svg"><title>${o.title}</title>
${legend}
${yTicks}
<line x1="${r1(left)}" x2="${r1(left)}" y1="${r1(top)}" y2="${r1(top + plotH)}" stroke="currentColor" stroke-opacity="0.5"/>
<line x1="${r1(left)}" x2="${r1(left + plotW)}" y1="${r1(top + plotH)}" y2="${r1(top + plotH)}" stroke="currentColor" stroke-opacity="0.5"/>
${xTicks}
${o.yLabel === undefined ? '' : html`<text x="12" y="${r1(top + plotH / 2)}" font-size="11" fill="currentColor" text-anchor="middle" transform="rotate(-90 12 ${r1(top + plotH / 2)})">${o.yLabel}</text>`}
${joinHtml(lines, '\n')}
${markers}
</svg>`;
}
