/**
 * Following a witness-key rotation (protocol §1.2): at each poll, before the witness's claimed key
 * is compared with the pinned one, the monitor reads `GET /v1/key-rotation` and applies, oldest
 * first, the entries about the key it pins:
 *
 *   announce  old = pinned, sig_old verifies under it and sig_new under `new`  → `new` pinned as next
 *   abort     old = pinned, new = the pinned next, sig_old verifies            → the next key dropped
 *   complete  old = pinned, new = the pinned next, sig_new verifies            → `new` pinned alone
 *
 * Each step is reported once (`witness_key_rotated`, info). An entry about the pinned key whose
 * signatures do not verify, or a completion to a key never announced, is `witness_key_rotation_invalid`
 * (alert) and changes nothing. During the overlap the current key stays the pin (the node's
 * checkpoints carry both keys' lines, its anchors both cosignatures); the next key is what a
 * completion may move the pin to. A node without the route (404) has nothing to follow.
 */
import { ProtocolError } from '../../errors.ts';
import { isJsonObject } from '../../encoding/json.ts';
import { parseRotationEntry, verifyRotationEntry } from '../../verify/key-rotation.ts';
import { httpRequest, joinUrl, parseJsonBody, type HttpOptions } from '../http.ts';
import { errorText, short, type AddFinding, type ServedRotationEntry } from './findings.ts';
import type { WitnessRecord } from './state.ts';

/** Read the witness's rotation entries; undefined when it has none to serve (404) or cannot be read. */
async function readEntries(url: string, http: HttpOptions): Promise<unknown[] | undefined> {
  try {
    const res = await httpRequest(joinUrl(url, '/v1/key-rotation'), {}, http);
    if (res.status !== 200) return undefined;
    const doc = parseJsonBody(res.text);
    return isJsonObject(doc) && Array.isArray(doc.items) ? doc.items : undefined;
  } catch {
    return undefined; // unreachable witnesses are reported by the checkpoint read
  }
}

/** Apply the verifying entries about `record`'s pinned key (mutates `record`; persist the state). */
export async function followRotation(url: string, name: string, record: WitnessRecord, http: HttpOptions, add: AddFinding): Promise<void> {
  const items = await readEntries(url, http);
  if (items === undefined) return;
  for (const item of items) {
    let entry: ServedRotationEntry | undefined;
    try {
      entry = parseRotationEntry(item);
    } catch {
      entry = undefined;
    }
    // Only entries about the key this monitor pins, for the log it pins, can move the pin.
    if (entry === undefined || entry.old !== record.public_key || entry.origin !== record.log_origin) continue;
    const logIndex = isJsonObject(item) && typeof item.log_index === 'number' ? item.log_index : undefined;
    if (logIndex !== undefined) entry = { ...entry, log_index: logIndex };
    if (entry.stage === 'announce' && record.next_key === entry.new) continue; // followed already
    if (entry.stage !== 'announce' && entry.new !== record.next_key) {
      if (entry.stage === 'complete')
        invalid(add, name, url, entry, `completes a rotation to ${short(entry.new)}…, which it never announced`);
      continue; // an abort of a key this monitor never pinned changes nothing
    }
    try {
      await verifyRotationEntry(entry);
    } catch (e) {
      invalid(add, name, url, entry, e instanceof ProtocolError ? e.message : errorText(e));
      continue;
    }
    const was = record.public_key;
    if (entry.stage === 'announce') record.next_key = entry.new;
    else delete record.next_key;
    if (entry.stage === 'complete') {
      record.public_key = entry.new;
      record.rotated_from = [...(record.rotated_from ?? []), was];
    }
    const what =
      entry.stage === 'announce'
        ? `announced the next key ${entry.new}, signed by the pinned ${was} and by the new key: both are accepted during the overlap`
        : entry.stage === 'abort'
          ? `abandoned the announced next key ${entry.new} (signed by the pinned ${was})`
          : `completed its rotation: ${entry.new} is now the only pinned key (${was} retired)`;
    add({
      id: `witness_key_rotated ${name} ${entry.stage} ${entry.old} ${entry.new}`,
      kind: 'witness_key_rotated',
      severity: 'info',
      witness: name,
      url,
      message: `${name} ${what}`,
      evidence: { entry },
    });
  }
}

function invalid(add: AddFinding, name: string, url: string, entry: ServedRotationEntry, why: string): void {
  add({
    id: `witness_key_rotation_invalid ${name} ${entry.stage} ${entry.old} ${entry.new} ${entry.sig_old ?? ''}${entry.sig_new ?? ''}`,
    kind: 'witness_key_rotation_invalid',
    severity: 'alert',
    witness: name,
    url,
    message: `${name}: a key-rotation ${entry.stage} entry naming the pinned key ${short(entry.old)}… does not verify: ${why} (not followed)`,
    evidence: { entry },
  });
}
