/** Witness replicas as child processes (`anchor-witness serve --store postgres://…`), for tests and benchmarks. */
import { spawnServe, type ServeChild } from './spawn-serve.ts';

export type Replica = ServeChild;

/** Start `anchor-witness serve` with `args` (plus --listen 127.0.0.1:0); resolves when it listens. */
export function startReplica(args: string[], opts: { stderr?: 'inherit' | 'ignore' } = {}): Promise<Replica> {
  return spawnServe(['serve', '--listen', '127.0.0.1:0', ...args], {
    stderr: opts.stderr ?? (process.env.AW_REPLICA_STDERR === '1' ? 'inherit' : 'ignore'),
  });
}
