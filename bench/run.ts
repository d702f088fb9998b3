/**
 * `npm run bench [name…]`: runs bench/<name>.ts (all of them when no name is given), one child
 * process each, in sequence. Each prints one JSON document; they are copied to stdout unchanged
 * (stdout stays machine-readable), and at the end ONE summary table of every benchmark — its
 * measured rates, the crypto ceiling measured in the same run, the ratio and the target — is
 * printed on stderr (a Markdown table, ready for docs/operations.md).
 *
 * The table is found, not hard-wired: every object in a document that has `ratio_to_ceiling` is a
 * row (its rate is its `*_per_s` member, or its `peak`'s; its ceiling the nearest
 * `crypto_ceiling_per_s` or `ceiling.*_per_s`); documents without one contribute their ceilings.
 */
import { readdirSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const dir = import.meta.dirname;
const wanted = process.argv.slice(2);
const all = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('_'))
  .map((f) => f.slice(0, -3))
  .sort();
const names = wanted.length > 0 ? wanted : all;

type Doc = Record<string, unknown>;

interface Row {
  bench: string;
  measure: string;
  rate: number | undefined;
  ceiling: number | undefined;
  ratio: number | undefined;
  target: number | undefined;
  p99: number | undefined;
  note: string;
}

const isObj = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The first `<x>_per_s` member that is not a ceiling. */
function rateOf(o: Doc): { key: string; value: number } | undefined {
  if (isObj(o.peak)) {
    const peak = rateOf(o.peak);
    if (peak !== undefined) return { key: `peak.${peak.key}`, value: peak.value };
  }
  if (num(o.achieved_per_s) !== undefined) return { key: 'achieved_per_s', value: o.achieved_per_s as number };
  for (const [k, v] of Object.entries(o)) {
    // the load's rate, not the crypto primitives measured beside it for the ceiling
    if (k.endsWith('_per_s') && !/ceiling|^ed25519_|^rs256_|^p256_/.test(k) && num(v) !== undefined) return { key: k, value: v as number };
  }
  return undefined;
}

function ceilingOf(o: Doc): number | undefined {
  const direct = num(o.crypto_ceiling_per_s);
  if (direct !== undefined) return direct;
  if (isObj(o.ceiling)) {
    for (const [k, v] of Object.entries(o.ceiling)) if (k.endsWith('_per_s') && num(v) !== undefined) return v as number;
  }
  return undefined;
}

export function rowsOf(bench: string, doc: Doc): Row[] {
  const rows: Row[] = [];
  const rootCeiling = ceilingOf(doc);
  const walk = (o: Doc, path: string[], inherited: number | undefined, target: number | undefined): void => {
    const ceiling = ceilingOf(o) ?? inherited;
    const tgt = num(o.target_ratio) ?? target;
    const ratio = num(o.ratio_to_ceiling);
    if (ratio !== undefined) {
      const rate = rateOf(o);
      const p99 = num(o.p99_ms) ?? (isObj(o.peak) ? num(o.peak.p99_ms) : undefined);
      const half = isObj(o.half_peak) ? o.half_peak : undefined;
      const notes: string[] = [];
      if (half !== undefined && num(half.p99_ms) !== undefined)
        notes.push(
          `half-peak p99 ${String(half.p99_ms)} ms${num(half.target_p99_ms) === undefined ? '' : ` (target ${String(half.target_p99_ms)})`}`,
        );
      const eff = num(o.cpu_efficiency);
      if (eff !== undefined)
        notes.push(
          `CPU efficiency ${String(eff)}${num(o.target_cpu_efficiency) === undefined ? '' : ` (target ${String(o.target_cpu_efficiency)})`}`,
        );
      const vsGo = num(o.ratio_to_go_reference);
      if (vsGo !== undefined) notes.push(`${String(vsGo)}× the Go reference witness's rate`);
      const errors = isObj(o.peak) ? num(o.peak.errors) : undefined;
      if (errors !== undefined && errors > 0) notes.push(`${errors} errors`);
      rows.push({
        bench,
        measure: [...path, rate?.key ?? 'rate'].join('.'),
        rate: rate?.value,
        ceiling,
        ratio,
        target: tgt,
        p99,
        note: notes.join('; '),
      });
    }
    for (const [k, v] of Object.entries(o))
      if (isObj(v) && k !== 'peak' && k !== 'half_peak' && k !== 'ceiling') walk(v, [...path, k], ceiling, tgt);
  };
  walk(doc, [], rootCeiling, num(doc.target_ratio));
  if (rows.length === 0) {
    // no ratio in this document (bench/crypto lists ceilings, bench/anchor-pg compares stores)
    const row = (measure: string, fields: Partial<Row>): Row => ({
      bench,
      measure,
      rate: undefined,
      ceiling: undefined,
      ratio: undefined,
      target: undefined,
      p99: undefined,
      note: '',
      ...fields,
    });
    if (typeof doc.skipped === 'string') rows.push(row('(skipped)', { note: doc.skipped }));
    for (const [k, v] of Object.entries(doc)) {
      if (num(v) !== undefined && k.endsWith('_per_s'))
        rows.push(row(k, k.includes('ceiling') ? { ceiling: v as number, note: 'ceiling' } : { rate: v as number }));
      else if (isObj(v) && num(v.ops_per_s) !== undefined)
        rows.push(row(k, { rate: v.ops_per_s as number, note: num(v.us_per_op) === undefined ? '' : `${String(v.us_per_op)} µs/op` }));
      else if (isObj(v) && rateOf(v) !== undefined) {
        // a profile's result (bench/witness-network: sqlite, postgres)
        const errors = num(v.errors);
        rows.push(
          row(`${k}: ${rateOf(v)!.key}`, {
            rate: rateOf(v)!.value,
            p99: num(v.p99_ms),
            note: errors === undefined ? '' : `${errors} errors`,
          }),
        );
      } else if (Array.isArray(v)) {
        v.forEach((item: unknown, i) => {
          if (!isObj(item)) return;
          const rate = rateOf(item);
          if (rate === undefined) return;
          const label =
            typeof item.config === 'string'
              ? item.config
              : num(item.log_size) !== undefined
                ? `${String(item.log_size)} entries`
                : String(i);
          rows.push(row(`${k} ${label}: ${rate.key}`, { rate: rate.value, p99: num(item.p99_ms) }));
        });
      }
    }
  }
  return rows;
}

