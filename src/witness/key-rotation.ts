/**
 * The node's side of witness-key rotation (SPEC §1.2): at start, the rotation table applied in one
 * log transaction (history + entries + a checkpoint signed by the new key set), and
 * `GET /v1/key-rotation`, the logged entries with their log indexes, oldest first.
 * The rules and the entries are src/keys/rotation.ts; their format src/verify/key-rotation.ts.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Hex32 } from '../anchor/schema.ts';
import { encodeHex } from '../encoding/hex.ts';
import { parseStrictJson } from '../encoding/json.ts';
import type { NodeKeys } from '../keys/node-keys.ts';
import { applyRotation, planRotation, type RotationEntry, type RotationPlan } from '../keys/rotation.ts';
import type { TransparencyLog } from '../log/log.ts';
import type { WitnessStore } from '../store/types.ts';

export interface RotationStartOptions {
  name: string;
  origin: string;
  abandonNext: boolean;
  overlapMinSeconds: number;
  /** Unix seconds. */
  now: number;
}

/**
 * Apply the start-up table (refusals throw before anything is written). Returns what was done and
 * the entries logged (none when the plan is `none`).
 */
export async function startKeyRotation(
  log: TransparencyLog<WitnessStore>,
  keys: NodeKeys,
  o: RotationStartOptions,
): Promise<{ plan: RotationPlan; entries: RotationEntry[] }> {
  const keyHex = encodeHex(keys.witness.publicKey);
  const nextHex = keys.next === undefined ? undefined : encodeHex(keys.next.publicKey);
  const start = { key: keyHex, nextKey: nextHex, abandonNext: o.abandonNext, now: o.now, overlapMinSeconds: o.overlapMinSeconds };
  const plan = planRotation(await log.store.keyHistory(), start);
  if (plan.kind === 'none') return { plan, entries: [] };
  const { value } = await log.transaction((tx, batch) =>
    applyRotation(
      tx,
      (entry) => batch.append(entry),
      { key: keys.witness.privateKey, keyHex, next: keys.next?.privateKey, nextHex },
      start,
      { name: o.name, origin: o.origin },
    ),
  );
  return value;
}

const Hex64 = Type.String({ pattern: '^[0-9a-f]{128}$' });

export const KeyRotationItems = Type.Object({
  items: Type.Array(
    Type.Object({
      v: Type.Literal('anchor-witness/key-rotation/v1'),
      stage: Type.Union([Type.Literal('announce'), Type.Literal('abort'), Type.Literal('complete')]),
      name: Type.String(),
      origin: Type.String(),
      old: Hex32,
      new: Hex32,
      time: Type.String({ description: 'YYYY-MM-DDTHH:MM:SSZ' }),
      sig_old: Type.Optional(Hex64),
      sig_new: Type.Optional(Hex64),
      log_index: Type.Integer({ minimum: 0, description: "the entry's index in the witness's own log" }),
    }),
  ),
});

export function registerKeyRotationRoutes(app: FastifyInstance, store: Pick<WitnessStore, 'keyRotations'>): void {
  app.get(
    '/v1/key-rotation',
    {
      schema: {
        summary: 'The witness-key rotation entries of the own log (announce, abort, complete), oldest first, with their log indexes',
        response: { 200: KeyRotationItems },
      },
    },
    async (_req, reply) => {
      const items = (await store.keyRotations()).map((r) => ({ ...(parseStrictJson(r.entry) as object), log_index: r.logIndex }));
      return reply.type('application/json; charset=utf-8').header('access-control-allow-origin', '*').send({ items });
    },
  );
}
