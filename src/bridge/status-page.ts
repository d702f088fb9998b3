/**
 * The bridge's status page (`GET /`) and its JSON form (`GET /health`): what an operator sees,
 * rendered with the shared page helpers (src/pages), apart from the route wiring.
 */
import { VERSION } from '../version.ts';
import type { BridgeDeps } from './deps.ts';
import type { BridgeMetrics } from './metrics.ts';
import { DISCOVERY_PATH, JWKS_PATH, TOKEN_PATH } from './oidc.ts';
import { JWKS_MAX_AGE_SECONDS, publicationOrder, retentionSeconds } from './keyring.ts';
import { DEFAULT_AUDIENCE } from './decide.ts';
import { formatCount, formatDuration, formatUtc } from '../pages/format.ts';
import { html, joinHtml, safeHref, shellCommand, type SafeHtml } from '../pages/html.ts';
import { renderPage } from '../pages/layout.ts';

export function healthBody(deps: BridgeDeps): Record<string, unknown> {
  const store = deps.store?.snapshot();
  const signers = (deps.keys.signers?.() ?? []).map((s) => s.status());
  return {
    // 200 either way (SPEC §6, §1.1): `degraded` while the nonce store or the token key is down and /token answers 503.
    status: store?.state === 'down' || signers.some((s) => s.state !== 'ok') ? 'degraded' : 'ok',
    ...(store === undefined ? {} : { store }),
    signers,
    version: VERSION,
    issuer: deps.issuer.issuer,
    proof_of_possession: deps.service.policy.proofOfPossession,
    audiences: deps.service.policy.audiences,
    active_kid: deps.keys.active.kid,
    keys: deps.keys.entries.map((e) => ({ kid: e.kid, state: e.state })),
    ...(deps.kel === undefined ? {} : { kel: kelHealth(deps.kel.status()) }),
  };
}

/** SPEC §7.1: `"kel":{"sources","roots":{"accepted","pending","invalid"},"last_reload"}`. */
function kelHealth(s: ReturnType<NonNullable<BridgeDeps['kel']>['status']>): Record<string, unknown> {
  return { sources: s.sources, roots: s.roots, last_reload: s.last_reload };
}

/**
 * The status page (`GET /`): issuer and OIDC links, the signing keys with their ages, the token
 * policy, and the next command to run (`token-bridge aws-setup`). No script, no external asset,
 * everything escaped; served with PAGE_CSP (src/pages/layout.ts).
 */
