/** A minimal server-rendered status page (the status-page issue makes it complete). Everything is HTML-escaped. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export function renderStatusPage(health: object): string {
  const h = health as { witness_name: string; roles: string[]; version: string; log: { origin: string; size: number }; keys: { witness: string; log_vkey: string; cosign_vkey: string | null } };
  const row = (k: string, v: string): string => `<tr><th>${escapeHtml(k)}</th><td><code>${escapeHtml(v)}</code></td></tr>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(h.witness_name)} — anchor witness</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:60em}th{text-align:left;padding-right:1em;vertical-align:top}code{word-break:break-all}</style>
</head><body>
<h1>${escapeHtml(h.witness_name)}</h1>
<table>
${row('roles', h.roles.join(', '))}
${row('version', h.version)}
${row('witness key', h.keys.witness)}
${row('log origin', h.log.origin)}
${row('log vkey', h.keys.log_vkey)}
${row('cosignature vkey', h.keys.cosign_vkey ?? '—')}
${row('log size', String(h.log.size))}
</table>
<p><a href="/health">/health</a> · <a href="/log/checkpoint">/log/checkpoint</a> · <a href="/openapi.json">/openapi.json</a> · <a href="/metrics">/metrics</a></p>
</body></html>
`;
}
