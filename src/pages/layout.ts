/**
 * The page shell shared by the witness and bridge status pages and the monitor report: one inline
 * stylesheet, no external asset, no script, and a strict Content-Security-Policy.
 *
 * CSP decision: `default-src 'none'` (nothing is loaded: no script, image, font, frame or
 * connection) with the one inline `<style>` allowed by its SHA-256 hash rather than
 * `'unsafe-inline'`, so an injected `<style>` or `style=""` would not apply either. The stylesheet
 * is a constant, so its hash is computed once at load. Charts are inline SVG styled with
 * presentation attributes (not subject to style-src). Servers send `PAGE_CSP` as a header; every
 * page also carries the policy in a `<meta http-equiv>` (minus `frame-ancestors`, which browsers
 * ignore there), so the monitor report keeps it when opened from disk.
 */
import { createHash } from 'node:crypto';
import { html, raw, type HtmlValue, type SafeHtml } from './html.ts';

export const STYLESHEET = `
:root{color-scheme:light dark;--fg:#1b1f24;--muted:#57606a;--bg:#fff;--card:#f6f8fa;--line:#d0d7de;--accent:#0969da;--ok:#1a7f37;--warn:#9a6700;--alert:#cf222e;--alert-bg:#ffebe9;--warn-bg:#fff8c5}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#8d96a0;--bg:#0d1117;--card:#161b22;--line:#30363d;--accent:#4493f8;--ok:#3fb950;--warn:#d29922;--alert:#f85149;--alert-bg:#3c1618;--warn-bg:#3a2d0c}}
*{box-sizing:border-box}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;padding:1.5rem;max-width:72rem}
header{border-bottom:1px solid var(--line);margin-bottom:1rem}
h1{font-size:1.6rem;margin:.2rem 0 .4rem;word-break:break-all}
h2{font-size:1.15rem;margin:1.6rem 0 .5rem}
h3{font-size:1rem;margin:1rem 0 .4rem;word-break:break-all}
.sub{color:var(--muted);margin:0 0 .8rem}
a{color:var(--accent)}
code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
code{word-break:break-all}
pre{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.6rem .8rem;overflow-x:auto;white-space:pre;margin:.3rem 0 .8rem}
table{border-collapse:collapse;width:100%;margin:.3rem 0 .8rem}
th,td{text-align:left;vertical-align:top;padding:.35rem .6rem;border-bottom:1px solid var(--line)}
table.kv th{width:14rem;color:var(--muted);font-weight:600}
thead th{color:var(--muted);font-weight:600;border-bottom:2px solid var(--line)}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(11rem,1fr));gap:.7rem;margin:.5rem 0 1rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.6rem .8rem}
.card .label{color:var(--muted);font-size:.8rem;text-transform:uppercase;letter-spacing:.04em}
.card .value{font-size:1.5rem;font-weight:650;font-variant-numeric:tabular-nums;word-break:break-all}
.card .note{color:var(--muted);font-size:.85rem}
.pill{display:inline-block;border:1px solid var(--line);border-radius:999px;padding:0 .55rem;font-size:.8rem;margin-right:.25rem}
.pill.ok{color:var(--ok);border-color:var(--ok)}
.pill.warning{color:var(--warn);border-color:var(--warn)}
.pill.alert{color:var(--alert);border-color:var(--alert)}
.muted{color:var(--muted)}
.finding{border:1px solid var(--line);border-left:5px solid var(--warn);background:var(--warn-bg);border-radius:6px;padding:.5rem .8rem;margin:.6rem 0}
.finding.alert{border-left-color:var(--alert);background:var(--alert-bg)}
.finding p{margin:.2rem 0}
.downloads a{margin-right:1rem}
details{margin:.3rem 0}
summary{cursor:pointer;color:var(--accent)}
figure{margin:.4rem 0 1rem}
figcaption{color:var(--muted);font-size:.85rem}
svg.chart{width:100%;height:auto;max-width:60rem;background:var(--card);border:1px solid var(--line);border-radius:6px}
footer{margin-top:2rem;border-top:1px solid var(--line);color:var(--muted);font-size:.85rem;padding-top:.6rem}
`;

// Inserted verbatim (the hash is over these exact bytes), so it must hold nothing HTML would read.
if (/[<&]/.test(STYLESHEET)) throw new Error('the stylesheet must not contain < or &');
const STYLESHEET_HTML = raw(STYLESHEET);

/** `'sha256-…'` of the stylesheet, as CSP wants it. */
export const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLESHEET, 'utf8').digest('base64')}'`;

const POLICY = `default-src 'none'; style-src ${STYLE_HASH}; img-src data:; base-uri 'none'; form-action 'none'`;

/** The Content-Security-Policy header value for the pages (servers send it with `GET /`). */
export const PAGE_CSP = `${POLICY}; frame-ancestors 'none'`;

/** The same policy for `<meta http-equiv>` (frame-ancestors is not allowed there). */
export const META_CSP = POLICY;

/** Response headers that go with a page (besides the content type). */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': PAGE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export interface PageParts {
  /** `<title>`: plain text. */
  title: string;
  /** Main heading (plain text) and an optional line under it. */
  heading: HtmlValue;
  subtitle?: HtmlValue;
  body: HtmlValue;
  footer?: HtmlValue;
}

/** A whole HTML document. */
export function renderPage(p: PageParts): string {
  const doc: SafeHtml = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${META_CSP}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${p.title}</title>
<style>${STYLESHEET_HTML}</style>
</head>
<body>
<header><h1>${p.heading}</h1>${p.subtitle === undefined ? '' : html`<p class="sub">${p.subtitle}</p>`}</header>
<main>
${p.body}
</main>
${p.footer === undefined ? '' : html`<footer>${p.footer}</footer>`}
</body>
</html>
`;
  return doc.value;
}