export function renderBridgeStatusPage(deps: BridgeDeps, metrics: BridgeMetrics, nowMs: number): string {
  const now = Math.floor(nowMs / 1000);
  const iss = deps.issuer.issuer;
  const policy = deps.service.policy;
  const algOf = new Map(deps.keys.jwks().keys.map((k) => [k.kid, k.alg]));
  const retention = retentionSeconds(policy.maxTtl);
  const issued = metrics.issued.total;
  const refused = metrics.refused.total;
  const active = deps.keys.entries.find((e) => e.state === 'active');
  const keyRows = publicationOrder(deps.keys.entries).map((e) => {
    let when: SafeHtml;
    if (e.state === 'active')
      when = html`signing since ${formatUtc(e.notBefore)} <span class="muted">(${formatDuration(now - e.notBefore)} ago)</span>`;
    else if (e.state === 'next')
      when = html`published; signs from ${formatUtc(e.notBefore)} <span class="muted">(${formatDuration(e.notBefore - now)})</span>`;
    else {
      const retireAfter = e.retireAfter ?? now;
      when = html`retired ≈ ${formatDuration(now - (retireAfter - retention))} ago; unpublished after ${formatUtc(retireAfter)} <span class="muted">(${formatDuration(retireAfter - now)})</span>`;
    }
    const pill = e.state === 'active' ? 'ok' : 'warning';
    return html`<tr><td><code>${e.kid}</code></td><td>${algOf.get(e.kid) ?? '?'}</td><td><span class="pill ${pill}">${e.state}</span></td><td>${when}</td></tr>`;
  });
  const audience = policy.audiences.includes(DEFAULT_AUDIENCE) ? DEFAULT_AUDIENCE : policy.audiences[0]!;
  const setup = shellCommand([
    'token-bridge',
    'aws-setup',
    '--issuer',
    iss,
    '--subject',
    '$ROOT_DID',
    '--audience',
    audience,
    '--connect',
    '--format',
    'cli',
  ]);
  const https = iss.startsWith('https://');
  const body = html`<section class="cards">
<div class="card" id="active-key"><div class="label">active key</div><div class="value">${active === undefined ? '—' : (algOf.get(active.kid) ?? '?')}</div><div class="note">${active === undefined ? 'none' : html`<code>${active.kid.slice(0, 12)}…</code> · ${formatDuration(now - active.notBefore)} old`}</div></div>
<div class="card" id="tokens-issued"><div class="label">tokens issued</div><div class="value">${formatCount(issued)}</div><div class="note">since this process started</div></div>
<div class="card" id="tokens-refused"><div class="label">refusals</div><div class="value">${formatCount(refused)}</div><div class="note">since this process started (<a href="/metrics">by code</a>)</div></div>
<div class="card" id="pop"><div class="label">proof of possession</div><div class="value">${policy.proofOfPossession ? 'required' : 'off'}</div><div class="note">${policy.proofOfPossession ? 'the leaf device key signs each request' : 'tokens carry "pop": false'}</div></div>
</section>
<h2>OpenID Connect</h2>
<table class="kv" id="oidc"><tbody>
<tr><th scope="row">issuer</th><td><code>${iss}</code></td></tr>
<tr><th scope="row">discovery</th><td><a href="${safeHref(iss + DISCOVERY_PATH)}">${iss}${DISCOVERY_PATH}</a> <span class="muted">(<a href="${DISCOVERY_PATH}">on this server</a>)</span></td></tr>
<tr><th scope="row">JWKS</th><td><a href="${safeHref(iss + JWKS_PATH)}">${iss}${JWKS_PATH}</a> <span class="muted">(<a href="${JWKS_PATH}">on this server</a>)</span></td></tr>
<tr><th scope="row">token endpoint</th><td><code>POST ${iss}${TOKEN_PATH}</code></td></tr>
</tbody></table>
<h2>Signing keys</h2>
<table id="keys"><thead><tr><th>kid</th><th>alg</th><th>state</th><th>age</th></tr></thead><tbody>${keyRows}</tbody></table>
<p class="muted">Every key listed is published in the JWKS. A retired key stays published max TTL + ${JWKS_MAX_AGE_SECONDS} s after it stopped signing.</p>
<h2>Token policy</h2>
<table class="kv" id="policy"><tbody>
<tr><th scope="row">allowed audiences</th><td>${joinHtml(
    policy.audiences.map((a) => html`<code>${a}</code>`),
    html`<br>`,
  )}</td></tr>
<tr><th scope="row">default TTL</th><td>${formatDuration(policy.defaultTtl)} <span class="muted">(${policy.defaultTtl} s)</span></td></tr>
<tr><th scope="row">maximum TTL</th><td>${formatDuration(policy.maxTtl)} <span class="muted">(${policy.maxTtl} s)</span></td></tr>
<tr><th scope="row">proof of possession</th><td>${policy.proofOfPossession ? 'required' : html`<strong>off</strong> — a copied chain of a trusted root mints tokens`}</td></tr>
<tr><th scope="row">AWS session tags</th><td>${policy.awsSessionTags ? 'on (auths_leaf, auths_caps)' : 'off'}</td></tr>
</tbody></table>
<h2>Next: let AWS trust this bridge</h2>
<p>Print the IAM OIDC provider and a role whose trust policy pins this issuer, the audience and exactly one root identity (set <code>ROOT_DID</code> to the root's <code>did:keri:</code> or <code>did:key:</code>):</p>
<pre id="cmd-aws-setup">${setup}</pre>
${https ? '' : html`<p class="finding"><strong>This issuer is not https://</strong> (development mode): AWS accepts only an https issuer, so <code>aws-setup</code> refuses it. Run the bridge with <code>--issuer https://…</code> behind TLS first.</p>`}
<p>Then check a policy and a token against the trust rules:</p>
<pre id="cmd-check">${[shellCommand(['token-bridge', 'lint-policy', 'trust-policy.json', '--issuer', iss]), shellCommand(['token-bridge', 'check-token', '$JWT', '--issuer', iss, '--audience', audience])].join('\n')}</pre>`;
  return renderPage({
    title: `token-bridge — ${iss}`,
    heading: html`token-bridge <code>${iss}</code>`,
    subtitle: html`OIDC provider for attestation chains · version ${VERSION} · <a href="/health">/health</a> · <a href="/metrics">/metrics</a> · <a href="/openapi.json">/openapi.json</a>`,
    body,
    footer: html`Rendered ${formatUtc(now)}. Relying parties verify tokens with the JWKS; this page is informational.`,
  });
}
