/**
 * HTML building blocks for the status pages and the monitor report: every value is escaped unless
 * it is already `SafeHtml` (markup this code built). Pure: no I/O, no clock.
 *
 *   const row = html`<tr><th>${label}</th><td><code>${value}</code></td></tr>`;   // SafeHtml
 *   html`<table>${rows}</table>`.value                                          // arrays are joined
 *
 * Interpolations go into element content or into DOUBLE-QUOTED attribute values only; escaping
 * `& < > " '` makes both safe. A URL placed in `href` must come from `safeHref` (or be built here
 * from validated parts): escaping alone does not stop a `javascript:` URL.
 */

/** Markup that is already safe to insert (built by `html`, `raw` or a renderer of this folder). */
export class SafeHtml {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

export type HtmlValue = SafeHtml | string | number | bigint | boolean | null | undefined | readonly HtmlValue[];

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escape text for element content and double-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function render(v: HtmlValue): string {
  if (v instanceof SafeHtml) return v.value;
  if (v === null || v === undefined || v === false) return '';
  if (Array.isArray(v)) return (v as readonly HtmlValue[]).map(render).join('');
  return escapeHtml(String(v));
}

/** Tagged template: the literal parts are markup, every interpolated value is escaped. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]!;
  return new SafeHtml(out);
}

/** Trusted markup (constants of this code only: never a value that came from outside). */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/** Join values (escaped unless SafeHtml) with a separator (markup). */
export function joinHtml(values: readonly HtmlValue[], separator: SafeHtml | string = ''): SafeHtml {
  const sep = separator instanceof SafeHtml ? separator.value : escapeHtml(separator);
  return new SafeHtml(values.map(render).join(sep));
}

/**
 * A URL for `href`: http(s) URLs and same-origin absolute paths pass; anything else (javascript:,
 * data:, protocol-relative `//host`, …) becomes `#`. The result is still escaped by `html`.
 */
export function safeHref(url: string): string {
  if (/^\/(?![/\\])/.test(url)) return url;
  try {
    const u = new URL(url);
    if (u.protocol === 'http:' || u.protocol === 'https:') return u.href;
  } catch {
    // not a URL
  }
  return '#';
}

/** A `data:` URL of text (base64, so any byte survives), for evidence downloads in the report. */
export function dataUrl(mime: string, text: string): string {
  if (!/^[a-z]+\/[a-z0-9.+-]+$/.test(mime)) throw new Error(`bad media type ${mime}`);
  return `data:${mime};charset=utf-8;base64,${Buffer.from(text, 'utf8').toString('base64')}`;
}

/**
 * Quote one word for a POSIX shell so that a copied command means what the page shows: plain words
 * stay as they are, everything else is single-quoted (`'` becomes `'\''`).
 */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_./:@%=,+-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * A shell command line from words, each quoted as needed. A word starting with `$NAME` (capitals
 * and `_`) keeps that part a shell variable for the reader to set: `"$NAME"` + the quoted rest.
 */
export function shellCommand(words: readonly string[]): string {
  return words
    .map((w) => {
      const m = /^\$([A-Z_]+)(.*)$/s.exec(w);
      return m === null ? shellQuote(w) : `"$${m[1]!}"${m[2] === '' ? '' : shellQuote(m[2]!)}`;
    })
    .join(' ');
}

/**
 * The `Host` request header, if it is a plausible host[:port] — a DNS name, an IPv4 address or a
 * bracketed IPv6 address, port 1..65535 — lowercased; else undefined. The value is attacker
 * controlled: it is used for display in copy-paste commands only, never to decide anything.
 */
export function displayHost(header: string | undefined): string | undefined {
  if (header === undefined || header.length > 262) return undefined;
  const m =
    /^(?:((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?)|\[([0-9A-Fa-f:.]{2,45})\])(?::([0-9]{1,5}))?$/.exec(
      header,
    );
  if (m === null) return undefined;
  const port = m[3];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535 || /^0/.test(port))) return undefined;
  if (m[2] !== undefined && !/:/.test(m[2])) return undefined;
  return header.toLowerCase().replace(/\.(?=$|:)/, '');
}

/** True for localhost, 127.0.0.0/8, ::1 and bare IP literals (hosts that are not a public name). */
export function isLocalOrIpHost(host: string): boolean {
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:[0-9]+$/, '');
  return name === 'localhost' || name.startsWith('[') || /^[0-9.]+$/.test(name);
}
