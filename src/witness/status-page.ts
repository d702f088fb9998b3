/**
 * The witness status page (SPEC §6 `GET /` as HTML): identity and keys, the log and its latest
 * checkpoint with its age, what the anchor role recorded, the logs the cosign role follows, and
 * copy-paste commands for this witness. Server-rendered, no script, no external asset; every value
 * is escaped (src/pages/html.ts) and the page is served with `PAGE_CSP` (src/pages/layout.ts).
 *
 * `renderWitnessPage(data)` is pure; `createWitnessStatusPage(sources)` gathers the data for one
 * request (store reads, the cosign role's known logs, its request counters).
 *
 * Decisions:
 *  - Checkpoint age. A checkpoint note carries no time, and the store keeps none, so the node keeps
 *    one in memory (`CheckpointClock`): the time this process signed the checkpoint of a given size
 *    (exact), else, for a checkpoint it did not sign (present at start-up, or signed by another
 *    replica of a shared store), the time this process first saw it — shown as "at least …".
 *  - The request's Host header is used only to print commands, and only when it is a plain
 *    host[:port] (`displayHost`); otherwise the commands use `$WITNESS_URL`. The scheme is https
 *    unless the request came over plain HTTP to localhost, an IP address or an explicit port (a bare
 *    name on plain HTTP means a TLS-terminating proxy in front).
 *  - "Quota use" per cosigned log is what this process counted since it started (requests that
 *    reached the quota check, and 429s), from the cosign metrics, next to the log's qpd.
 */
import type { Registry } from 'prom-client';
import type { BuildInfo } from '../release/attestation.ts';
import type { CosignRole } from '../cosign/role.ts';
import { bucketCapacity } from '../cosign/quota.ts';
import { ed25519ToDidKey } from '../crypto/ed25519.ts';
import { sha256Hex } from '../crypto/sha256.ts';
import { decodeHex } from '../encoding/hex.ts';
import { formatCount, formatDuration, formatUtc, plural } from '../pages/format.ts';
import { displayHost, html, isLocalOrIpHost, joinHtml, shellCommand, type SafeHtml } from '../pages/html.ts';
import { renderPage } from '../pages/layout.ts';
import type { WitnessStore } from '../store/types.ts';

export { escapeHtml } from '../pages/html.ts';

/** When the checkpoint of each size was signed, as far as this process knows (see the decisions above). */
export class CheckpointClock {
  private signedSize = -1;
  private signedAtMs = 0;
  private seenSize = -1;
  private seenAtMs = 0;

  /** This process signed the checkpoint of `size` at `atMs`. */
  signed(size: number, atMs: number): void {
    this.signedSize = size;
    this.signedAtMs = atMs;
  }

  /** This process saw the checkpoint of `size` (signed elsewhere or earlier) at `atMs`. */
  seen(size: number, atMs: number): void {
    if (size !== this.seenSize) {
      this.seenSize = size;
      this.seenAtMs = atMs;
    }
  }

  /** When the checkpoint of `size` was signed: exact, or the latest time it can have been signed. */
  signedAt(size: number, nowMs: number): { atMs: number; exact: boolean } {
    if (size === this.signedSize) return { atMs: this.signedAtMs, exact: true };
    this.seen(size, nowMs);
    return { atMs: this.seenAtMs, exact: false };
  }
}

export interface CosignLogRow {
  origin: string;
  /** Where the log is configured: `logs file` or `list <path>`. */
  source: string;
  /** Size last cosigned (null: never). */
  size: number | null;
  /** Unix seconds of the last cosignature (null: never). */
  lastCosigned: number | null;
  qpd: number | undefined;
  /** add-checkpoint requests that reached the quota check since start, and those refused (429). */
  counted: number;
  refused: number;
}

