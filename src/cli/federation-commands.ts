/**
 * The federation commands of `token-bridge` (SPEC §8, §9): aws-setup, lint-policy, check-token and
 * credentials, registered by `addFederationCommands` (usage: docs/federation-aws.md, `--help`).
 * Every flag also reads TB_<FLAG> (src/cli/options.ts); results go to stdout, diagnostics to stderr.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { Option } from 'commander';
import type { Command } from 'commander';
import { ed25519PrivateKeyFromPem } from '../crypto/ed25519.ts';
import { decodeHex, encodeHex } from '../encoding/hex.ts';
import { parseStrictJson } from '../encoding/json.ts';
import { readKeyFile } from '../keys/keyfile.ts';
import { readInputFile } from '../config/input-file.ts';
import { AWS_STS_AUDIENCE, checkAudience, checkRoleArn, checkSessionName, providerPath, sessionNameFor } from '../federation/aws.ts';
import { checkToken, formatTokenCheck } from '../federation/check-token.ts';
import { FederationError } from '../federation/errors.ts';
import { formatFinding, lintExitCode, lintPolicyText } from '../federation/lint.ts';
import { SETUP_FORMATS, planSetup, renderSetup } from '../federation/setup.ts';
import type { SetupFormat } from '../federation/setup.ts';
import { chainThumbprint, parseCertificateChain } from '../federation/thumbprint.ts';
import { probePresentedChain } from '../federation/tls-probe.ts';
import { collectList, unitArg } from './options.ts';
import { finalizedAnchorMember } from './token-bridge-gate.ts';

export interface FederationIo {
  out: (text: string) => void;
  err: (text: string) => void;
  /** Set the process exit status (lint-policy and check-token: 0, 1 or 2). */
  setExitCode: (code: number) => void;
  readStdin: () => Promise<string>;
}

async function readAllStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const defaultIo: FederationIo = {
  out: (t) => {
    process.stdout.write(t);
  },
  err: (t) => {
    process.stderr.write(t);
  },
  setExitCode: (code) => {
    process.exitCode = code;
  },
  readStdin: readAllStdin,
};

/** One audience (a TB_AUDIENCE meant for `serve` may hold a comma list). */
function oneAudience(aud: string): string {
  if (aud.includes(','))
    throw new FederationError(
      'invalid_option',
      `--audience takes one audience here, got ${JSON.stringify(aud)} (TB_AUDIENCE holds the list for serve?)`,
    );
  return checkAudience(aud);
}

function parseHostPort(text: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):([1-9][0-9]{0,4})$/.exec(text);
  if (m === null || Number(m[3]) > 65535)
    throw new FederationError('invalid_option', `--connect-to must be HOST:PORT, got ${JSON.stringify(text)}`);
  return { host: m[1] ?? m[2]!, port: Number(m[3]) };
}

interface SetupFlags {
  issuer: string;
  subject: string[];
  audience: string;
  accountId?: string;
  roleName?: string;
  partition: string;
  tlsCert?: string;
  connect?: boolean;
  connectTo?: string;
  extraThumbprint?: string[];
  allowWildcardSubject?: boolean;
  format: SetupFormat;
}

