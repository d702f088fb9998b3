/**
 * The witness node's configuration (what `serve` and `npm start` give startWitness) and the checks
 * between its settings that run before anything starts: the names, `--no-listen`, the build
 * attestation (SPEC §6: bound to the running bundle first).
 */
import type { QuotaDefaults } from '../anchor/quota-window.ts';
import type { BastionTiming } from '../bastion/connection.ts';
import { validateName } from '../note/checkpoint.ts';
import type { KelSourceConfig } from '../registry/kel-start.ts';
import type { SignerSettings } from '../keys/external.ts';
import type { KelWitnessLimits } from '../kel-witness/service.ts';
import { loadBuildAttestation, type BuildInfo } from '../release/attestation.ts';
import type { HttpLimits } from '../server/limits.ts';
import { ConfigError } from './errors.ts';

export const ROLES = ['anchor', 'cosign', 'kel'] as const;
export type Role = (typeof ROLES)[number];

export interface WitnessConfig extends HttpLimits {
  host: string;
  port: number;
  dataDir: string;
  /** `--key`: a key file, or an `ssh-agent:`/`pkcs11:` reference (SPEC §1.1). */
  keyFile?: string;
  /** `--next-key` (SPEC §1.2): the next witness key, a file or an `ssh-agent:`/`pkcs11:` reference. */
  nextKeyFile?: string | undefined;
  /** `--abandon-next`: replace a recorded next key (an abort entry, then an announcement). */
  abandonNext?: boolean;
  /** `--key-overlap-min` in seconds (default 24 h): the shortest overlap before a completion. */
  keyOverlapMinSeconds?: number;
  /** The rotation's clock, unix seconds (tests). */
  rotationNow?: () => number;
  /** How often `/ready` re-reads the store's witness key set (ms, default 5 000; tests shorten it). */
  keySetWatchMs?: number;
  /** `--signer-timeout`, `--signer-max-pending`, `--signer-start-timeout`, `--pkcs11-sessions` (SPEC §1.1). */
  signers?: SignerSettings;
  name: string;
  roles: Role[];
  /** One or more cosign keys (one cosignature line each). */
  cosignKeyFiles?: string[];
  registryFile?: string;
  logsFile?: string;
  /** logs/v0 lists, files or https URLs: add new origins only (SPEC §5.5). */
  logsLists?: string[];
  /** `--logs-list-interval`, seconds. */
  logsListIntervalSeconds?: number;
  /** `--logs-list-max-qpd`, `-max-new`, `-max-origins`. */
  logsListLimits?: { maxQpd: number; maxNew: number; maxOrigins: number };
  logOrigin?: string;
  store?: string;
  allowUnderivedSeeds: boolean;
  dev: boolean;
  quota: QuotaDefaults;
  rateLimit?: { rps: number; burst: number } | null;
  /** POST /sign-subtree with an ML-DSA-44 cosign key (default true; `--no-sign-subtree`: false). */
  signSubtree?: boolean;
  /** `--sign-subtree-rate`: its own per-client bucket (default 2:10; null = off). */
  signSubtreeRate?: { rps: number; burst: number } | null;
  /** Worker threads for Ed25519 verification (default: cores − 1; 0 = on the event loop). */
  verifyThreads?: number;
  /** DSSE build attestation served at /build (SPEC §6); refused unless it names the running bundle. */
  buildAttestation?: string;
  /** Parties' keys from key event logs (SPEC §3.5; needs registryFile). */
  kel?: KelSourceConfig;
  /** `--kel-key`, `--kel-allow` and the KERI witness role's limits (SPEC §3.6, role kel). */
  kelKeyFile?: string;
  kelAllow?: string[];
  /** `--kel-url` (SPEC §3.6.1): the URLs the OOBI advertises (undefined: the stored set stays). */
  kelUrls?: string[];
  kelLimits?: Partial<KelWitnessLimits>;
  /** The KERI witness role's clock (tests). */
  kelNow?: () => number;
  /** `--bastion HOST:PORT`…: serve the cosign routes through these bastions (SPEC §5.6). */
  bastions?: string[];
  /** `--bastion-key`: the backend identity (Ed25519), required with `bastions`. */
  bastionKeyFile?: string;
  /** `--bastion-ca`: PEM roots for the bastions' certificates, instead of the default ones. */
  bastionCaFile?: string;
  /** `--no-listen`: serve only through the bastions (role cosign alone). */
  noListen?: boolean;
  /** Bastion ping and reconnect timing (tests). */
  bastionTiming?: Partial<BastionTiming>;
  /** `--log-witnesses FILE` (SPEC §4.1): peer witnesses cosign this node's own checkpoints. */
  logWitnessesFile?: string;
  /** `--log-witness-interval` in ms (default 1 000). */
  logWitnessIntervalMs?: number;
  /** `--log-witness-alert-lag` in ms (default 10 min). */
  logWitnessAlertLagMs?: number;
  /**
   * TEST-ONLY: expose `RunningWitness.testHooks` (fault injection). Set only by tests through this
   * programmatic API; no flag, variable or config-file setting reaches it.
   */
  testOnlyFaultHooks?: boolean;
}

export function parseRoles(text: string[]): Role[] {
  const roles = new Set<Role>();
  for (const r of text) {
    if (!(ROLES as readonly string[]).includes(r))
      throw new ConfigError('invalid_role', `unknown role ${JSON.stringify(r)} (valid: ${ROLES.join(', ')})`);
    roles.add(r as Role);
  }
  if (roles.size === 0) throw new ConfigError('invalid_role', '--roles must name at least one role');
  return [...roles];
}

/** The settings checked together before the node starts; the own log's origin and the build statement. */
export function checkWitnessConfig(config: WitnessConfig): { logOrigin: string; build: BuildInfo | undefined } {
  validateName(config.name);
  const logOrigin = config.logOrigin ?? `${config.name}/anchors`;
  validateName(logOrigin);
  const bastions = config.bastions ?? [];
  if (config.noListen === true && (bastions.length === 0 || config.roles.length !== 1 || config.roles[0] !== 'cosign'))
    throw new ConfigError(
      'invalid_no_listen',
      '--no-listen needs at least one --bastion and --roles cosign alone (the anchor role, /metrics and the own log need a listener)',
    );
  // SPEC §6: bind the build attestation to the running bundle before anything else starts.
  const build = config.buildAttestation === undefined ? undefined : loadBuildAttestation(config.buildAttestation);
  return { logOrigin, build };
}
