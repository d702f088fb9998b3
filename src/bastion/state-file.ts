/**
 * The bastion connection state in --data-dir (SPEC §5.6), for `anchor-witness healthcheck
 * --data-dir DIR` on a node that does not listen (--no-listen): the node rewrites the file
 * whenever a connection goes up or down and every 10 s (a heartbeat), atomically (temporary file,
 * then rename). A file older than 30 s means the node is gone or stuck.
 *
 *   {"v":"anchor-witness/bastion-state/v1","pid":123,"updated_at":"2026-11-25T21:00:00Z",
 *    "key_hash":"<hex>","bastions":[{"addr":"bastion.example:443","connected":true}]}
 *
 * Healthy: fresh, and at least one bastion connected (one bastion down is not a reason to restart
 * the node; every one down is).
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatTimestamp, parseTimestamp } from '../encoding/time.ts';

export const BASTION_STATE_FILE = 'bastion-state.json';
export const BASTION_STATE_V = 'anchor-witness/bastion-state/v1';
export const BASTION_STATE_HEARTBEAT_MS = 10_000;
export const BASTION_STATE_MAX_AGE_MS = 30_000;

export interface BastionStatus {
  readonly addr: string;
  readonly connected: boolean;
}

export interface BastionStateDoc {
  readonly v: typeof BASTION_STATE_V;
  readonly pid: number;
  readonly updated_at: string;
  readonly key_hash: string;
  readonly bastions: readonly BastionStatus[];
}

export function bastionStatePath(dataDir: string): string {
  return join(dataDir, BASTION_STATE_FILE);
}

/** Replace the state file (write a temporary file beside it, then rename over it). */
export function writeBastionState(dataDir: string, keyHash: string, bastions: readonly BastionStatus[], nowMs: number): void {
  const doc: BastionStateDoc = {
    v: BASTION_STATE_V,
    pid: process.pid,
    updated_at: formatTimestamp(Math.floor(nowMs / 1000)),
    key_hash: keyHash,
    bastions: bastions.map((b) => ({ addr: b.addr, connected: b.connected })),
  };
  const path = bastionStatePath(dataDir);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(doc)}\n`, { mode: 0o644 });
  renameSync(tmp, path);
}

export interface BastionHealth {
  readonly healthy: boolean;
  /** `healthy …` or `unhealthy …: why` */
  readonly line: string;
}

/** Judge the state file of `dataDir` at `nowMs`. */
export function bastionHealth(dataDir: string, nowMs: number, maxAgeMs = BASTION_STATE_MAX_AGE_MS): BastionHealth {
  const path = bastionStatePath(dataDir);
  let doc: Partial<BastionStateDoc>;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8')) as Partial<BastionStateDoc>;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return {
      healthy: false,
      line: `unhealthy ${path}: ${code === 'ENOENT' ? 'no bastion state (is the node running with --bastion?)' : 'unreadable'}`,
    };
  }
  let updated: number;
  try {
    if (doc.v !== BASTION_STATE_V || !Array.isArray(doc.bastions) || typeof doc.updated_at !== 'string') throw new Error('shape');
    updated = parseTimestamp(doc.updated_at) * 1000;
  } catch {
    return { healthy: false, line: `unhealthy ${path}: not a ${BASTION_STATE_V} document` };
  }
  const ageS = Math.max(0, Math.round((nowMs - updated) / 1000));
  if (nowMs - updated > maxAgeMs) return { healthy: false, line: `unhealthy ${path}: last updated ${ageS} s ago (node stopped or stuck)` };
  const list = doc.bastions as readonly Partial<BastionStatus>[];
  const up = list.filter((b) => b.connected === true).map((b) => String(b.addr));
  const down = list.filter((b) => b.connected !== true).map((b) => String(b.addr));
  const detail = `connected: ${up.length === 0 ? 'none' : up.join(', ')}${down.length === 0 ? '' : `; down: ${down.join(', ')}`}`;
  if (up.length === 0) return { healthy: false, line: `unhealthy ${path}: no bastion connected (${detail})` };
  return { healthy: true, line: `healthy ${path} (${detail}, updated ${ageS} s ago)` };
}
