/**
 * Alerts (SPEC §6.1): every new finding pushed to each `--alert-webhook`, at least once.
 *
 * Episodes: a finding that holds at consecutive polls is one episode, named by its kind, its
 * subject (Finding.subject, else its id) and the time it was first seen; the alert id is a hash of
 * the three, so a finding that clears (is absent from a poll) and comes back is a new alert, and
 * however many polls see one episode it is queued once. A finding about a witness that the poll
 * could not reach (an `unreachable` finding for its URL) did not clear: it was not looked at, so its
 * episode stays open (else a witness's outage would re-alert everything it was already alerted for). The queue (in the monitor state, persisted
 * with it) holds one entry per alert and webhook with the exact body to send; an attempt that does
 * not get a 2xx is retried after 1 s, doubling to 5 min, until 24 h after the alert was queued.
 */
import { sha256Hex } from '../../crypto/sha256.ts';
import { stringifyJson } from '../../encoding/json.ts';
import { formatTimestamp } from '../../encoding/time.ts';
import type { HttpOptions } from '../http.ts';
import { emptyAlertState, type AlertState, type QueuedAlert } from './alert-state.ts';
import type { Finding, FindingKind } from './findings.ts';
import type { MonitorState } from './state.ts';
import { postAlert, type Webhook } from './webhook.ts';

export const ALERT_V = 'anchor-witness/alert/v1';
/** First retry delay; it doubles per failed attempt up to RETRY_MAX_MS. */
export const RETRY_BASE_MS = 1_000;
export const RETRY_MAX_MS = 5 * 60_000;
/** An alert not delivered this long after it was queued is dropped (and logged). */
export const GIVE_UP_MS = 24 * 3_600_000;

/** The JSON body of an alert POST. */
export interface AlertPayload {
  v: typeof ALERT_V;
  id: string;
  kind: FindingKind;
  /** RFC 3339: when the episode was first seen. */
  detected_at: string;
  /** The witness's base URL, when the finding is about one witness. */
  witness: string | null;
  seed: string | null;
  summary: string;
  /** The finding's evidence (`{}` for a kind that has none). */
  evidence: Record<string, unknown>;
}

const subjectOf = (f: Finding): string => f.subject ?? f.id;

/** The alert id of an episode: hex of SHA-256(kind ‖ LF ‖ subject ‖ LF ‖ first seen), 32 digits. */
export function alertId(kind: string, subject: string, firstSeen: number): string {
  return sha256Hex(`${kind}\n${subject}\n${firstSeen}`).slice(0, 32);
}

/**
 * Move the episodes on with one poll's findings (all that hold now, `now` in unix seconds):
 * returns the alerts of the episodes that start at this poll; episodes of findings absent from it
 * end, except those about a witness this poll could not reach (still open, not seen).
 */
export function recordEpisodes(state: MonitorState, findings: readonly Finding[], now: number): AlertPayload[] {
  const alerts = (state.alerts ??= emptyAlertState());
  const open: AlertState['episodes'] = {};
  const fresh: AlertPayload[] = [];
  for (const f of findings) {
    const key = `${f.kind} ${subjectOf(f)}`;
    if (open[key] !== undefined) continue;
    const prev = alerts.episodes[key];
    if (prev !== undefined) {
      open[key] = { ...prev, last_seen: now };
      continue;
    }
    const id = alertId(f.kind, subjectOf(f), now);
    open[key] = { id, first_seen: now, last_seen: now, ...(f.url === undefined ? {} : { url: f.url }) };
    fresh.push({
      v: ALERT_V,
      id,
      kind: f.kind,
      detected_at: formatTimestamp(now),
      witness: f.url ?? null,
      seed: f.seed ?? null,
      summary: f.message,
      evidence: { ...f.evidence },
    });
  }
  const unreachable = new Set(findings.flatMap((f) => (f.kind === 'unreachable' && f.url !== undefined ? [f.url] : [])));
  for (const [key, e] of Object.entries(alerts.episodes)) {
    if (open[key] === undefined && e.url !== undefined && unreachable.has(e.url) && !key.startsWith('unreachable ')) open[key] = e;
  }
  alerts.episodes = open;
  return fresh;
}

