// Renders the witness status page from its data (pure: no store, no clock, no request); every value
// is escaped (src/pages/html.ts) and the page is served with `PAGE_CSP` (src/pages/layout.ts).
import { bucketCapacity } from '../cosign/quota.ts';
import { ed25519ToDidKey } from '../crypto/ed25519.ts';
import { sha256Hex } from '../crypto/sha256.ts';
import { decodeHex } from '../encoding/hex.ts';
import { formatCount, formatDuration, formatUtc, plural } from '../pages/format.ts';
import { html, joinHtml, type SafeHtml } from '../pages/html.ts';
import { renderPage } from '../pages/layout.ts';
import { renderCommands } from './status-page-commands.ts';
import { COUNTS_TTL_MS, type WitnessPageData } from './status-page-data.ts';

const kv = (label: string, value: SafeHtml | string, note?: SafeHtml | string): SafeHtml =>
  html`<tr><th scope="row">${label}</th><td>${value}${note === undefined ? '' : html` <span class="muted">${note}</span>`}</td></tr>`;
const code = (s: string): SafeHtml => html`<code>${s}</code>`;
const card = (label: string, value: string, note: SafeHtml | string, id: string): SafeHtml =>
  html`<div class="card" id="${id}"><div class="label">${label}</div><div class="value">${value}</div><div class="note">${note}</div></div>`;

function checkpointAge(d: WitnessPageData): SafeHtml {
  const age = formatDuration((d.nowMs - d.log.signedAtMs) / 1000);
  const at = formatUtc(d.log.signedAtMs / 1000);
  return d.log.signedExact
    ? html`signed ${age} ago (${at})`
    : html`signed at least ${age} ago (at or before ${at}, when this process first saw it)`;
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
    return html`<tr><td><code>${l.origin}</code><br><span class="muted">${l.source}</span> · <a href="/${sha256Hex(l.origin)}/checkpoint">checkpoint</a></td><td class="num">${l.size === null ? '—' : formatCount(l.size)}</td><td>${last}</td><td>${quota}<br><span class="muted">since start: ${formatCount(l.counted)} counted, ${formatCount(l.refused)} refused (429)</span></td></tr>`;
  });
  return html`<h2 id="cosign">Logs cosigned (${plural(total, 'log')})</h2>
${
  total === 0
    ? html`<p class="muted">No log is configured (<code>--logs</code>, <code>--logs-list</code>): every add-checkpoint is 404.</p>`
    : html`<table id="cosign-logs"><thead><tr><th>origin</th><th class="num">size cosigned</th><th>last cosigned</th><th>quota</th></tr></thead><tbody>${rows}</tbody></table>${
        total > logs.length
          ? html`<p class="muted">and ${formatCount(total - logs.length)} more (first ${logs.length} by origin shown)</p>`
          : ''
      }`
}`;
}

function kelSection(d: WitnessPageData): SafeHtml {
  const k = d.kel;
  if (k === undefined) return html``;
  const last =
    k.lastReload === null
      ? html`<span class="muted">never</span>`
      : html`${formatDuration((d.nowMs - k.lastReload.at) / 1000)} ago (${k.lastReload.why}) ${
          k.lastReload.ok
            ? html`<span class="pill ok">ok</span>`
            : html`<span class="pill alert">failed</span> <span class="muted">${k.lastReload.error ?? ''}</span>`
        }`;
  return html`<h2 id="kel">Party keys from key event logs</h2>
<table class="kv" id="kel-registry"><tbody>
${kv('KEL source', code(k.source))}
${kv('KELs', html`<span id="kel-accepted">${formatCount(k.counts.accepted)}</span> accepted, <span id="kel-pending">${formatCount(k.counts.pending)}</span> pending, <span id="kel-invalid">${formatCount(k.counts.invalid)}</span> invalid`)}
${kv('last reload', last)}
</tbody></table>`;
}

function kelWitnessSection(d: WitnessPageData): SafeHtml {
  const k = d.kelWitness;
  if (k === null || k === undefined) return html``;
  const oobis =
    k.oobis.length === 0
      ? html`<span class="muted">none: no <code>--kel-url</code> was ever given, so the OOBI names no URL (controllers need one)</span>`
      : joinHtml(
          k.oobis.map((u) => code(u)),
          html`<br>`,
        );
  return html`<h2 id="kel-witness">KERI witness</h2>
<table class="kv" id="kel-witness-table"><tbody>
${kv('prefix', code(k.prefix), "list it in a controller's b (or add it with ba)")}
${kv('OOBI', html`<span id="kel-witness-oobis">${oobis}</span>`, k.stamp === null ? undefined : html`URL set of ${k.stamp}`)}
${kv('held prefixes', html`<span id="kel-witness-held">${formatCount(k.held)}</span>`)}
${kv('events', html`<span id="kel-witness-receipted">${formatCount(k.witnessed)}</span> receipted, ${formatCount(k.events)} stored`)}
${kv('duplicity proofs', html`<span id="kel-witness-duplicities">${formatCount(k.duplicities)}</span>`, html`<a href="/v1/kel/duplicity">/v1/kel/duplicity</a>`)}
${kv('escrow', html`<span id="kel-witness-escrowed">${formatCount(k.escrowed)}</span> ${k.escrowed === 1 ? 'event' : 'events'} waiting`)}
</tbody></table>`;
}

