// Property tests (fast-check) of the KEL verifier, SPEC §3.5: random valid KELs (rotations with
// Ed25519 and P-256 keys, interactions, delegation) are accepted with the state the builder
// predicts; any single-byte change to a KEL file is refused or leaves the accepted state as it
// was — never accepted as a different state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseKelDocument } from '../../src/keri/document.ts';
import { evaluateKels, type KelCache } from '../../src/keri/evaluate.ts';
import { DEFAULT_KEL_LIMITS, type KeyState, type RawKel } from '../../src/keri/types.ts';
import { KelBuilder, kelFile, signer, type KelSigner } from '../helpers/kel-builder.ts';

type Step = { kind: 'ixn' } | { kind: 'rot'; keys: number; curves: boolean[] };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.constant<Step>({ kind: 'ixn' }),
  fc.record({
    kind: fc.constant('rot' as const),
    keys: fc.integer({ min: 1, max: 3 }),
    curves: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
  }),
);

interface Scenario {
  seed: number;
  steps: Step[];
  delegated: boolean;
  anchorLast: boolean;
  hex: boolean;
}

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  seed: fc.integer({ min: 0, max: 1_000_000 }),
  steps: fc.array(stepArb, { maxLength: 5 }),
  delegated: fc.boolean(),
  anchorLast: fc.boolean(),
  hex: fc.boolean(),
});

interface Built {
  root: KelBuilder;
  agent: KelBuilder;
  /** The agent's expected accepted sequence number and keys. */
  expectedS: number;
  expectedKeys: string[];
}

/** Build the scenario with real keys; the agent is delegated by root (or stands alone) and anchored event by event. */
function build(sc: Scenario): Built {
  let n = 0;
  const key = (curve: boolean): KelSigner => signer(`${sc.seed}/${n++}`, curve ? 'p256' : 'ed25519');
  const root = KelBuilder.incept({ signers: [key(false)], next: [key(false)] });
  let current = [key(false)];
  let next = [key(true), key(false), key(false)];
  const agent = KelBuilder.incept({ signers: current, next, nt: 1, delegator: sc.delegated ? root.prefix : undefined });
  const keysAt: string[][] = [current.map((s) => s.key.qb64)];
  if (sc.delegated) root.interact([agent.sealOf(0)]);
  sc.steps.forEach((step, i) => {
    const last = i === sc.steps.length - 1;
    if (step.kind === 'ixn') {
      agent.interact([{ d: `E-step-${i}` }]);
      keysAt.push(keysAt.at(-1)!);
    } else {
      // Reveal the first committed next key, then bring in fresh ones.
      const revealed = next[0]!;
      const fresh = Array.from({ length: step.keys - 1 }, (_, j) => key(step.curves[j]!));
      current = [revealed, ...fresh];
      next = [key(step.curves[0]!), key(step.curves[1]!), key(step.curves[2]!)];
      agent.rotate({ signers: current, next, kt: 1, nt: 1 });
      keysAt.push(current.map((s) => s.key.qb64));
    }
    if (sc.delegated && (!last || sc.anchorLast) && step.kind === 'rot') root.interact([agent.sealOf(agent.sn)]);
  });
  // Delegated: a last drt not anchored leaves the KEL pending just before it.
  const lastUnanchored = sc.delegated && !sc.anchorLast && sc.steps.at(-1)?.kind === 'rot';
  const expectedS = lastUnanchored ? agent.sn - 1 : agent.sn;
  return { root, agent, expectedS, expectedKeys: keysAt[expectedS]! };
}

function snapshot(files: string[]): Map<string, RawKel> {
  const kels = new Map<string, RawKel>();
  for (const text of files) {
    const r = parseKelDocument(text, 'prop', DEFAULT_KEL_LIMITS);
    if ('events' in r) kels.set(r.prefix, r);
  }
  return kels;
}

const summary = (s: KeyState | null): unknown =>
  s === null
    ? null
    : { s: s.s, d: s.d, keys: s.keys.map((k) => k.qb64), kt: s.kt, delegator: s.delegator, revoked: s.revoked, abandoned: s.abandoned };