export interface WitnessPageData {
  name: string;
  roles: readonly string[];
  version: string;
  witnessKeyHex: string;
  logOrigin: string;
  logVkey: string;
  cosignVkeys: readonly string[];
  log: {
    size: number;
    /** The signed note (null before the first checkpoint). */
    checkpoint: string | null;
    /** Unix ms; exact when this process signed it, else the latest it can have been. */
    signedAtMs: number;
    signedExact: boolean;
  };
  /** Seeds with a co-signed anchor, anchors co-signed (log entries that are not duplicity entries), duplicity proofs. */
  counts: { seeds: number; anchors: number; duplicities: number };
  /** null when the cosign role is off. */
  cosign: { logs: readonly CosignLogRow[]; total: number } | null;
  /** Base URL for the commands (`$WITNESS_URL` when the Host header was unusable). */
  baseUrl: string;
  hostUsable: boolean;
  runningDigest?: string | undefined;
  nowMs: number;
  startedAtMs: number;
}

/** What `GET /` hands the page besides the /health body. */
export interface StatusPageRequest {
  host: string | undefined;
  encrypted: boolean;
}

/** Base URL for copy-paste commands (see the decisions above). */
export function commandBaseUrl(req: StatusPageRequest): { url: string; usable: boolean } {
  const host = displayHost(req.host);
  if (host === undefined) return { url: '$WITNESS_URL', usable: false };
  const plainOk = isLocalOrIpHost(host) || /:[0-9]+$/.test(host);
  return { url: `${req.encrypted || !plainOk ? 'https' : 'http'}://${host}`, usable: true };
}

const MAX_LOG_ROWS = 200;

const kv = (label: string, value: SafeHtml | string, note?: SafeHtml | string): SafeHtml =>
  html`<tr>
    <th scope="row">${label}</th>
    <td>${value}${note === undefined ? '' : html` <span class="muted">${note}</span>`}</td>
  </tr>`;
const code = (s: string): SafeHtml => html`<code>${s}</code>`;
const card = (label: string, value: string, note: SafeHtml | string, id: string): SafeHtml =>
  html`<div class="card" id="${id}">
    <div class="label">${label}</div>
    <div class="value">${value}</div>
    <div class="note">${note}</div>
  </div>`;

function checkpointAge(d: WitnessPageData): SafeHtml {
  const age = formatDuration((d.nowMs - d.log.signedAtMs) / 1000);
  const at = formatUtc(d.log.signedAtMs / 1000);
  return d.log.signedExact
    ? html`signed ${age} ago (${at})`
    : html`signed at least ${age} ago (at or before ${at}, when this process first saw it)`;
}

