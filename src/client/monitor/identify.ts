/**
 * Identifying a witness at the start of a poll: its /health names a key and log origin, pinned
 * by the witness set when there is one, else trusted on first use — bound to the configured URL,
 * never to the claimed name — and recorded in the state (a later change of key at that URL is
 * reported, never trusted).
 */
import { encodeHex } from '../../encoding/hex.ts';
import type { Checkpoint } from '../../note/checkpoint.ts';
import type { HttpOptions } from '../http.ts';
import { fetchHealth } from '../submit.ts';
import type { NoteVerifier } from '../../note/vkey.ts';
import type { PinnedWitnessBytes as PinnedWitness } from '../../verify/receipt.ts';
import type { WitnessSet } from '../../verify/witness-set.ts';
import { errorText, type AddFinding } from './findings.ts';
import type { PartyKeys } from './parties.ts';
import { followRotation } from './rotation.ts';
import { hex32, type MonitorState, type WitnessRecord } from './state.ts';

/** A witness this poll reached and pinned. */
export interface Identified {
  url: string;
  name: string;
  pin: PinnedWitness & { name: string };
  /** The party keys (registry), by keyFingerprint → party id. */
  parties: PartyKeys;
  /** The witness's announced next key (protocol §1.2), followed from verified entries: accepted beside the pin during the overlap. */
  next?: Uint8Array;
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
    const member = await memberOf(url, keyHex, witnessSet, state, http, add);
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
    pin = { name: member.name, publicKey: health.publicKey, logOrigin: member.logOrigin };
  } else {
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
    // A rotation this URL's record can follow is applied before its key is compared (protocol §1.2).
    const held = Object.entries(state.witnesses).find(([, r]) => r.url === url) ?? legacyRecord(state, health.name);
    if (held !== undefined) await followRotation(url, held[0], held[1], http, add);
    const name = firstUse(url, health.name, keyHex, health.logOrigin, state, add);
    if (name === undefined) return undefined;
    pin = { name, publicKey: health.publicKey, logOrigin: health.logOrigin };
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
  if (witnessSet === undefined) state.witnesses[pin.name]!.url = url;
  const next = hex32(state.witnesses[pin.name]!.next_key);
  return { url, name: pin.name, pin, ...(next === undefined ? {} : { next }), parties, seen: [] };
}

/** A record from before trust was bound to URLs, under the claimed name. */
function legacyRecord(state: MonitorState, claimed: string): [string, WitnessRecord] | undefined {
  const r = state.witnesses[claimed];
  return r !== undefined && r.url === undefined ? [claimed, r] : undefined;
}

/**
 * The witness-set member a claimed key belongs to: the member's own key, or the key the member's
 * record followed to by verified rotation entries (protocol §1.2; the record is brought up to date
 * first). A key the record rotated away from is refused (`key_changed`): the witness retired it.
 */
async function memberOf(
  url: string,
  keyHex: string,
  witnessSet: WitnessSet,
  state: MonitorState,
  http: HttpOptions,
  add: AddFinding,
): Promise<WitnessSet['members'][number] | undefined> {
  const direct = witnessSet.members.find((m) => encodeHex(m.publicKey) === keyHex);
  const lineage = (m: WitnessSet['members'][number], r: WitnessRecord): boolean =>
    r.public_key === encodeHex(m.publicKey) || (r.rotated_from ?? []).includes(encodeHex(m.publicKey));
  // The member whose record is about this key (pinned, announced as next, or rotated to).
  const member =
    direct ??
    witnessSet.members.find((m) => {
      const r = state.witnesses[m.name];
      return r !== undefined && lineage(m, r) && (r.public_key === keyHex || r.next_key === keyHex);
    });
  if (member === undefined) return undefined;
  const record = state.witnesses[member.name];
  if (record === undefined || !lineage(member, record)) return direct;
  await followRotation(url, member.name, record, http, add);
  if (record.public_key === keyHex) return member;
  if ((record.rotated_from ?? []).includes(keyHex)) {
    add({
      id: `key ${member.name} ${keyHex} retired`,
      kind: 'key_changed',
      severity: 'alert',
      witness: member.name,
      url,
      message: `${member.name} at ${url} claims ${keyHex}, a key it retired by a completed rotation (not trusted)`,
    });
    return undefined;
  }
  // Announced but not completed: the pin stays the record's key.
  return direct;
}

/**
 * Trust on first use, keyed by the configured URL (SPEC §6.2 *(rev 4)*), never by the name the
 * witness claims: the record bound to `url` must hold the claimed key and origin (else
 * `key_changed`, not trusted); a URL seen for the first time gets a record of its own — under the
 * claimed name when no other URL holds it, else `<name> <url>` — so a witness claiming another's
 * name changes nothing about how the other is watched. A record from before this rule (no `url`)
 * is adopted by the first URL whose claim matches it; a different claim to its name is
 * `key_changed` (as that record promised) until a URL adopts it. Returns the record's name.
 */
function firstUse(url: string, claimed: string, keyHex: string, origin: string, state: MonitorState, add: AddFinding): string | undefined {
  const bound = Object.entries(state.witnesses).find(([, r]) => r.url === url);
  if (bound !== undefined) {
    const [name, rec] = bound;
    if (rec.public_key === keyHex && rec.log_origin === origin) return name;
    add({
      id: `key ${url} ${keyHex}`,
      kind: 'key_changed',
      severity: 'alert',
      witness: name,
      url,
      message: `${url} (${name}) now claims key ${keyHex} / origin ${origin}; first seen there with ${rec.public_key} / ${rec.log_origin} (not trusted)`,
    });
    return undefined;
  }
  const held = state.witnesses[claimed];
  if (held === undefined) return claimed;
  if (held.url === undefined) {
    if (held.public_key === keyHex && held.log_origin === origin) return claimed; // adopted by this URL
    add({
      id: `key ${claimed} ${keyHex}`,
      kind: 'key_changed',
      severity: 'alert',
      witness: claimed,
      url,
      message: `${claimed} at ${url} now claims key ${keyHex} / origin ${origin}; first seen with ${held.public_key} / ${held.log_origin} (not trusted; recorded before trust was bound to URLs)`,
    });
    return undefined;
  }
  // Another URL holds the name: this one is watched under a name of its own.
  return `${claimed} <${url}>`;
}
