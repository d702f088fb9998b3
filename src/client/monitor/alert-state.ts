/**
 * The alerting part of the monitor's state (persisted in `--state` with the rest): the open
 * episode of every finding that holds, and the webhook delivery queue. Webhook URLs are secrets:
 * the queue names a webhook by the SHA-256 of its URL, never the URL.
 */

/** One episode of one finding: it holds since `first_seen` (unix seconds) and was last seen at `last_seen`. */
export interface AlertEpisode {
  id: string;
  first_seen: number;
  last_seen: number;
  /** The witness the finding is about (its base URL), when it is about one. */
  url?: string;
}

/** One alert for one webhook, until a 2xx (or 24 h of failures). */
export interface QueuedAlert {
  /** The alert's id (the episode's). */
  id: string;
  /** Hex SHA-256 of the webhook URL. */
  webhook: string;
  /** The exact JSON body sent at every attempt. */
  body: string;
  /** When it was queued, and when the next attempt is due (unix milliseconds). */
  created_ms: number;
  next_ms: number;
  attempts: number;
  /** The last failure (no URL in it). */
  last_error?: string;
}

export interface AlertState {
  /** By `<kind> <subject>`: the findings that held at the last poll. */
  episodes: Record<string, AlertEpisode>;
  queue: QueuedAlert[];
}

export function emptyAlertState(): AlertState {
  return { episodes: {}, queue: [] };
}

/** Check the shape of a loaded alert state (`bad` throws). */
export function checkAlertState(doc: unknown, bad: (m: string) => never): void {
  const a = doc as { episodes?: unknown; queue?: unknown } | null;
  if (typeof a !== 'object' || a === null || typeof a.episodes !== 'object' || a.episodes === null || !Array.isArray(a.queue))
    bad('alerts must be {episodes, queue}');
  for (const [key, e] of Object.entries(a.episodes as Record<string, Partial<AlertEpisode> | null>)) {
    if (
      typeof e !== 'object' ||
      e === null ||
      typeof e.id !== 'string' ||
      !Number.isSafeInteger(e.first_seen) ||
      !Number.isSafeInteger(e.last_seen) ||
      (e.url !== undefined && typeof e.url !== 'string')
    )
      bad(`alert episode ${key} is malformed`);
  }
  for (const q of a.queue as (Partial<QueuedAlert> | null)[]) {
    if (
      typeof q !== 'object' ||
      q === null ||
      typeof q.id !== 'string' ||
      typeof q.webhook !== 'string' ||
      typeof q.body !== 'string' ||
      !Number.isSafeInteger(q.created_ms) ||
      !Number.isSafeInteger(q.next_ms) ||
      !Number.isSafeInteger(q.attempts)
    )
      bad('alerts.queue holds a malformed entry');
  }
}