function commands(d: WitnessPageData): SafeHtml {
  const url = d.baseUrl;
  const q = shellCommand; // `$WITNESS_URL`, `$HEAD`, `$SEED` stay shell variables
  const member = JSON.stringify(
    { name: d.name, curve: 'ed25519', public_key: d.witnessKeyHex, log_origin: d.logOrigin, url: d.hostUsable ? url : 'https://…' },
    null,
    2,
  );
  const sizeForTile = Math.min(d.log.size, 256);
  const tile = sizeForTile === 0 ? null : `${url}/log/tile/entries/000${sizeForTile === 256 ? '' : `.p/${sizeForTile}`}`;
  const blocks: SafeHtml[] = [];
  blocks.push(
    html`<h3>Add this witness to a client's witness set</h3>
      <p>From its <code>/health</code> (trust on first use: compare the key with the one above, out of band):</p>
      <pre id="cmd-witness-set">
${q(['anchor-witness', 'party', 'witness-set', '--witness', url, '--threshold', '1', '--out', 'witness-set.json'])}</pre>
      <p>Or add this member to an existing set (<code>members</code> array; the set's SAID changes):</p>
      <pre id="cmd-member">${member}</pre>`,
  );
  if (d.roles.includes('anchor')) {
    blocks.push(
      html`<h3>Submit an anchor</h3>
        <pre id="cmd-submit">
${[
            q(['anchor-witness', 'party', 'keygen', '--out', 'party.pem']),
            q([
              'anchor-witness',
              'party',
              'init',
              '--state',
              'chain.json',
              '--key',
              'party.pem',
              '--agent',
              'did:keri:EYourAgent',
              '--scope',
              'EYourScope',
              '--witness-set',
              'witness-set.json',
            ]),
            q(['anchor-witness', 'party', 'anchor', 'next', '--state', 'chain.json', '--head', '$HEAD']),
            q(['anchor-witness', 'party', 'submit', '--state', 'chain.json', '--witness', url]),
          ].join('\n')}</pre>
        <p class="muted">
          The party (its <code>did:keri:</code> id and key) must be in this witness's registry. Over plain HTTP:
          <code>${q(['curl', '-sS', '-H', 'content-type: application/json', '--data', '@anchor-request.json', `${url}/v1/anchor`])}</code>
        </p>`,
    );
  }
  blocks.push(
    html`<h3>Fetch and check the log</h3>
      <pre id="cmd-log">
${[
          q(['curl', '-sS', '-o', 'checkpoint.txt', `${url}/log/checkpoint`]),
          q(['anchor-witness', 'verify', 'checkpoint', 'checkpoint.txt', '--vkey', d.logVkey]),
          ...(tile === null ? [] : [q(['curl', '-sS', '-o', 'entries-000', tile])]),
          q([
            'anchor-witness',
            'verify',
            'consistency',
            'old-checkpoint.txt',
            'checkpoint.txt',
            '--tiles',
            url,
            '--witness-key',
            d.witnessKeyHex,
          ]),
          q(['anchor-witness', 'monitor', '--witness', url, '--seed', '$SEED', '--state', 'monitor.json']),
        ].join('\n')}</pre>`,
  );
  if (d.cosign !== null) {
    blocks.push(
      html`<h3>Cosign a log's checkpoints (C2SP tlog-witness)</h3>
        <p>Logs send <code>POST ${url}/add-checkpoint</code>; this witness's cosigner vkey for their configuration:</p>
        <pre id="cmd-cosign">${d.cosignVkeys.join('\n')}</pre>`,
    );
  }
  const note = d.hostUsable
    ? ''
    : html`<p class="finding">
        <strong>Set <code>WITNESS_URL</code> first</strong>: the request's Host header was missing or not a plain host name, so the commands
        do not name this witness.
      </p>`;
  return html`${note}
    <p class="muted">
      Set <code>HEAD</code> (the 64-hex head to anchor) and <code>SEED</code> (a 64-hex seed id to watch) where the commands use them.
    </p>
    ${blocks}`;
}

function cosignSection(d: WitnessPageData): SafeHtml {
  if (d.cosign === null) return html``;
  const { logs, total } = d.cosign;
  const rows = logs.map((l) => {
    const quota =
      l.qpd === undefined
        ? html`no per-log quota`
        : html`${formatCount(l.qpd)}/day (burst ${formatCount(Math.floor(bucketCapacity(l.qpd)))})`;
    const last =
      l.lastCosigned === null
        ? html`<span class="muted">never</span>`
        : html`${formatDuration(d.nowMs / 1000 - l.lastCosigned)} ago <span class="muted">${formatUtc(l.lastCosigned)}</span>`;
    return html`<tr>
      <td>
        <code>${l.origin}</code><br /><span class="muted">${l.source}</span> · <a href="/${sha256Hex(l.origin)}/checkpoint">checkpoint</a>
      </td>
      <td class="num">${l.size === null ? '—' : formatCount(l.size)}</td>
      <td>${last}</td>
      <td>
        ${quota}<br /><span class="muted">since start: ${formatCount(l.counted)} counted, ${formatCount(l.refused)} refused (429)</span>
      </td>
    </tr>`;
  });
  return html`<h2 id="cosign">Logs cosigned (${plural(total, 'log')})</h2>
    ${
      total === 0
        ? html`<p class="muted">No log is configured (<code>--logs</code>, <code>--logs-list</code>): every add-checkpoint is 404.</p>`
        : html`<table id="cosign-logs">
              <thead>
                <tr>
                  <th>origin</th>
                  <th class="num">size cosigned</th>
                  <th>last cosigned</th>
                  <th>quota</th>
                </tr>
              </thead>
              <tbody>
                ${rows}
              </tbody>
            </table>
            ${
              total > logs.length
                ? html`<p class="muted">and ${formatCount(total - logs.length)} more (first ${logs.length} by origin shown)</p>`
                : ''
            }`
    }`;
}

