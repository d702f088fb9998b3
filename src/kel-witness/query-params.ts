/** The role's route parameters (SPEC §3.6.5): qb64 prefixes and decimal sequence numbers. Pure. */
import { decodeQb64, IDENTIFIER_CODES } from '../keri/qb64.ts';

const PREFIX = /^[A-Za-z0-9_-]{44}([A-Za-z0-9_-]{4})?$/;

export function validPrefix(p: unknown): p is string {
  return typeof p === 'string' && PREFIX.test(p) && decodeQb64(p, IDENTIFIER_CODES) !== null;
}

/** `sn` in the query string: decimal (keripy's httping writes it so). */
export function parseSn(v: unknown): number | null {
  if (typeof v !== 'string' || !/^(?:0|[1-9][0-9]{0,14})$/.test(v)) return null;
  return Number(v);
}
