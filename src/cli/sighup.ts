/**
 * The process's one SIGHUP handler (docs/ARCHITECTURE.md, "One node, many parts"): the node's parts
 * listen for no signal; the CLI forwards SIGHUP to `node.reload()`, whose parts re-read their files
 * and sources and log the outcome themselves.
 */
import type { FastifyBaseLogger } from 'fastify';

export interface Reloadable {
  reload(): Promise<readonly { part: string; error: string | null }[]>;
}

export function reloadOnSighup(nodes: readonly Reloadable[], log: FastifyBaseLogger): void {
  process.on('SIGHUP', () => {
    for (const node of nodes)
      node.reload().catch((e: unknown) => {
        log.error({ err: e }, 'SIGHUP: reload failed');
      });
  });
}
