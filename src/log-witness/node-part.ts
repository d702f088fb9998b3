/**
 * The witnessed own log, assembled for the node (src/witness/node.ts): the witnesses file
 * (reloaded on SIGHUP and rename-into-place, like the registry; a bad file keeps the previous
 * copy) and the rounds.
 */
import type { Registry } from 'prom-client';
import { Counter } from 'prom-client';
import { Reloadable } from '../config/reloadable.ts';
import type { TransparencyLog } from '../log/log.ts';
import type { LogWitnessStorage } from '../store/types.ts';
import { loadLogWitnesses } from './config.ts';
import { LogWitnessing, type LogWitnessLogger } from './witnessing.ts';

export interface LogWitnessPartOptions {
  file: string;
  intervalMs?: number | undefined;
  alertLagMs?: number | undefined;
  log: TransparencyLog;
  store: LogWitnessStorage;
  metrics: Registry;
  logger: LogWitnessLogger & { error(obj: object, msg: string): void };
}

/** Load the file (throws LogWitnessConfigError: start-up refuses it), open the state, start the rounds. */
export async function startLogWitnessing(o: LogWitnessPartOptions): Promise<{ witnessing: LogWitnessing; stop: () => Promise<void> }> {
  const reloads = new Counter({
    name: 'log_witnesses_reloads_total',
    help: 'Reloads of --log-witnesses by result',
    labelNames: ['result'],
    registers: [o.metrics],
  });
  const source = new Reloadable(o.file, loadLogWitnesses, {
    loaded: (why) => {
      reloads.inc({ result: 'ok' });
      o.logger.info({ source: why }, 'log witnesses reloaded');
    },
    failed: (reason) => {
      reloads.inc({ result: 'failed' });
      o.logger.error({ reason }, 'log witnesses reload failed; keeping the previous copy');
    },
  });
  const witnessing = await LogWitnessing.open({
    log: o.log,
    store: o.store,
    witnesses: () => source.current(),
    intervalMs: o.intervalMs,
    alertLagMs: o.alertLagMs,
    metrics: o.metrics,
    logger: o.logger,
  });
  source.start();
  witnessing.start();
  const set = source.current();
  o.logger.info({ witnesses: set.witnesses.map((w) => w.url), quorum: set.quorum }, 'log witnesses: own checkpoints go to peer witnesses');
  return {
    witnessing,
    stop: async () => {
      source.stop();
      await witnessing.stop();
    },
  };
}
