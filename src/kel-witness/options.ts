/** The flags of the KERI witness role (SPEC §3.6): its key, who it witnesses, and its limits (§3.6.7). */
import { checkTable, int, list, text, time, value, type OptionValues } from '../config/option-table.ts';
import { parseRateLimit } from '../server/rate-limit.ts';
import { DEFAULT_ESCROW_LIMITS } from './escrow.ts';
import { DEFAULT_KEL_QUOTA_LIMITS } from './quota.ts';
import type { KelWitnessLimits } from './service.ts';

const Q = DEFAULT_KEL_QUOTA_LIMITS;

export const KEL_WITNESS_OPTIONS = checkTable({
  kelKey: text(
    '--kel-key <file>',
    'KERI witness key (Ed25519 PKCS#8 PEM, mode 0600; a key of its own), required with role kel (docs/protocol.md §3.6.1)',
    'kelWitness',
  ),
  kelAllow: list(
    '--kel-allow <who>',
    'who role kel witnesses: PREFIX, delegates-of:PREFIX or any (repeatable; required with role kel unless --dev)',
    'kelWitness',
  ),
  kelUrl: list(
    '--kel-url <url>',
    'where controllers reach this KERI witness, served in its OOBI as /loc/scheme replies (repeatable, 1-4; https://, or http:// on loopback or with --dev; none given: the stored set stays)',
    'kelWitness',
  ),
  kelRateLimit: value(
    '--kel-rate-limit <rps[:burst]>',
    'per-client-IP (IPv6: per /64) rate limit on POST /receipts and POST /; 0 = off',
    'kelWitness',
    parseRateLimit,
    { default: Q.rateLimit, defaultHelp: '20:100' },
  ),
  kelPrefixEventsPerMinute: int('--kel-prefix-events-per-minute <n>', 'most witnessed events per prefix per minute', 'kelWitness', [1], {
    default: Q.prefixEventsPerMinute,
  }),
  kelNewPrefixesPerDay: int(
    '--kel-new-prefixes-per-day <n>',
    'most new held prefixes per client IP per day (refilled continuously); 0 = off',
    'kelWitness',
    [0],
    { default: Q.newPrefixesPerDay },
  ),
  kelIpBytesPerDay: int(
    '--kel-ip-bytes-per-day <bytes>',
    'most ledger bytes (events and attachments) per client IP per day (refilled continuously); 0 = off',
    'kelWitness',
    [0],
    { default: Q.ipBytesPerDay },
  ),
  kelMaxPrefixes: int('--kel-max-prefixes <n>', 'most prefixes the ledger holds (then 503 kel_capacity_exhausted)', 'kelWitness', [1], {
    default: Q.maxPrefixes,
  }),
  kelLedgerMaxBytes: int(
    '--kel-ledger-max-bytes <bytes>',
    "most bytes of the ledger's events and attachments (then 503 kel_capacity_exhausted)",
    'kelWitness',
    [1],
    { default: Q.ledgerMaxBytes },
  ),
  kelEscrowMaxEvents: int('--kel-escrow-max-events <n>', 'most escrowed events in total (then 503 kel_escrow_full)', 'kelWitness', [1], {
    default: DEFAULT_ESCROW_LIMITS.totalEvents,
  }),
  kelEscrowTtl: time('--kel-escrow-ttl <duration>', 'how long an escrowed event waits (keripy TimeoutOOE)', 'kelWitness', 's', [1], {
    default: DEFAULT_ESCROW_LIMITS.ttlMs / 1000,
  }),
});

/** The role's settings of the node's configuration (`--kel-max-events`/`--kel-max-bytes` are §3.5's flags, also per held prefix). */
export function kelWitnessConfig(v: OptionValues<typeof KEL_WITNESS_OPTIONS> & { kelMaxEvents?: number; kelMaxBytes?: number }): {
  kelKeyFile?: string;
  kelAllow?: string[];
  kelUrls?: string[];
  kelLimits: Partial<KelWitnessLimits>;
} {
  return {
    ...(v.kelKey === undefined ? {} : { kelKeyFile: v.kelKey }),
    ...(v.kelAllow === undefined ? {} : { kelAllow: v.kelAllow }),
    ...(v.kelUrl === undefined ? {} : { kelUrls: v.kelUrl }),
    kelLimits: {
      rateLimit: v.kelRateLimit,
      prefixEventsPerMinute: v.kelPrefixEventsPerMinute,
      newPrefixesPerDay: v.kelNewPrefixesPerDay,
      ipBytesPerDay: v.kelIpBytesPerDay,
      maxPrefixes: v.kelMaxPrefixes,
      ledgerMaxBytes: v.kelLedgerMaxBytes,
      ...(v.kelMaxEvents === undefined ? {} : { maxEvents: v.kelMaxEvents }),
      ...(v.kelMaxBytes === undefined ? {} : { maxBytes: v.kelMaxBytes }),
      escrow: { ...DEFAULT_ESCROW_LIMITS, totalEvents: v.kelEscrowMaxEvents, ttlMs: v.kelEscrowTtl * 1000 },
    },
  };
}
