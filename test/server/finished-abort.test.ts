// Issue 28 (anchor hot path): when a request finishes, its deadline signal is aborted (work it left
// queued must leave), but with one shared reason. abort() without a reason builds a DOMException,
// stack trace included, for every request: about 9 µs of event-loop CPU per anchor on the bench
// machine (2.3 % of the event loop's profile). The signal must still abort, with an AbortError.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deadlineSignal } from '../../src/server/deadline.ts';
import { request, start } from './_http.ts';

void test('a finished request aborts its deadline signal with one shared AbortError reason, not a new DOMException each time', async () => {
  const signals: AbortSignal[] = [];
  const s = await start({}, (app) => {
    app.get('/x', (req) => {
      signals.push(deadlineSignal(req));
      return Promise.resolve({ ok: true });
    });
  });
  try {
    for (let i = 0; i < 3; i++) assert.equal((await request(s.port, { path: '/x' })).status, 200);
    for (let i = 0; i < 200 && !signals.every((x) => x.aborted); i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(signals.length, 3);
    for (const sig of signals) {
      assert.equal(sig.aborted, true, 'a finished request aborts its signal');
      assert.equal((sig.reason as DOMException).name, 'AbortError');
    }
    assert.equal(signals[0]!.reason, signals[1]!.reason, 'one reason object shared by every finished request');
    assert.equal(signals[1]!.reason, signals[2]!.reason);
  } finally {
    await s.close();
  }
});
