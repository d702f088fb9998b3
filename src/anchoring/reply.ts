/**
 * The anchor role's replies on the wire, in one place (SPEC §3.3, §3.4): the 200 body (the stored
 * anchor, its cosignature and an inclusion proof), the 409 duplicity body, the latest-anchor and
 * duplicity-listing bodies, and the problems for a refusal or an abandoned request.
 */
import type { FastifyReply } from 'fastify';
import { anchorJson, encodeAnchor, encodeDuplicityProof } from '../anchor/codec.ts';
import type { AnchorWire, DuplicityProof, DuplicityProofWire } from '../anchor/types.ts';
import { encodeHex } from '../encoding/hex.ts';
import { jsonNumber } from '../encoding/json.ts';
import { formatTimestamp } from '../encoding/time.ts';
import type { InclusionBody } from '../log/log.ts';
import type { HttpProblem } from '../server/errors.ts';
import type { SeedRecord } from '../store/types.ts';
import { anchorProblem, type AnchorAbandonedError } from './errors.ts';
import type { NextCosignature, SubmitOutcome, WitnessIdentity } from './service.ts';

export interface CosignatureBody {
  witness_name: string;
  witness_public_key: string;
  signature: string;
  timestamp: string;
}

/** The 200 body of POST /v1/anchor. */
export interface AnchorResponse {
  anchor: AnchorWire;
  cosignature: CosignatureBody;
  /** During a witness-key rotation overlap (SPEC §1.2): the next key's, same shape, same message. */
  cosignature_next?: CosignatureBody;
  inclusion: InclusionBody;
  replay: boolean;
}

/** The 200 body of GET /v1/anchor/{seed}. */
export interface LatestAnchorBody extends Omit<AnchorResponse, 'replay'> {
  duplicity: boolean;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * What the replies of one batch share, kept from the previous reply: the witness's part of the
 * cosignature, and the JSON of the log origin, of the checkpoint note and of the cosignature time
 * (the same for every reply of a batch, whose requests mostly share a second). Each text is reused
 * only while its source is the same value, so it is always that value's.
 */
class BatchShared {
  private witness: WitnessIdentity | undefined;
  private name = '';
  private key = '';
  private head = '';
  private origin: string | undefined;
  private originJson = '';
  private note: string | undefined;
  private noteJson = '';
  private time: number | undefined;
  private timeJson = '';

  /** `{"witness_name":…,"witness_public_key":…,"signature":` of `witness`. */
  cosignatureHead(w: WitnessIdentity): string {
    if (w !== this.witness || w.name !== this.name || w.publicKeyHex !== this.key) {
      this.head = `{"witness_name":${JSON.stringify(w.name)},"witness_public_key":${JSON.stringify(w.publicKeyHex)},"signature":`;
      this.witness = w;
      this.name = w.name;
      this.key = w.publicKeyHex;
    }
    return this.head;
  }

  originText(origin: string): string {
    if (origin !== this.origin) {
      this.originJson = JSON.stringify(origin);
      this.origin = origin;
    }
    return this.originJson;
  }

  noteText(note: string): string {
    if (note !== this.note) {
      this.noteJson = JSON.stringify(note);
      this.note = note;
    }
    return this.noteJson;
  }