function addAwsSetup(program: Command, io: FederationIo): void {
  const cmd = program
    .command('aws-setup')
    .description(
      'print the IAM OIDC provider and a role trust policy (exact aud and sub) for this bridge, as JSON, AWS CLI commands, Terraform or CloudFormation',
    )
    .requiredOption('--issuer <url>', "the bridge's issuer URL (https://host[/path]), exactly as in the tokens' iss")
    .requiredOption(
      '--subject <did>',
      'a root DID the role trusts, exactly (did:keri:… or did:key:…; repeatable, comma-separated)',
      collectList,
    )
    .option('--audience <aud>', 'the client ID the provider lists and P:aud pins', AWS_STS_AUDIENCE)
    .option(
      '--account-id <n>',
      "the 12-digit AWS account (json needs it; cli defaults to the caller's account; terraform/cloudformation reference the provider)",
    )
    .option('--role-name <name>', 'the role to create', 'token-bridge')
    .option('--partition <p>', 'the ARN partition (aws, aws-cn, aws-us-gov, …)', 'aws')
    .option(
      '--tls-cert <file>',
      'the certificate chain (PEM, leaf first) the bridge host serves; the thumbprint is of its LAST certificate',
    )
    .option('--connect', 'read the chain from a live TLS handshake with the issuer host (SNI = the host, port 443)')
    .option('--connect-to <host:port>', 'with --connect: dial this address instead (SNI stays the issuer host)')
    .option(
      '--extra-thumbprint <hex>',
      'an additional thumbprint, e.g. of the next CA certificate (repeatable; at most 5 in all)',
      collectList,
    )
    .option(
      '--allow-wildcard-subject',
      'allow * or ? in --subject (StringLike): trusts every identity the pattern matches; lint-policy still reports it',
    )
    .addOption(new Option('--format <format>', 'output format').choices(SETUP_FORMATS).default('json'));
  cmd.action(async (flags: SetupFlags) => {
    providerPath(flags.issuer); // the issuer is checked before any connection is made
    const host = new URL(flags.issuer).hostname;
    const fromCli = (k: string): boolean => cmd.getOptionValueSource(k) === 'cli';
    let tlsCert = flags.tlsCert;
    if (tlsCert !== undefined && flags.connect === true) {
      if (fromCli('tlsCert')) throw new FederationError('invalid_option', '--tls-cert and --connect exclude each other');
      tlsCert = undefined; // TB_TLS_CERT (set for serve) yields to an explicit --connect
    }
    if (flags.connectTo !== undefined && flags.connect !== true)
      throw new FederationError('invalid_option', '--connect-to needs --connect');
    const computed: string[] = [];
    const now = Date.now();
    if (tlsCert !== undefined) {
      const t = chainThumbprint(parseCertificateChain(readFileSync(tlsCert, 'utf8'), tlsCert), now);
      computed.push(t.thumbprint);
      io.err(`token-bridge: thumbprint ${t.thumbprint}: certificate ${t.certificates} of ${t.certificates} in ${tlsCert} (${t.subject})\n`);
      for (const w of t.warnings) io.err(`token-bridge: warning: ${w}\n`);
    } else if (flags.connect === true) {
      const to = flags.connectTo === undefined ? { host, port: 443 } : parseHostPort(flags.connectTo);
      const probe = await probePresentedChain({ servername: host, host: to.host, port: to.port });
      const t = chainThumbprint(probe.chain, now);
      computed.push(t.thumbprint);
      io.err(
        `token-bridge: thumbprint ${t.thumbprint}: certificate ${t.certificates} of ${t.certificates} presented by ${to.host}:${to.port} for ${host} (${t.subject})\n`,
      );
      for (const w of t.warnings) io.err(`token-bridge: warning: ${w}\n`);
      io.err(
        probe.verified
          ? `token-bridge: the chain verifies for ${host} against Node's CA store: if AWS trusts the same CA, IAM ignores the thumbprint\n`
          : `token-bridge: warning: the chain does not verify for ${host} against Node's CA store (${probe.verifyError ?? 'unknown'}): the thumbprint is what IAM will trust, so compare it with the certificate you deployed (e.g. aws-setup --tls-cert)\n`,
      );
    }
    const plan = planSetup({
      issuer: flags.issuer,
      subjects: flags.subject,
      audience: oneAudience(flags.audience),
      partition: flags.partition,
      thumbprints: computed,
      ...(flags.accountId === undefined ? {} : { accountId: flags.accountId }),
      ...(flags.roleName === undefined ? {} : { roleName: flags.roleName }),
      ...(flags.extraThumbprint === undefined ? {} : { extraThumbprints: flags.extraThumbprint }),
      ...(flags.allowWildcardSubject === true ? { allowWildcardSubject: true } : {}),
    });
    for (const w of plan.warnings) io.err(`token-bridge: warning: ${w}\n`);
    io.out(renderSetup(plan, flags.format));
  });
}

function addLintPolicy(program: Command, io: FederationIo): void {
  program
    .command('lint-policy')
    .description(
      'check a role trust policy against the five trust rules (exit 0 clean or warnings only, 1 errors, 2 unparsable); reads a policy, `aws iam get-role` output or `aws-setup --format json` output',
    )
    .argument('<file>', 'the policy file, or - for stdin')
    .option('--issuer <url>', "the bridge's issuer: the policy must trust this provider")
    .option('--json', 'machine-readable output')
    .action(async (file: string, flags: { issuer?: string; json?: boolean }) => {
      const name = file === '-' ? '<stdin>' : file;
      let result;
      try {
        if (flags.issuer !== undefined) providerPath(flags.issuer);
        const text = file === '-' ? await io.readStdin() : readFileSync(file, 'utf8');
        result = lintPolicyText(text, flags.issuer === undefined ? {} : { issuer: flags.issuer });
      } catch (e) {
        // exit 2: not a policy, no file to read, or an unusable --issuer (neither clean nor a rule violation)
        const unreadable = !(e instanceof FederationError) && typeof (e as NodeJS.ErrnoException).code === 'string';
        if (!(e instanceof FederationError) && !unreadable) throw e;
        if (flags.json === true) io.out(JSON.stringify({ file: name, ok: false, unparsable: (e as Error).message }) + '\n');
        else io.err(`${name}: cannot lint: ${(e as Error).message}\n`);
        io.setExitCode(2);
        return;
      }
      const code = lintExitCode(result);
      if (flags.json === true) {
        io.out(
          JSON.stringify(
            { file: name, ok: code === 0, errors: result.errors, warnings: result.warnings, findings: result.findings },
            null,
            2,
          ) + '\n',
        );
      } else {
        for (const f of result.findings) io.out(`${name}: ${formatFinding(f)}\n`);
        io.out(`${name}: ${result.errors === 0 ? 'ok' : 'FAILED'}: ${result.errors} error(s), ${result.warnings} warning(s)\n`);
      }
      io.setExitCode(code);
    });
}

