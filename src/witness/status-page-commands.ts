// The status page's copy-paste commands for this witness, and the base URL they use (from the
// request's Host header only when it is a plain host[:port]; see docs/witness.md).
import { displayHost, html, isLocalOrIpHost, shellCommand, type SafeHtml } from '../pages/html.ts';
import type { WitnessPageData } from './status-page-data.ts';

/** What `GET /` hands the page besides the /health body. */
export interface StatusPageRequest {
  host: string | undefined;
  encrypted: boolean;
}

/** Base URL for copy-paste commands (docs/witness.md, "Status page"). */
export function commandBaseUrl(req: StatusPageRequest): { url: string; usable: boolean } {
  const host = displayHost(req.host);
  if (host === undefined) return { url: '$WITNESS_URL', usable: false };
  const plainOk = isLocalOrIpHost(host) || /:[0-9]+$/.test(host);
  return { url: `${req.encrypted || !plainOk ? 'https' : 'http'}://${host}`, usable: true };
}

/**
 * The monitor command: with the anchor role it watches `$SEED` under the parties' keys, read as
 * this witness reads them (`$REGISTRY`, and `$KEL_SOURCE` when the registry takes keys from KELs).
 */
export function monitorCommand(d: Pick<WitnessPageData, 'roles' | 'kel'>, url: string): string[] {
  const words = ['anchor-witness', 'monitor', '--witness', url];
  if (d.roles.includes('anchor')) {
    words.push('--registry', '$REGISTRY');
    if (d.kel !== undefined) words.push('--kel-source', '$KEL_SOURCE');
    words.push('--seed', '$SEED');
  }
  words.push('--state', 'monitor.json');
  return words;
}

/** The "Use this witness" section. */
export function renderCommands(d: WitnessPageData): SafeHtml {
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
<pre id="cmd-witness-set">${q(['anchor-witness', 'party', 'witness-set', '--witness', url, '--threshold', '1', '--out', 'witness-set.json'])}</pre>
<p>Or add this member to an existing set (<code>members</code> array; the set's SAID changes):</p>
<pre id="cmd-member">${member}</pre>`,
  );
  if (d.roles.includes('anchor')) {
    blocks.push(
      html`<h3>Submit an anchor</h3>
<pre id="cmd-submit">${[
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
<p class="muted">The party (its <code>did:keri:</code> id and key) must be in this witness's registry. Over plain HTTP: <code>${q(['curl', '-sS', '-H', 'content-type: application/json', '--data', '@anchor-request.json', `${url}/v1/anchor`])}</code></p>`,
    );
  }
  blocks.push(
    html`<h3>Fetch and check the log</h3>
<pre id="cmd-log">${[
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
      q(monitorCommand(d, url)),
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
    : html`<p class="finding"><strong>Set <code>WITNESS_URL</code> first</strong>: the request's Host header was missing or not a plain host name, so the commands do not name this witness.</p>`;
  const registry = d.roles.includes('anchor')
    ? html` Set <code>REGISTRY</code> to a copy of this witness's party registry file${
        d.kel === undefined
          ? ''
          : html` and <code>KEL_SOURCE</code> to the same KEL source (<code>dir:PATH</code> of a copy of its KEL files, or <code>git:PATH</code> of a repository fetched from the same remote)`
      } for the monitor: it checks every anchor's party signature under the parties' keys, derived as this witness derives them.`
    : '';
  return html`${note}<p class="muted">Set <code>HEAD</code> (the 64-hex head to anchor) and <code>SEED</code> (a 64-hex seed id to watch) where the commands use them.${registry}</p>${blocks}`;
}
