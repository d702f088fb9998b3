/**
 * Pieces of the store-outage tests (test/bridge/store-health.test.ts, test/witness/store-health.test.ts):
 * a pino logger whose JSON lines are kept, a filter on their messages, and a fetch that is tried again
 * when the connection fails before an answer.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';

/** A pino logger whose JSON lines are kept. */
export function capturingLog(): { log: pino.Logger; lines: () => Record<string, unknown>[] } {
  const out: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      out.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l !== ''),
      );
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines: () => out.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

/** The log lines whose `msg` matches `re`. */
export const msgs = (lines: Record<string, unknown>[], re: RegExp): Record<string, unknown>[] =>
  lines.filter((l) => typeof l.msg === 'string' && re.test(l.msg));

/**
 * fetch, tried again when the connection fails before an answer: the tests block their own event
 * loop while PostgreSQL stops and starts (pg_ctl), so a kept-alive socket may close under a request.
 */
export async function fetchAgain(url: string, init?: RequestInit): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url, init);
    } catch (e) {
      if (attempt >= 3) throw e;
    }
  }
}
