/**
 * KEL verification (SPEC §3.5, bench/kel): a 1 000-event Ed25519 KEL (an inception, then nine
 * interactions per rotation) verified from scratch, and incrementally when one event is appended
 * (the cached 1 000 events are only compared, not verified). The ceiling is the strict Ed25519
 * verifier measured in the same run: verifying a KEL from scratch costs one signature
 * verification per event plus parsing, canonical re-serialization and one BLAKE3 SAID per event,
 * so `events_per_s` / ceiling says how much of the budget goes to the rest. Target: ≥ 0.5.
 *
 * The anchor throughput comparison with a KEL registry is bench/anchor's.
 */
import { generateEd25519, signEd25519, verifyEd25519 } from '../src/crypto/ed25519.ts';
import { KelBuilder, ed25519Signer, type KelSigner } from '../src/keri/build.ts';
import { parseKelDocument } from '../src/keri/document.ts';
import { evaluateKels } from '../src/keri/evaluate.ts';
import { DEFAULT_KEL_LIMITS, type RawKel } from '../src/keri/types.ts';
import { rate } from './_measure.ts';

/** Runs of `fn` per second, for operations too slow for rate()'s batches of 50: at least `min` runs and `seconds`. */
function slowRate(fn: () => void, seconds: number, min = 3): { ops_per_s: number; ops: number } {
  fn(); // warm-up
  const start = performance.now();
  let ops = 0;
  while (ops < min || performance.now() - start < seconds * 1000) {
    fn();
    ops++;
  }
  return { ops_per_s: ops / ((performance.now() - start) / 1000), ops };
}

const EVENTS = 1000;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);

const fresh = (): KelSigner => ed25519Signer(generateEd25519().privateKey);
let next = fresh();
const b = KelBuilder.incept({ signers: [fresh()], next: [next] });
while (b.events.length < EVENTS + 1) {
  if (b.events.length % 10 === 0) {
    const current = next;
    next = fresh();
    b.rotate({ signers: [current], next: [next] });
  } else {
    b.interact([{ i: b.prefix, s: b.events.length.toString(16), d: `E-anchor-${b.events.length}` }]);
  }
}

const docOf = (count: number): string => {
  const doc = b.document();
  return JSON.stringify({ prefix: doc.prefix, events: doc.events.slice(0, count), attachments: doc.attachments.slice(0, count) });
};
const parse = (text: string): RawKel => {
  const r = parseKelDocument(text, 'bench', DEFAULT_KEL_LIMITS);
  if (!('events' in r)) throw new Error(r.detail);
  return r;
};
const textFull = docOf(EVENTS);
const textGrown = docOf(EVENTS + 1);
const full = new Map([[b.prefix, parse(textFull)]]);
const grown = new Map([[b.prefix, parse(textGrown)]]);
const tips = new Map<string, { s: number; d: string }>();

const check = (out: ReturnType<typeof evaluateKels>, s: number): void => {
  const ev = out.evaluations.get(b.prefix)!;
  if (ev.status !== 'accepted' || ev.state!.s !== s) throw new Error(`unexpected ${ev.status} ${String(ev.reason)} ${String(ev.detail)}`);
};

// The ceiling, measured before and after the KEL runs (the machine's load moves; their mean is used).
const msg = new Uint8Array(300);
const key = generateEd25519();
const sig = signEd25519(key.privateKey, msg);
const verifyRate = (): number =>
  rate(() => {
    if (!verifyEd25519(key.publicKey, msg, sig)) throw new Error('verify failed');
  }, SECONDS).ops_per_s;
const verifyBefore = verifyRate();

// From scratch: every event verified.
const scratch = slowRate(() => {
  check(evaluateKels(full, null, tips), EVENTS - 1);
}, SECONDS);
const cached = evaluateKels(full, null, tips).cache;
// Incrementally: the KEL grew by one event; only that event is verified (the source hash differs).
const incremental = slowRate(
  () => {
    check(evaluateKels(grown, cached, tips), EVENTS);
  },
  SECONDS,
  20,
);
// The same, parsing the grown file first (what a reload does per changed file).
const incrementalWithParse = slowRate(
  () => {
    check(evaluateKels(new Map([[b.prefix, parse(textGrown)]]), cached, tips), EVENTS);
  },
  SECONDS,
  5,
);
// Unchanged source: nothing verified.
const unchanged = rate(
  () => {
    check(evaluateKels(full, cached, tips), EVENTS - 1);
  },
  SECONDS,
  20,
);

const verifyAfter = verifyRate();
const verify = { ops_per_s: Math.round((verifyBefore + verifyAfter) / 2) };
const eventsPerS = Math.round(scratch.ops_per_s * EVENTS);
process.stdout.write(
  JSON.stringify(
    {
      bench: 'kel',
      node: process.version,
      kel_events: EVENTS,
      kel_bytes: Buffer.byteLength(textFull),
      ed25519_verify_strict_per_s: verify.ops_per_s,
      ed25519_verify_strict_before_after_per_s: [verifyBefore, verifyAfter],
      from_scratch: {
        // events_per_s first: bench/run.ts's summary takes a row's first `*_per_s` as its rate.
        events_per_s: eventsPerS,
        kels_per_s: Number(scratch.ops_per_s.toFixed(2)),
        ms_per_kel: Number((1000 / scratch.ops_per_s).toFixed(1)),
        crypto_ceiling_per_s: verify.ops_per_s,
        ratio_to_ceiling: Number((eventsPerS / verify.ops_per_s).toFixed(2)),
        target_ratio: 0.5,
      },
      incremental_one_event: {
        evaluations_per_s: Math.round(incremental.ops_per_s),
        // One new event is one signature verification; the rest is recognising the 1 000 cached events.
        crypto_ceiling_per_s: verify.ops_per_s,
        ratio_to_ceiling: Number((incremental.ops_per_s / verify.ops_per_s).toFixed(2)),
        ms_per_evaluation: Number((1000 / incremental.ops_per_s).toFixed(2)),
        with_file_parse_per_s: Math.round(incrementalWithParse.ops_per_s),
        speedup_vs_scratch: Math.round(incremental.ops_per_s / scratch.ops_per_s),
      },
      unchanged_source_per_s: unchanged.ops_per_s,
    },
    null,
    2,
  ) + '\n',
);
