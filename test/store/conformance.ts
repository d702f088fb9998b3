/**
 * The store conformance suite, one part per interface of src/store/types.ts, run unchanged against
 * every driver (test/store/sqlite.test.ts, test/store/postgres.test.ts):
 *   LogStorage (with the log above it)  conformance/log.ts
 *   AnchorStateStorage                  conformance/anchor-state.ts
 *   CosignStateStorage                  conformance/cosign-state.ts
 *   LogWitnessStorage                   conformance/log-witness.ts
 *   KelLedgerStorage                    conformance/kel-ledger.ts
 *   witness key history (SPEC §1.2)     conformance/key-history.ts
 *   WitnessStore (identity, transactions spanning concerns, reopen, close)  conformance/store.ts
 */
import { describe } from 'node:test';
import { anchorStateConformance } from './conformance/anchor-state.ts';
import { cosignStateConformance } from './conformance/cosign-state.ts';
import type { StoreFactory } from './conformance/helpers.ts';
import { logStorageConformance } from './conformance/log.ts';
import { logWitnessConformance } from './conformance/log-witness.ts';
import { kelLedgerConformance } from './conformance/kel-ledger.ts';
import { keyHistoryConformance } from './conformance/key-history.ts';
import { storeLifecycleConformance } from './conformance/store.ts';

export type { StoreFactory } from './conformance/helpers.ts';

/** Register the suite (call inside a describe). `factory()` is read when each test runs. */
export function storeConformance(factory: () => StoreFactory, capabilities: { multiWriter: boolean }): void {
  void describe('LogStorage', () => {
    logStorageConformance(factory);
  });
  void describe('AnchorStateStorage', () => {
    anchorStateConformance(factory);
  });
  void describe('CosignStateStorage', () => {
    cosignStateConformance(factory);
  });
  void describe('LogWitnessStorage', () => {
    logWitnessConformance(factory);
  });
  void describe('KelLedgerStorage', () => {
    kelLedgerConformance(factory);
  });
  void describe('witness key history', () => {
    keyHistoryConformance(factory);
  });
  void describe('WitnessStore', () => {
    storeLifecycleConformance(factory, capabilities);
  });
}
