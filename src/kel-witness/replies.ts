/**
 * keripy `rpy` messages a witness serves in its OOBI (SPEC §3.6.5): `/loc/scheme` (where this
 * witness listens) and `/end/role/add` (its controller role), with members in keripy's order and
 * the SAID computed as for events (d as 44 `#`, `v` for the size). Pure.
 */
import { coupleGroup, pipelined } from '../keri/cesr-attachments.ts';
import { versionString } from '../keri/event.ts';
import { SAID_PLACEHOLDER, blake3Qb64 } from '../keri/said.ts';

const utf8 = new TextEncoder();

/** An `rpy` with route `r` and body `a` (members in insertion order), stamped `dt`. */
export function reply(r: string, a: Readonly<Record<string, unknown>>, dt: string): string {
  const draft = { v: versionString(0), t: 'rpy', d: SAID_PLACEHOLDER, dt, r, a };
  draft.v = versionString(utf8.encode(JSON.stringify(draft)).length);
  draft.d = blake3Qb64(utf8.encode(JSON.stringify(draft)));
  return JSON.stringify(draft);
}

export function locSchemeReply(eid: string, scheme: string, url: string, dt: string): string {
  return reply('/loc/scheme', { eid, scheme, url }, dt);
}

export function endRoleAddReply(cid: string, role: string, eid: string, dt: string): string {
  return reply('/end/role/add', { cid, role, eid }, dt);
}

/** keripy `endorse`: the reply followed by `-VAi-CAB` + the witness's prefix + `0B` + its signature. */
export function endorse(message: string, prefix: string, sign: (bytes: Uint8Array) => Uint8Array): string {
  return message + pipelined(coupleGroup([{ prefix, signature: sign(utf8.encode(message)) }]));
}
