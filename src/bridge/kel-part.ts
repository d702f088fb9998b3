/**
 * The KEL roots of `token-bridge serve` (SPEC §7.1 rev 4) as one part the assembly
 * (src/bridge/node.ts) opens, starts and closes: the configuration checks, the store's
 * `tb_kel_tips`, the KelRoots reloader with its log lines.
 */
import type { FastifyBaseLogger } from 'fastify';
import { adoptSighupListeners, type NodePart, type PartReload } from '../server/part.ts';
import { DEFAULT_KEL_LIMITS, type KelLimits } from '../keri/index.ts';
import { DEFAULT_KEL_AGGREGATE, type KelAggregateLimits } from '../registry/kel-evaluator.ts';
import { parseKelSourceSpec } from '../registry/source.ts';
import { BridgeConfigError } from './errors.ts';
import type { KelTipStore } from './kel-tips.ts';
import type { NonceStore } from './nonces.ts';
import { KelRoots } from './roots-kel.ts';
import type { TrustedRoots } from './trusted-roots.ts';

export interface KelRootsConfig {
  /** `--kel-source dir:PATH|git:PATH` (repeatable: every source's copy of a prefix is compared, SPEC §3.5). */
  kelSources?: string[];
  kelPollSeconds?: number;
  kelLimits?: KelLimits;
  kelAggregate?: KelAggregateLimits;
  nonceStore?: 'durable' | 'memory';
  trustedRootsFile?: string;
}

export const DEFAULT_KEL_POLL_SECONDS = 30;

/** The checks that need no I/O (throws BridgeConfigError). */
export function checkKelConfig(config: KelRootsConfig): boolean {
  const sources = config.kelSources ?? [];
  if (sources.length === 0) return false;
  if (config.nonceStore === 'memory') {
    throw new BridgeConfigError(
      'kel_store_required',
      '--kel-source needs a durable store for its KEL tips (rollback protection across restarts and replicas): drop --nonce-store memory, or use --store postgres://…',
    );
  }
  if (config.trustedRootsFile === undefined)
    throw new BridgeConfigError('invalid_option', '--kel-source needs --trusted-roots: its entries without "keys" are the KEL roots');
  for (const s of sources) {
    try {
      parseKelSourceSpec(s);
    } catch (e) {
      throw new BridgeConfigError('invalid_option', (e as Error).message);
    }
  }
  return true;
}

function tipStore(nonces: NonceStore): KelTipStore {
  const s = nonces as Partial<KelTipStore>;
  if (typeof s.kelTips !== 'function' || typeof s.raiseKelTips !== 'function')
    throw new BridgeConfigError(
      'kel_store_required',
      `the ${nonces.kind} nonce store keeps no KEL tips; --kel-source needs a durable store`,
    );
  return s as KelTipStore;
}

/** Open the KEL roots (first evaluation done), or undefined without `--kel-source`. */
export async function openKelRoots(
  config: KelRootsConfig,
  nonces: NonceStore,
  roots: () => TrustedRoots,
  log: FastifyBaseLogger,
): Promise<KelRoots | undefined> {
  if (!checkKelConfig(config)) return undefined;
  return KelRoots.open({
    sources: config.kelSources!.map((s) => parseKelSourceSpec(s)),
    limits: config.kelLimits ?? DEFAULT_KEL_LIMITS,
    aggregate: config.kelAggregate ?? DEFAULT_KEL_AGGREGATE,
    pollSeconds: config.kelPollSeconds ?? DEFAULT_KEL_POLL_SECONDS,
    store: tipStore(nonces),
    roots,
    events: {
      loaded: (why, counts) => {
        log.info({ why, ...counts }, 'KEL source loaded');
      },
      failed: (why, reason) => {
        log.error({ why, reason }, 'KEL source reload failed; the previous key states stay in force');
      },
      kelInvalid: (e) => {
        log.warn({ ...e }, 'kel_invalid');
      },
      shadowed: (ids) => {
        log.warn({ ids }, 'trusted roots with static keys have a KEL in the source: the static keys stand (shadowed)');
      },
      sourceConflict: (prefix, detail) => {
        log.warn({ prefix, detail }, 'KEL sources hold diverging accepted copies (fork): the last accepted state stays');
      },
      workerDied: (prefix, reason) => {
        log.error({ prefix, reason }, 'KEL worker died; the identifier is kel_invalid oversize and the worker restarted');
      },
    },
  });
}

/** The KEL roots as a part of the bridge: its own SIGHUP listener adopted into reload(). */
export interface KelRootsPart extends NodePart {
  readonly roots: KelRoots;
}

export async function startKelRootsPart(
  config: KelRootsConfig,
  nonces: NonceStore,
  roots: () => TrustedRoots,
  log: FastifyBaseLogger,
): Promise<KelRootsPart | undefined> {
  const kel = await openKelRoots(config, nonces, roots, log);
  if (kel === undefined) return undefined;
  const { hup } = await adoptSighupListeners(() => {
    kel.start();
  });
  return {
    name: 'kel-roots',
    roots: kel,
    reload: (): PartReload => {
      hup(); // the reload runs on; its outcome is logged (KEL source loaded / reload failed)
      return { part: 'kel-roots', error: null };
    },
    [Symbol.asyncDispose]: () => kel.stop(),
  };
}