export function renderWitnessPage(d: WitnessPageData): string {
  const did = ed25519ToDidKey(decodeHex(d.witnessKeyHex, 32));
  const cosignKeys =
    d.cosignVkeys.length === 0 ? html`<span class="muted">— (cosign role off)</span>` : joinHtml(d.cosignVkeys.map(code), html`<br />`);
  const body = html`<section class="cards">
      ${card('log size', formatCount(d.log.size), checkpointAge(d), 'log-size')}
      ${card('anchors co-signed', formatCount(d.counts.anchors), html`on ${plural(d.counts.seeds, 'seed')}`, 'anchors')}
      ${card('duplicity proofs', formatCount(d.counts.duplicities), d.counts.duplicities === 0 ? 'no party forked' : 'seeds frozen', 'duplicities')}
      ${d.cosign === null ? '' : card('logs cosigned for', formatCount(d.cosign.total), `${d.cosign.logs.filter((l) => l.size !== null).length} with a cosigned checkpoint`, 'cosign-count')}
    </section>
    <h2>Identity</h2>
    <table class="kv" id="identity">
      <tbody>
        ${kv('name', code(d.name))} ${kv('roles', joinHtml(d.roles.map((r) => html`<span class="pill ok">${r}</span>`)))}
        ${kv('version', code(d.version), d.runningDigest === undefined ? undefined : html`bundle sha256 <code>${d.runningDigest}</code> (<a href="/build">/build</a>)`)}
        ${kv('witness key', code(d.witnessKeyHex), 'Ed25519, hex')} ${kv('witness key (did:key)', code(did))}
        ${kv('log origin', code(d.logOrigin))} ${kv('log vkey', code(d.logVkey))} ${kv('cosignature vkey', cosignKeys)}
        ${kv('up since', formatUtc(d.startedAtMs / 1000), formatDuration((d.nowMs - d.startedAtMs) / 1000))}
      </tbody>
    </table>
    <h2>Log</h2>
    <table class="kv" id="log">
      <tbody>
        ${kv('size', html`<span id="log-size-value">${formatCount(d.log.size)}</span>`)} ${kv('latest checkpoint', checkpointAge(d))}
      </tbody>
    </table>
    ${d.log.checkpoint === null ? html`<p class="muted">No checkpoint yet.</p>` : html`<pre id="checkpoint">${d.log.checkpoint}</pre>`}
    ${cosignSection(d)}
    <h2>Use this witness</h2>
    ${commands(d)}`;
  return renderPage({
    title: `${d.name} — anchor witness`,
    heading: d.name,
    subtitle: html`anchor witness ${d.version} · ${joinHtml(d.roles, ', ')} · <a href="/health">/health</a> ·
      <a href="/log/checkpoint">/log/checkpoint</a> · <a href="/openapi.json">/openapi.json</a> · <a href="/metrics">/metrics</a>`,
    body,
    footer: html`Rendered ${formatUtc(d.nowMs / 1000)}; seed and duplicity counts are at most ${COUNTS_TTL_MS / 1000} s old. Everything a
    witness signs is re-checkable: clients verify under the keys they pinned, never the ones a response carries.`,
  });
}

// ---- gathering the data ------------------------------------------------------------------------

/** add-checkpoint outcomes that reached the quota check (SPEC §5 check 4) and took a token. */
const COUNTED = new Set(['cosigned', 'conflict', 'old_size_too_large', 'invalid_empty_tree', 'unexpected_proof', 'inconsistent']);

async function requestCounts(metrics: Registry | undefined): Promise<Map<string, { counted: number; refused: number }>> {
  const out = new Map<string, { counted: number; refused: number }>();
  const metric = metrics?.getSingleMetric('cosign_add_checkpoint_total');
  if (metric === undefined) return out;
  for (const v of (await metric.get()).values) {
    const origin = v.labels.origin;
    const outcome = v.labels.outcome;
    if (typeof origin !== 'string' || typeof outcome !== 'string') continue;
    const e = out.get(origin) ?? { counted: 0, refused: 0 };
    if (COUNTED.has(outcome)) e.counted += v.value;
    if (outcome === 'quota_exceeded') e.refused += v.value;
    out.set(origin, e);
  }
  return out;
}