function logWitnessSection(d: WitnessPageData): SafeHtml {
  if (d.logWitnesses === null || d.logWitnesses === undefined) return html``;
  const rows = d.logWitnesses.witnesses.map(
    (w) =>
      html`<tr><td><code>${w.url}</code>${w.last_failure === null ? '' : html`<br><span class="muted">${w.last_failure}</span>`}</td><td class="num">${formatCount(w.cosigned_size)}</td><td>${w.last_success ?? html`<span class="muted">never</span>`}</td><td class="num">${formatCount(w.lag_entries)}</td><td>${w.lag_entries === 0 ? '—' : formatDuration(w.lag_seconds)}</td></tr>`,
  );
  return html`<h2 id="log-witnesses">Witnesses of this log</h2>
<p>Published (witnessed) size: <span id="log-witnessed-size">${formatCount(d.logWitnesses.published)}</span> · <a href="/log/checkpoint">witnessed checkpoint</a> · <a href="/log/checkpoint?unwitnessed=1">newest node-signed checkpoint</a></p>
<table id="log-witness-table"><thead><tr><th>witness</th><th class="num">size cosigned</th><th>last success</th><th class="num">lag (entries)</th><th>lag (time)</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export function renderWitnessPage(d: WitnessPageData): string {
  const did = ed25519ToDidKey(decodeHex(d.witnessKeyHex, 32));
  const cosignKeys =
    d.cosignVkeys.length === 0 ? html`<span class="muted">— (cosign role off)</span>` : joinHtml(d.cosignVkeys.map(code), html`<br>`);
  const body = html`<section class="cards">
${card('log size', formatCount(d.log.size), checkpointAge(d), 'log-size')}
${card('anchors co-signed', formatCount(d.counts.anchors), html`on ${plural(d.counts.seeds, 'seed')}`, 'anchors')}
${card('duplicity proofs', formatCount(d.counts.duplicities), d.counts.duplicities === 0 ? 'no party forked' : 'seeds frozen', 'duplicities')}
${d.cosign === null ? '' : card('logs cosigned for', formatCount(d.cosign.total), `${d.cosign.logs.filter((l) => l.size !== null).length} with a cosigned checkpoint`, 'cosign-count')}
</section>
<h2>Identity</h2>
<table class="kv" id="identity"><tbody>
${kv('name', code(d.name))}
${kv('roles', joinHtml(d.roles.map((r) => html`<span class="pill ok">${r}</span>`)))}
${kv('version', code(d.version), d.runningDigest === undefined ? undefined : html`bundle sha256 <code>${d.runningDigest}</code> (<a href="/build">/build</a>)`)}
${kv('witness key', code(d.witnessKeyHex), 'Ed25519, hex')}
${kv('witness key (did:key)', code(did))}
${kv('log origin', code(d.logOrigin))}
${kv('log vkey', code(d.logVkey))}
${kv('cosignature vkey', cosignKeys)}
${kv('up since', formatUtc(d.startedAtMs / 1000), formatDuration((d.nowMs - d.startedAtMs) / 1000))}
</tbody></table>
<h2>Log</h2>
<table class="kv" id="log"><tbody>
${kv('size', html`<span id="log-size-value">${formatCount(d.log.size)}</span>`)}
${kv('latest checkpoint', checkpointAge(d))}
</tbody></table>
${d.log.checkpoint === null ? html`<p class="muted">No checkpoint yet.</p>` : html`<pre id="checkpoint">${d.log.checkpoint}</pre>`}
${kelSection(d)}
${kelWitnessSection(d)}
${logWitnessSection(d)}
${cosignSection(d)}
<h2>Use this witness</h2>
${renderCommands(d)}`;
  return renderPage({
    title: `${d.name} — anchor witness`,
    heading: d.name,
    subtitle: html`anchor witness ${d.version} · ${joinHtml(d.roles, ', ')} · <a href="/health">/health</a> · <a href="/log/checkpoint">/log/checkpoint</a> · <a href="/openapi.json">/openapi.json</a> · <a href="/metrics">/metrics</a>`,
    body,
    footer: html`Rendered ${formatUtc(d.nowMs / 1000)}; seed and duplicity counts are at most ${COUNTS_TTL_MS / 1000} s old. Everything a witness signs is re-checkable: clients verify under the keys they pinned, never the ones a response carries.`,
  });
}