function addCheckToken(program: Command, io: FederationIo): void {
  program
    .command('check-token')
    .description(
      'decode a bridge token and check it against the rules (no azp, aud, sub, iss, lifetime): what to run when STS answers InvalidIdentityToken (exit 0 ok, 1 errors, 2 not a JWT)',
    )
    .argument('<jwt>', 'the token, or - to read it from stdin (a JWT, or the /token JSON response)')
    .option('--issuer <url>', 'the expected issuer (byte for byte)')
    .option('--audience <aud>', `the expected audience (repeatable: any of them; default ${AWS_STS_AUDIENCE})`, collectList)
    .option('--json', 'machine-readable output')
    .action(async (jwt: string, flags: { issuer?: string; audience?: string[]; json?: boolean }) => {
      const now = Math.floor(Date.now() / 1000);
      let text: string;
      let r;
      try {
        text = jwt === '-' ? await io.readStdin() : jwt;
        r = checkToken(text, {
          now,
          audience: flags.audience ?? [AWS_STS_AUDIENCE],
          ...(flags.issuer === undefined ? {} : { issuer: flags.issuer }),
        });
      } catch (e) {
        if (!(e instanceof FederationError && e.code === 'token_unparsable')) throw e;
        if (flags.json === true) io.out(JSON.stringify({ ok: false, unparsable: e.message }) + '\n');
        else io.err(`not a JWT: ${e.message}\n`);
        io.setExitCode(2);
        return;
      }
      if (flags.json === true) {
        io.out(
          JSON.stringify(
            { ok: r.errors === 0, errors: r.errors, warnings: r.warnings, header: r.header, claims: r.claims, findings: r.findings },
            null,
            2,
          ) + '\n',
        );
      } else {
        io.out(formatTokenCheck(r, now));
      }
      io.setExitCode(r.errors === 0 ? 0 : 1);
    });
}

interface CredentialsFlags {
  finalizedAnchor?: string;
  chainState?: string;
  bridge: string;
  chain: string;
  rootKey: string;
  deviceKey: string;
  roleArn: string;
  sessionName?: string;
  format: 'env' | 'github';
  audience: string;
  issuer?: string;
  ttl?: number;
  capability?: string[];
  region?: string;
  stsEndpoint?: string;
  durationSeconds?: number;
  githubEnv?: string;
}

function readChain(file: string): unknown[] {
  const doc = readInputFile(
    '--chain',
    file,
    () => parseStrictJson(readFileSync(file, 'utf8'), { maxDepth: 32 }),
    (m) => new FederationError('invalid_option', m),
  );
  const chain = Array.isArray(doc) ? doc : (doc as { attestation_chain?: unknown }).attestation_chain;
  if (!Array.isArray(chain))
    throw new FederationError(
      'invalid_option',
      `--chain ${file}: expected a JSON array of attestations (or an object with "attestation_chain")`,
    );
  return chain as unknown[];
}