export interface WitnessPageSources {
  store: WitnessStore;
  clock: CheckpointClock;
  cosign?: CosignRole | undefined;
  /** The node's metrics registry (the cosign role's request counters). */
  metrics?: Registry | undefined;
  build?: BuildInfo | undefined;
  startedAtMs: number;
  now?: () => number;
}

interface HealthShape {
  witness_name: string;
  roles: string[];
  version: string;
  log: { origin: string };
  keys: { witness: string; log_vkey: string; cosign_vkey: string | null };
}

/** Seed and duplicity counts (`count(*)` scans) are re-read at most this often. */
export const COUNTS_TTL_MS = 10_000;

/**
 * The `statusPage` the witness routes call: gathers the data for one request and renders it.
 * `GET /` bypasses the queue and the rate limit, so the expensive reads are bounded: the counts
 * are cached for COUNTS_TTL_MS, and concurrent requests share one read of the cosigned logs.
 */
export function createWitnessStatusPage(
  src: WitnessPageSources,
): (health: Record<string, unknown>, req: StatusPageRequest) => Promise<string> {
  let counts: { atMs: number; value: Promise<{ seeds: number; duplicities: number }> } | undefined;
  const readCounts = (nowMs: number): Promise<{ seeds: number; duplicities: number }> => {
    if (counts === undefined || nowMs - counts.atMs >= COUNTS_TTL_MS || nowMs < counts.atMs) {
      const entry = { atMs: nowMs, value: src.store.anchors.counts() };
      counts = entry;
      entry.value.catch(() => {
        if (counts === entry) counts = undefined; // do not cache a failure
      });
    }
    return counts.value;
  };
  let logsInFlight: Promise<WitnessPageData['cosign']> | undefined;
  const readLogs = async (cosignRole: CosignRole): Promise<WitnessPageData['cosign']> => {
    const requests = await requestCounts(src.metrics);
    const known = [...cosignRole.logs.current().values()].sort((a, b) => (a.origin < b.origin ? -1 : a.origin > b.origin ? 1 : 0));
    const logs = await Promise.all(
      known.slice(0, MAX_LOG_ROWS).map(async (l): Promise<CosignLogRow> => {
        const state = await src.store.cosign.getOrigin(l.origin);
        const r = requests.get(l.origin) ?? { counted: 0, refused: 0 };
        return {
          origin: l.origin,
          source: l.source,
          size: state?.size ?? null,
          lastCosigned: state?.lastTime ?? null,
          qpd: l.qpd,
          counted: r.counted,
          refused: r.refused,
        };
      }),
    );
    return { logs, total: known.length };
  };
  const sharedLogs = (cosignRole: CosignRole): Promise<WitnessPageData['cosign']> => {
    logsInFlight ??= readLogs(cosignRole).finally(() => {
      logsInFlight = undefined;
    });
    return logsInFlight;
  };
  return async (health, req) => {
    const h = health as unknown as HealthShape;
    const nowMs = (src.now ?? Date.now)();
    const [cp, counts, cosign] = await Promise.all([
      src.store.log.checkpoint(),
      readCounts(nowMs),
      src.cosign === undefined ? null : sharedLogs(src.cosign),
    ]);
    const size = cp?.size ?? 0;
    const signed = src.clock.signedAt(size, nowMs);
    const base = commandBaseUrl(req);
    return renderWitnessPage({
      name: h.witness_name,
      roles: h.roles,
      version: h.version,
      witnessKeyHex: h.keys.witness,
      logOrigin: h.log.origin,
      logVkey: h.keys.log_vkey,
      cosignVkeys: src.cosign?.healthInfo().cosignVkeys ?? (h.keys.cosign_vkey === null ? [] : [h.keys.cosign_vkey]),
      log: { size, checkpoint: cp?.note ?? null, signedAtMs: signed.atMs, signedExact: signed.exact },
      counts: { seeds: counts.seeds, duplicities: counts.duplicities, anchors: Math.max(0, size - counts.duplicities) },
      cosign,
      baseUrl: base.url,
      hostUsable: base.usable,
      runningDigest: src.build?.body.running_digest,
      nowMs,
      startedAtMs: src.startedAtMs,
    });
  };
}
