/**
 * The log-witness part (SPEC §4.1, `--log-witnesses`): the witnessed own log. The witnesses file
 * (reloaded on the node's SIGHUP and on rename-into-place, like the registry; a bad file keeps the
 * previous copy) and the rounds that send the newest checkpoint to the peer witnesses.
 *
 *   const part = await startLogWitnessPart(ctx, { file, intervalMs, alertLagMs });
 *   part.witnessing.checkpoint();   // what GET /log/checkpoint serves
 *   part.health();                  // /health `log_witnesses`, `warnings`
 *   part.status();                  // the status page's peer rows
 */
import type { Registry } from 'prom-client';
import { Counter } from 'prom-client';
import { Reloadable } from '../config/reloadable.ts';
import type { TransparencyLog } from '../log/log.ts';
import type { NodePart, PartReload } from '../server/part.ts';
import type { LogWitnessStorage } from '../store/types.ts';
import { loadLogWitnesses } from './config.ts';
import { LogWitnessing, type LogWitnessHealth, type LogWitnessLogger, type LogWitnessRow } from './witnessing.ts';

export type { ForkedCheckpoint, LogWitnessing } from './witnessing.ts';

/** What the log-witness part borrows of the node's context. */
export interface LogWitnessPartContext {
  log: TransparencyLog;
  store: { logWitness: LogWitnessStorage };
  metrics: Registry;
  logger: LogWitnessLogger & { error(obj: object, msg: string): void };
}

export interface LogWitnessPartOptions {
  file: string;
  intervalMs?: number | undefined;
  alertLagMs?: number | undefined;
}

/** `/health` fragment. */
export interface LogWitnessHealthFragment {
  log_witnesses: LogWitnessHealth[];
  warnings: string[];
}

/** Status page fragment: the size published with a quorum, each peer witness and its lag. */
export interface LogWitnessStatus {
  published: number;
  witnesses: readonly LogWitnessRow[];
}

export interface LogWitnessPart extends NodePart<LogWitnessHealthFragment, LogWitnessStatus> {
  readonly witnessing: LogWitnessing;
  health: () => LogWitnessHealthFragment;
  status: () => LogWitnessStatus;
}

/** Load the file (throws LogWitnessConfigError: start-up refuses it), open the state, start the rounds. */
export async function startLogWitnessPart(ctx: LogWitnessPartContext, o: LogWitnessPartOptions): Promise<LogWitnessPart> {
  const reloads = new Counter({
    name: 'log_witnesses_reloads_total',
    help: 'Reloads of --log-witnesses by result',
    labelNames: ['result'],
    registers: [ctx.metrics],
  });
  const source = new Reloadable(o.file, loadLogWitnesses, {
    loaded: (why) => {
      reloads.inc({ result: 'ok' });
      ctx.logger.info({ source: why }, 'log witnesses reloaded');
    },
    failed: (reason) => {
      reloads.inc({ result: 'failed' });
      ctx.logger.error({ reason }, 'log witnesses reload failed; keeping the previous copy');
    },
  });
  const witnessing = await LogWitnessing.open({
    log: ctx.log,
    store: ctx.store.logWitness,
    witnesses: () => source.current(),
    intervalMs: o.intervalMs,
    alertLagMs: o.alertLagMs,
    metrics: ctx.metrics,
    logger: ctx.logger,
  });
  source.start(1000, false); // the node's SIGHUP comes through reload()
  witnessing.start();
  const set = source.current();
  ctx.logger.info(
    { witnesses: set.witnesses.map((w) => w.url), quorum: set.quorum },
    'log witnesses: own checkpoints go to peer witnesses',
  );
  return {
    name: 'log-witness',
    witnessing,
    health: () => witnessing.health(),
    status: () => ({ published: witnessing.published ?? 0, witnesses: witnessing.witnessRows() }),
    reload: (): PartReload => ({
      part: 'log-witness',
      error: source.reload('SIGHUP') ? null : `--log-witnesses ${o.file} was not reloaded`,
    }),
    [Symbol.asyncDispose]: async () => {
      source.stop();
      await witnessing.stop();
    },
  };
}
