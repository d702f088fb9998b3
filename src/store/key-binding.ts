/**
 * The witness-key half of `bindIdentity`, shared by both drivers (SPEC §1, §1.2): the first start
 * records its key as the history's `current`; later starts must name a key the history recorded
 * (current, next or retired: which of them may start, and how, is the rotation rule of
 * src/keys/rotation.ts, applied next); any other key → store_identity_mismatch.
 */
import { StoreOpenError } from './errors.ts';
import type { KeyHistoryTx } from './types.ts';

export async function bindWitnessKey(keys: KeyHistoryTx, key: string, bindMeta: () => unknown): Promise<void> {
  const history = await keys.history();
  if (history.length === 0) {
    await bindMeta();
    await keys.setKey({ key, state: 'current', since: Math.floor(Date.now() / 1000) });
    return;
  }
  if (history.some((r) => r.key === key)) return;
  const current = history.find((r) => r.state === 'current')?.key ?? '?';
  throw new StoreOpenError(
    'store_identity_mismatch',
    `the store is bound to witness_key ${JSON.stringify(current)}, not ${JSON.stringify(key)}`,
  );
}