/** Queue each alert for each webhook (once per id and webhook). */
export function enqueueAlerts(state: MonitorState, payloads: readonly AlertPayload[], webhooks: readonly Webhook[], nowMs: number): void {
  const alerts = (state.alerts ??= emptyAlertState());
  for (const p of payloads) {
    const body = stringifyJson(p);
    for (const w of webhooks) {
      if (alerts.queue.some((q) => q.id === p.id && q.webhook === w.key)) continue;
      alerts.queue.push({ id: p.id, webhook: w.key, body, created_ms: nowMs, next_ms: nowMs, attempts: 0 });
    }
  }
}

export const pendingAlerts = (state: MonitorState): number => state.alerts?.queue.length ?? 0;

/** When the next queued attempt is due (unix ms), undefined when the queue is empty. */
export function nextAlertDue(state: MonitorState): number | undefined {
  const q = state.alerts?.queue ?? [];
  return q.length === 0 ? undefined : Math.min(...q.map((e) => e.next_ms));
}

/** The delay before attempt `attempts + 1` after `attempts` failures: 1 s, 2 s, 4 s, … 5 min. */
export const retryDelayMs = (attempts: number): number => Math.min(RETRY_BASE_MS * 2 ** Math.min(attempts - 1, 30), RETRY_MAX_MS);

export interface AlertDelivery {
  webhooks: readonly Webhook[];
  /** HMAC key for X-Alert-Signature (none: unsigned). */
  secret?: Uint8Array;
  /** Timeout and headers for the POSTs (retries are the queue's). */
  http: HttpOptions;
  /** The clock (unix ms). */
  now: () => number;
  /** One line per delivery event (URLs shown as scheme and host). */
  log: (line: string) => void;
}

/**
 * Attempt every due entry, in queue order. A failure schedules the entry's next attempt and
 * defers the rest of that webhook's due entries to the same time (a receiver that is down costs
 * one timeout per round, not one per alert). Returns how many were delivered.
 */
export async function deliverDueAlerts(state: MonitorState, d: AlertDelivery): Promise<{ sent: number }> {
  const alerts = state.alerts;
  if (alerts === undefined) return { sent: 0 };
  const byKey = new Map(d.webhooks.map((w) => [w.key, w]));
  const deferredUntil = new Map<string, number>();
  const keep: QueuedAlert[] = [];
  let sent = 0;
  for (const entry of [...alerts.queue]) {
    const hook = byKey.get(entry.webhook);
    const now = d.now();
    if (hook === undefined) {
      d.log(`alert ${entry.id}: dropped, its webhook is no longer configured`);
      continue;
    }
    if (now - entry.created_ms >= GIVE_UP_MS) {
      d.log(`alert ${entry.id} to ${hook.shown}: gave up after ${entry.attempts} attempts in 24 h (last: ${entry.last_error ?? 'none'})`);
      continue;
    }
    const deferred = deferredUntil.get(hook.key);
    if (deferred !== undefined) {
      entry.next_ms = Math.max(entry.next_ms, deferred);
      keep.push(entry);
      continue;
    }
    if (entry.next_ms > now) {
      keep.push(entry);
      continue;
    }
    const failure = await postAlert(hook, entry.body, {
      nowSeconds: Math.floor(now / 1000),
      http: d.http,
      ...(d.secret !== undefined ? { secret: d.secret } : {}),
    });
    entry.attempts++;
    if (failure === null) {
      sent++;
      d.log(`alert ${entry.id} delivered to ${hook.shown}${entry.attempts > 1 ? ` (attempt ${entry.attempts})` : ''}`);
      continue;
    }
    const delay = retryDelayMs(entry.attempts);
    entry.next_ms = d.now() + delay;
    entry.last_error = failure;
    deferredUntil.set(hook.key, entry.next_ms);
    d.log(`alert ${entry.id} to ${hook.shown}: ${failure}; attempt ${entry.attempts}, retry in ${Math.round(delay / 1000)} s`);
    keep.push(entry);
  }
  alerts.queue = keep;
  return { sent };
}
