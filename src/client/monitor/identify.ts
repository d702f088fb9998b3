/**
 * Identifying a witness at the start of a poll: its /health names a key and log origin, pinned
 * by the witness set when there is one, else trusted on first use and recorded in the state (a
 * later change of key is reported, never trusted).
 */
import { encodeHex } from '../../encoding/hex.ts';
import type { Checkpoint } from '../../note/checkpoint.ts';
import type { HttpOptions } from '../http.ts';
import { fetchHealth } from '../submit.ts';
import type { NoteVerifier } from '../../note/vkey.ts';
import type { PinnedWitness } from '../verify-anchor.ts';
import type { WitnessSet } from '../witness-set.ts';
import { errorText, type AddFinding } from './findings.ts';
import type { PartyKeys } from './parties.ts';
import type { MonitorState } from './state.ts';

/** A witness this poll reached and pinned. */
export interface Identified {
  url: string;
  name: string;
  pin: PinnedWitness & { name: string };
  /** The party keys (registry), by keyFingerprint → party id. */
  parties: PartyKeys;
  /** Signed checkpoints (verified under the pin) seen in this poll. */
  seen: string[];
  /** Its GET /log/checkpoint of this poll, verified under the pin. */
  published?: { note: string; checkpoint: Checkpoint };
}

export async function identify(
  url: string,
  witnessSet: WitnessSet | undefined,
  state: MonitorState,
  http: HttpOptions,
  add: AddFinding,
  parties: PartyKeys,
  logKeys: readonly NoteVerifier[] = [],
): Promise<Identified | undefined> {
  let health;
  try {
    health = await fetchHealth(url, http);
  } catch (e) {
    add({ id: `unreachable ${url}`, kind: 'unreachable', severity: 'warning', url, message: `${url} is unreachable: ${errorText(e)}` });
    return undefined;
  }
  const keyHex = encodeHex(health.publicKey);
  let pin: PinnedWitness & { name: string };
  if (witnessSet !== undefined) {
    const member = witnessSet.members.find((m) => encodeHex(m.publicKey) === keyHex);
    if (member === undefined) {
      add({
        id: `unknown ${url} ${keyHex}`,
        kind: 'unknown_witness',
        severity: 'alert',
        url,
        message: `${url} claims to be ${health.name} with key ${keyHex}, which is not in the witness set`,
      });
      return undefined;
    }
    pin = { name: member.name, publicKey: member.publicKey, logOrigin: member.logOrigin };
  } else {
    const known = state.witnesses[health.name];
    if (known !== undefined && (known.public_key !== keyHex || known.log_origin !== health.logOrigin)) {
      add({
        id: `key ${health.name} ${keyHex}`,
        kind: 'key_changed',
        severity: 'alert',
        witness: health.name,
        message: `${health.name} at ${url} now claims key ${keyHex} / origin ${health.logOrigin}; first seen with ${known.public_key} / ${known.log_origin} (not trusted)`,
      });
      return undefined;
    }
    const pinned = logKeys.find((k) => k.name === health.logOrigin);
    if (pinned !== undefined && encodeHex(pinned.publicKey) !== keyHex) {
      add({
        id: `key ${health.name} ${keyHex} log-vkey`,
        kind: 'key_changed',
        severity: 'alert',
        witness: health.name,
        url,
        message: `${health.name} at ${url} claims key ${keyHex} for log ${health.logOrigin}, which --log-vkey pins to ${encodeHex(pinned.publicKey)} (not trusted)`,
      });
      return undefined;
    }
    pin = { name: health.name, publicKey: health.publicKey, logOrigin: health.logOrigin };
  }
  const pinHex = encodeHex(pin.publicKey);
  const record = state.witnesses[pin.name];
  if (record === undefined || record.public_key !== pinHex || record.log_origin !== pin.logOrigin) {
    if (record !== undefined) {
      add({
        id: `key ${pin.name} ${pinHex}`,
        kind: 'key_changed',
        severity: 'warning',
        witness: pin.name,
        message: `${pin.name}: the witness set pins another key or origin than the recorded one; its record starts afresh`,
      });
    }
    state.witnesses[pin.name] = { public_key: pinHex, log_origin: pin.logOrigin, anchors: {}, behind: {} };
  }
  return { url, name: pin.name, pin, parties, seen: [] };
}