  cosignatureTime(seconds: number): string {
    if (seconds !== this.time) {
      this.timeJson = JSON.stringify(formatTimestamp(seconds));
      this.time = seconds;
    }
    return this.timeJson;
  }
}

const shared = new BatchShared();

/**
 * The JSON text of the 200 body of POST /v1/anchor, written directly: byte for byte
 * `stringifyJson(cosignedBody(…))`, the server serializer's text (test/anchoring/reply-json.test.ts compares them), without
 * building the body's objects, and with what a batch's replies share (BatchShared) serialized once.
 */
export function cosignedBodyJson(
  witness: WitnessIdentity,
  record: SeedRecord,
  inclusion: InclusionBody,
  replay: boolean,
  next?: NextCosignature,
): string {
  const c = record.cosignature;
  const time = shared.cosignatureTime(c.timestamp);
  const cosig = `${shared.cosignatureHead(witness)}"${encodeHex(c.signature)}","timestamp":${time}}`;
  const cosigNext =
    next === undefined
      ? ''
      : `,"cosignature_next":{"witness_name":${JSON.stringify(witness.name)},"witness_public_key":${JSON.stringify(next.publicKeyHex)},"signature":"${encodeHex(next.signature)}","timestamp":${time}}`;
  const i = inclusion;
  return (
    `{"anchor":${anchorJson(record.latest)},"cosignature":${cosig}${cosigNext},` +
    `"inclusion":{"log_origin":${shared.originText(i.log_origin)},"leaf_index":${jsonNumber(i.leaf_index)},"tree_size":${jsonNumber(i.tree_size)},` +
    `"hashes":${JSON.stringify(i.hashes)},"checkpoint":${shared.noteText(i.checkpoint)},"tlog_proof":${JSON.stringify(i.tlog_proof)}},` +
    `"replay":${replay ? 'true' : 'false'}}`
  );
}

function cosignature(witness: WitnessIdentity, record: SeedRecord): CosignatureBody {
  return {
    witness_name: witness.name,
    witness_public_key: witness.publicKeyHex,
    signature: encodeHex(record.cosignature.signature),
    timestamp: formatTimestamp(record.cosignature.timestamp),
  };
}

function cosignatureNext(
  witness: WitnessIdentity,
  record: SeedRecord,
  next: NextCosignature | undefined,
): { cosignature_next?: CosignatureBody } {
  if (next === undefined) return {};
  return {
    cosignature_next: {
      witness_name: witness.name,
      witness_public_key: next.publicKeyHex,
      signature: encodeHex(next.signature),
      timestamp: formatTimestamp(record.cosignature.timestamp),
    },
  };
}

/** The stored anchor, its cosignature and `inclusion`; `replay` when nothing new was logged. */
export function cosignedBody(
  witness: WitnessIdentity,
  record: SeedRecord,
  inclusion: InclusionBody,
  replay: boolean,
  next?: NextCosignature,
): AnchorResponse {
  return {
    anchor: encodeAnchor(record.latest),
    cosignature: cosignature(witness, record),
    ...cosignatureNext(witness, record, next),
    inclusion,
    replay,
  };
}

export function latestBody(
  witness: WitnessIdentity,
  record: SeedRecord,
  inclusion: InclusionBody,
  next?: NextCosignature,
): LatestAnchorBody {
  return {
    anchor: encodeAnchor(record.latest),
    cosignature: cosignature(witness, record),
    ...cosignatureNext(witness, record, next),
    inclusion,
    duplicity: record.duplicity !== undefined,
  };
}

export function duplicityBody(proof: DuplicityProof): DuplicityProofWire {
  return encodeDuplicityProof(proof);
}

/** A page of the duplicity listing: `next` is the last seed of a full page. */
export function duplicityPage(proofs: readonly DuplicityProof[], limit: number): { items: DuplicityProofWire[]; next: string | null } {
  const items = proofs.map(encodeDuplicityProof);
  return { items, next: items.length === limit ? items[items.length - 1]!.seed_id : null };
}

/** Send a submission's outcome: 200 co-signed, 409 duplicity; a refusal is thrown as its problem. */
export function sendOutcome(reply: FastifyReply, witness: WitnessIdentity, outcome: SubmitOutcome): FastifyReply {
  switch (outcome.kind) {
    case 'cosigned':
      // Sent as bytes, encoded once: the route's serializer is not called, and fastify takes the
      // Content-Length from the buffer instead of measuring the text (Buffer.byteLength, which
      // first flattens the concatenated string) before the socket encodes it again.
      return reply
        .code(200)
        .type(JSON_TYPE)
        .send(Buffer.from(cosignedBodyJson(witness, outcome.record, outcome.inclusion, outcome.replay, outcome.next)));
    case 'duplicity':
      return reply.code(409).type(JSON_TYPE).send(duplicityBody(outcome.proof));
    case 'rejected': {
      const r = outcome.rejection;
      throw anchorProblem(r.status, r.code, r.detail, r.retryAfter === undefined ? {} : { 'retry-after': String(r.retryAfter) });
    }
  }
}

/** Only reached after a 408 was sent or the client left: nobody reads this answer. */
export function abandonedProblem(e: AnchorAbandonedError): HttpProblem {
  return anchorProblem(408, 'request_timeout', e.message, { connection: 'close' });
}

/** Send a JSON body with status 200. */
export function sendJson(reply: FastifyReply, body: unknown): FastifyReply {
  return reply.type(JSON_TYPE).send(body);
}