function addCredentials(program: Command, io: FederationIo): void {
  program
    .command('credentials')
    .description(
      'for CI: get a token (proof of possession by the device key), exchange it with STS AssumeRoleWithWebIdentity, print AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN',
    )
    .requiredOption('--bridge <url>', 'where the bridge is reachable (POST <url>/token)')
    .requiredOption('--chain <file>', 'the attestation chain: a JSON array root → leaf')
    .requiredOption('--root-key <hex>', 'the Ed25519 root public key (hex)')
    .requiredOption('--device-key <file>', 'the leaf device key (Ed25519 PKCS#8 PEM, mode 0600)')
    .requiredOption('--role-arn <arn>', 'the role to assume')
    .option('--session-name <name>', 'RoleSessionName ([\\w+=,.@-]{2,64}; default tb-<subject without did:>, cut to 64)')
    .addOption(
      new Option('--format <format>', 'env: shell exports for eval; github: ::add-mask:: lines and $GITHUB_ENV entries')
        .choices(['env', 'github'])
        .default('env'),
    )
    .option('--audience <aud>', 'token audience (the provider client ID)', AWS_STS_AUDIENCE)
    .option('--issuer <url>', "the bridge's issuer (default: read from its discovery document)")
    .option('--ttl <s>', 'token lifetime (seconds, or 5m, 1h)', unitArg('s', 1))
    .option('--capability <cap>', 'request only these capabilities (repeatable, comma-separated)', collectList)
    .option('--region <region>', 'STS region (default: AWS_REGION, AWS_DEFAULT_REGION, else us-east-1)')
    .option('--sts-endpoint <url>', 'STS endpoint URL (default: the regional endpoint; AWS_ENDPOINT_URL_STS is honoured too)')
    .option(
      '--duration-seconds <s>',
      "session duration (900 up to the role's MaxSessionDuration; STS default 3600; seconds, or 15m, 1h)",
      unitArg('s', 900, 43200),
    )
    .option('--github-env <file>', 'with --format github: the file to append to (default: $GITHUB_ENV)')
    .option(
      '--finalized-anchor <file>',
      'for a bridge with --require-finalized-anchor: the finalized bundle of the chain state (with --chain-state)',
    )
    .option('--chain-state <file>', 'the `token-bridge chain-state build` output holding this chain (with --finalized-anchor)')
    .action(async (flags: CredentialsFlags) => {
      // Loaded here so that the other commands (and serve) do not load the AWS SDK.
      const { assumeRoleWithWebIdentity, precheckToken, renderEnv, renderGithub, requestBridgeToken } =
        await import('../federation/credentials.ts');
      const roleArn = checkRoleArn(flags.roleArn);
      const audience = oneAudience(flags.audience);
      if (flags.sessionName !== undefined) checkSessionName(flags.sessionName);
      const githubEnv = flags.githubEnv ?? process.env.GITHUB_ENV;
      if (flags.format === 'github' && (githubEnv === undefined || githubEnv === '')) {
        throw new FederationError('github_env_missing', '--format github needs $GITHUB_ENV (set by GitHub Actions) or --github-env FILE');
      }
      const chain = readChain(flags.chain);
      const finalizedAnchor = finalizedAnchorMember(flags, chain);
      const token = await requestBridgeToken({
        bridge: flags.bridge,
        chain,
        ...(finalizedAnchor === undefined ? {} : { finalizedAnchor }),
        rootPublicKey: encodeHex(decodeHex(flags.rootKey, 32)),
        deviceKey: readInputFile('--device-key', flags.deviceKey, () => ed25519PrivateKeyFromPem(readKeyFile(flags.deviceKey))),
        audience,
        ...(flags.issuer === undefined ? {} : { issuer: flags.issuer }),
        ...(flags.ttl === undefined ? {} : { ttlSecs: flags.ttl }),
        ...(flags.capability === undefined ? {} : { capabilities: flags.capability }),
      });
      for (const f of precheckToken(token, audience, Math.floor(Date.now() / 1000)))
        io.err(`token-bridge: warning: token [${f.id}]: ${f.message}\n`);
      const region = flags.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1';
      let creds;
      try {
        creds = await assumeRoleWithWebIdentity({
          roleArn,
          sessionName: flags.sessionName ?? sessionNameFor(token.subject),
          token: token.token,
          region,
          ...(flags.stsEndpoint === undefined ? {} : { endpoint: flags.stsEndpoint }),
          ...(flags.durationSeconds === undefined ? {} : { durationSeconds: flags.durationSeconds }),
        });
      } catch (e) {
        if (!(e instanceof FederationError && e.code === 'sts_failed')) throw e;
        // The token itself is a credential and is not printed; its claims are what to compare.
        const c = checkToken(token.token, { now: Math.floor(Date.now() / 1000) }).claims;
        const claims = ['iss', 'sub', 'aud', 'exp'].map((k) => `${k}=${JSON.stringify(c[k])}`).join(' ');
        throw new FederationError('sts_failed', `${e.message}\n  token claims: ${claims}`);
      }
      if (flags.format === 'github') {
        const g = renderGithub(creds);
        io.out(g.stdout);
        appendFileSync(githubEnv!, g.githubEnv, { mode: 0o600 });
      } else {
        io.out(renderEnv(creds));
      }
      io.err(
        `token-bridge: assumed ${creds.assumedRoleArn ?? roleArn} as ${token.subject}${creds.expiration === null ? '' : ` until ${creds.expiration.toISOString()}`}\n`,
      );
    });
}

/** Register aws-setup, lint-policy, check-token and credentials on the `token-bridge` program. */
export function addFederationCommands(program: Command, io: Partial<FederationIo> = {}): void {
  const full: FederationIo = { ...defaultIo, ...io };
  addAwsSetup(program, full);
  addLintPolicy(program, full);
  addCheckToken(program, full);
  addCredentials(program, full);
}