void test('random valid KELs (rotations, interactions, Ed25519 and P-256 keys, delegation) are accepted with the predicted state', () => {
  fc.assert(
    fc.property(scenarioArb, (sc) => {
      const { root, agent, expectedS, expectedKeys } = build(sc);
      const out = evaluateKels(snapshot([kelFile(root, sc.hex), kelFile(agent, sc.hex)]), null, new Map()).evaluations;
      assert.equal(out.get(root.prefix)!.status, 'accepted');
      const a = out.get(agent.prefix)!;
      assert.equal(a.status, expectedS === agent.sn ? 'accepted' : 'pending', String(a.detail));
      assert.equal(a.state!.s, expectedS);
      assert.deepEqual(
        a.state!.keys.map((k) => k.qb64),
        expectedKeys,
      );
      assert.equal(a.state!.delegator, sc.delegated ? root.prefix : null);
    }),
    { numRuns: 30 },
  );
});

void test('a single-byte change to a KEL file is refused or leaves the accepted state unchanged', () => {
  const printable = fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c));
  fc.assert(
    fc.property(scenarioArb, fc.boolean(), fc.nat(), printable, fc.boolean(), (sc, inRoot, at, ch, withCache) => {
      const { root, agent } = build({ ...sc, delegated: true });
      const files = [kelFile(root, sc.hex), kelFile(agent, sc.hex)];
      const good = evaluateKels(snapshot(files), null, new Map());
      const which = inRoot ? 0 : 1;
      const text = files[which]!;
      const pos = at % text.length;
      fc.pre(text[pos] !== ch);
      const mutated = [...files];
      mutated[which] = text.slice(0, pos) + ch + text.slice(pos + 1);
      const cache: KelCache | null = withCache ? good.cache : null;
      const out = evaluateKels(snapshot(mutated), cache, new Map()).evaluations;
      for (const [prefix, ev] of out) {
        const before = good.evaluations.get(prefix);
        if (ev.status === 'invalid') continue;
        assert.ok(before !== undefined, `a new prefix ${prefix} was accepted`);
        assert.deepEqual(
          summary(ev.state),
          summary(before.state),
          `changed byte ${pos} of ${inRoot ? 'root' : 'agent'} to ${JSON.stringify(ch)}`,
        );
      }
    }),
    { numRuns: 150 },
  );
});

void test('hostile input: arbitrary JSON events and attachment strings are refused, never thrown', () => {
  const b = KelBuilder.incept({ signers: [signer('h0')], next: [signer('h1')] });
  const good = b.rawKel();
  const event0 = b.events[0]!;
  const eventArb = fc.oneof(
    fc.jsonValue(),
    // Near misses: the real inception with one member replaced by an arbitrary JSON value.
    fc.tuple(fc.constantFrom(...Object.keys(event0)), fc.jsonValue()).map(([m, v]) => ({ ...event0, [m]: v })),
  );
  const attachmentArb = fc.oneof(
    fc.string(),
    fc.string().map((s) => `-A${s}`),
    fc.string().map((s) => `${good.attachments[0]!}${s}`),
    fc.nat({ max: good.attachments[0]!.length }).map((n) => good.attachments[0]!.slice(0, n)),
  );
  fc.assert(
    fc.property(fc.array(fc.tuple(eventArb, attachmentArb), { minLength: 1, maxLength: 3 }), (pairs) => {
      const raw: RawKel = { ...good, events: pairs.map((p) => p[0]), attachments: pairs.map((p) => p[1]), sourceHash: 'hostile' };
      const ev = evaluateKels(new Map([[b.prefix, raw]]), null, new Map()).evaluations.get(b.prefix)!;
      if (ev.status !== 'invalid') {
        // Only the untouched inception with a valid signature may pass.
        assert.deepEqual(
          summary(ev.state),
          summary(evaluateKels(new Map([[b.prefix, good]]), null, new Map()).evaluations.get(b.prefix)!.state),
        );
      } else {
        assert.ok(ev.reason !== null);
      }
    }),
    { numRuns: 300 },
  );
});
