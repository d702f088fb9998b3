/**
 * The bastion part (SPEC §5.6, `--bastion`): the node's cosign routes served through C2SP
 * https-bastions, one connection per `--bastion`, with the key NodeKeys loaded (its own key, SPEC
 * §1). Started after the node's app is ready (the connections serve that app), so it stops first.
 *
 *   const plan = planBastions(config);               // at start-up, before the store: addresses, CA
 *   const part = startBastionPart(ctx, plan, app);   // after listen
 *   part.health();                                   // /health `bastions`
 */
import type { Registry } from 'prom-client';
import type { NodeKeys } from '../keys/node-keys.ts';
import type { NodePart } from '../server/part.ts';
import type { App } from '../server/options.ts';
import { parseBastionAddresses } from './address.ts';
import { loadBastionCa, startBastionBackends, type BastionBackends } from './backends.ts';
import type { BastionLogger, BastionTiming } from './connection.ts';
import type { BastionStatus } from './state-file.ts';

export type { BastionBackends } from './backends.ts';

/** What the bastion part borrows of the node's context. */
export interface BastionPartContext {
  keys: NodeKeys;
  metrics: Registry;
  logger: BastionLogger;
  dataDir: string;
}

/** The checked `--bastion`, `--bastion-ca` flags (planBastions), or null without `--bastion`. */
export interface BastionPlan {
  addresses: readonly string[];
  ca: string | undefined;
  timing: Partial<BastionTiming> | undefined;
}

/** Check `--bastion` (invalid_bastion) and read `--bastion-ca` (invalid_bastion_ca) before anything starts. */
export function planBastions(o: {
  bastions?: readonly string[] | undefined;
  bastionCaFile?: string | undefined;
  bastionTiming?: Partial<BastionTiming> | undefined;
}): BastionPlan | null {
  const addresses = o.bastions ?? [];
  parseBastionAddresses(addresses);
  const ca = o.bastionCaFile === undefined ? undefined : loadBastionCa(o.bastionCaFile);
  return addresses.length === 0 ? null : { addresses, ca, timing: o.bastionTiming };
}

export interface BastionHealthFragment {
  bastions: BastionStatus[];
}

export interface BastionPart extends NodePart<BastionHealthFragment> {
  readonly backends: BastionBackends;
  health: () => BastionHealthFragment;
}

export function startBastionPart(ctx: BastionPartContext, plan: BastionPlan, app: App): BastionPart {
  const key = ctx.keys.bastion;
  // NodeKeys.load reads the bastion key whenever --bastion is given (key_required otherwise).
  if (key === undefined) throw new TypeError('startBastionPart: NodeKeys has no bastion key');
  const backends = startBastionBackends({
    key,
    addresses: plan.addresses,
    ca: plan.ca,
    app,
    registry: ctx.metrics,
    dataDir: ctx.dataDir,
    log: ctx.logger,
    timing: plan.timing,
  });
  return {
    name: 'bastion',
    backends,
    health: () => ({ bastions: backends.status() }),
    [Symbol.asyncDispose]: () => backends.close(),
  };
}