function fmt(v: number | undefined, digits = 0): string {
  if (v === undefined) return '';
  return digits === 0 ? Math.round(v).toLocaleString('en-US') : v.toFixed(digits);
}

export function table(rows: readonly Row[]): string {
  const head = ['bench', 'measure', 'rate /s', 'ceiling /s', 'ratio', 'target', 'ok', 'p99 ms', 'note'];
  const body = rows.map((r) => [
    r.bench,
    r.measure,
    fmt(r.rate),
    fmt(r.ceiling),
    fmt(r.ratio, 2),
    fmt(r.target, 2),
    r.ratio === undefined || r.target === undefined ? '' : r.ratio >= r.target ? 'yes' : 'NO',
    fmt(r.p99, 1),
    r.note,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i >= 2 && i <= 7 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ')} |`;
  return [
    line(head),
    `|${widths.map((w, i) => (i >= 2 && i <= 7 ? `${'-'.repeat(w + 1)}:` : `:${'-'.repeat(w + 1)}`)).join('|')}|`,
    ...body.map(line),
  ].join('\n');
}

function runOne(name: string): Promise<{ ok: boolean; docs: Doc[] }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(dir, `${name}.ts`)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c: string) => {
      out += c;
      process.stdout.write(c);
    });
    child.on('close', (code) => {
      const docs: Doc[] = [];
      // one JSON document per benchmark (pretty-printed); tolerate several, back to back
      for (const chunk of out.split(/\n(?=\{)/)) {
        try {
          const v: unknown = JSON.parse(chunk);
          if (isObj(v)) docs.push(v);
        } catch {
          // not JSON: already copied through
        }
      }
      resolve({ ok: code === 0, docs });
    });
  });
}

if (import.meta.main) {
  let failed = false;
  const rows: Row[] = [];
  for (const name of names) {
    if (!all.includes(name)) {
      process.stderr.write(`no benchmark bench/${name}.ts (have: ${all.join(', ')})\n`);
      failed = true;
      continue;
    }
    process.stderr.write(`# bench/${name}\n`);
    const r = await runOne(name);
    if (!r.ok) failed = true;
    for (const d of r.docs) rows.push(...rowsOf(typeof d.bench === 'string' ? d.bench : name, d));
    if (r.docs.length === 0)
      rows.push({
        bench: name,
        measure: '(no JSON result)',
        rate: undefined,
        ceiling: undefined,
        ratio: undefined,
        target: undefined,
        p99: undefined,
        note: r.ok ? '' : 'failed',
      });
  }
  process.stderr.write(`\n## Benchmark summary (${process.version}, ${new Date().toISOString().slice(0, 10)})\n\n${table(rows)}\n\n`);
  process.exit(failed ? 1 : 0);
}
