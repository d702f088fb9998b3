/**
 * Just enough PromQL and Prometheus text format for the deployment kit's tests: the metric names an
 * expression reads, and the metric families a /metrics page declares.
 */

/** PromQL functions, aggregations and keywords the deploy/ files may use (anything else is a metric name). */
const NOT_METRICS = new Set([
  'abs',
  'absent',
  'and',
  'avg',
  'avg_over_time',
  'bool',
  'by',
  'changes',
  'clamp_max',
  'clamp_min',
  'count',
  'delta',
  'deriv',
  'group_left',
  'group_right',
  'histogram_quantile',
  'idelta',
  'ignoring',
  'increase',
  'irate',
  'label_values',
  'max',
  'max_over_time',
  'min',
  'min_over_time',
  'offset',
  'on',
  'or',
  'rate',
  'resets',
  'scalar',
  'sort',
  'sort_desc',
  'sum',
  'sum_over_time',
  'time',
  'topk',
  'bottomk',
  'unless',
  'vector',
  'without',
]);

const HISTOGRAM_SUFFIX = /_(bucket|sum|count)$/;

/**
 * The metric names `expr` reads, in order of first appearance. A histogram's `_bucket`, `_sum` and
 * `_count` series are given as the family name (`_sum`/`_count` of a counter are not used here).
 */
export function promqlMetricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // strings (label values, regexes)
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\[[^\]]*\]/g, '') // range and subquery durations
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '$1') // label lists
    .replace(/\boffset\s+\S+/g, '') // offset durations
    .replace(/\$\w+/g, ''); // Grafana variables outside matchers
  const names: string[] = [];
  for (const m of stripped.matchAll(/(?<![A-Za-z0-9_:.])[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const token = m[0];
    if (NOT_METRICS.has(token)) continue;
    const name = token.replace(HISTOGRAM_SUFFIX, '');
    if (!names.includes(name)) names.push(name);
  }
  return names;
}

/** The families a Prometheus text exposition declares (`# TYPE name type`). */
export function metricFamilies(text: string): Set<string> {
  return new Set([...text.matchAll(/^# TYPE ([A-Za-z_:][A-Za-z0-9_:]*) \w+$/gm)].map((m) => m[1]!));
}
