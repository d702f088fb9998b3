// `token-bridge aws-setup` (SPEC §8): golden output for each format, the generated trust policy
// passes lint-policy (the JSON output, the policy the CLI script hands to `aws iam create-role`, and
// the CloudFormation template's policy), and bad inputs are refused with their codes.
// Regenerate the golden files with UPDATE_GOLDEN=1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { planSetup, renderSetup, SETUP_FORMATS, trustPolicy } from '../../src/federation/setup.ts';
import type { SetupFormat, SetupInput } from '../../src/federation/setup.ts';
import { lintPolicy } from '../../src/federation/lint.ts';
import { FederationError } from '../../src/federation/errors.ts';
import { THUMBPRINT_WARNING } from '../../src/federation/thumbprint.ts';
import { tempDir } from '../helpers/tmp.ts';
import { runCli } from './_helpers.ts';

const GOLDEN = join(import.meta.dirname, 'golden');
const ISSUER = 'https://bridge.example.com/tenant-a';
const KERI = 'did:keri:EBfdlu8R27Fbx-ehrqwImnK-8Cm79sqbAQ4MmvEAYqao';
const DIDKEY = 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK';
const TP1 = '9e99a48a9960b14926bb7f3b02e22da2b0ab7280';
const TP2 = 'A0:53:37:5B:FE:84:E8:B7:48:78:2C:7C:EE:15:82:7A:6A:F5:A4:05';

const ARGS = [
  'aws-setup',
  '--issuer',
  ISSUER,
  '--subject',
  `${KERI},${DIDKEY}`,
  '--account-id',
  '123456789012',
  '--role-name',
  'ci-deploy',
  '--extra-thumbprint',
  TP1,
  '--extra-thumbprint',
  TP2,
];
const FILES: Record<SetupFormat, string> = {
  json: 'aws-setup.json',
  cli: 'aws-setup.cli.sh',
  terraform: 'aws-setup.tf',
  cloudformation: 'aws-setup.cfn.yaml',
};

let tmp: { dir: string; cleanup: () => void };
before(() => {
  tmp = tempDir('tb-setup-');
});
after(() => {
  tmp.cleanup();
});

for (const format of SETUP_FORMATS) {
  void test(`golden: --format ${format}`, async () => {
    const r = await runCli([...ARGS, '--format', format]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stderr.includes(THUMBPRINT_WARNING), 'the IAM-ignores-thumbprints warning is printed');
    const file = join(GOLDEN, FILES[format]);
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(file, r.stdout);
    assert.equal(r.stdout, readFileSync(file, 'utf8'));
  });
}

void test('the JSON output passes lint-policy (with and without --issuer) and has the SPEC §8 shape', async () => {
  const r = await runCli([...ARGS, '--format', 'json']);
  const doc = JSON.parse(r.stdout) as {
    ProviderArn: string;
    OpenIDConnectProvider: { Url: string; ClientIDList: string[]; ThumbprintList: string[] };
    Role: {
      AssumeRolePolicyDocument: {
        Version: string;
        Statement: { Principal: { Federated: string }; Condition: { StringEquals: Record<string, unknown> } }[];
      };
    };
  };
  assert.equal(doc.ProviderArn, 'arn:aws:iam::123456789012:oidc-provider/bridge.example.com/tenant-a');
  assert.deepEqual(doc.OpenIDConnectProvider, {
    Url: ISSUER,
    ClientIDList: ['sts.amazonaws.com'],
    ThumbprintList: [TP1, 'a053375bfe84e8b748782c7cee15827a6af5a405'],
  });
  const policy = doc.Role.AssumeRolePolicyDocument;
  assert.equal(policy.Version, '2012-10-17');
  assert.equal(policy.Statement.length, 1);
  assert.equal(policy.Statement[0]!.Principal.Federated, doc.ProviderArn);
  assert.deepEqual(policy.Statement[0]!.Condition.StringEquals, {
    'bridge.example.com/tenant-a:aud': 'sts.amazonaws.com',
    'bridge.example.com/tenant-a:sub': [KERI, DIDKEY],
  });
  for (const opts of [{}, { issuer: ISSUER }]) {
    const lint = lintPolicy(doc, opts);
    assert.deepEqual(lint.findings, []);
  }
  const viaCli = join(tmp.dir, 'setup.json');
  writeFileSync(viaCli, r.stdout);
  const l = await runCli(['lint-policy', viaCli, '--issuer', ISSUER]);
  assert.equal(l.code, 0, l.stdout);
});

void test('the CLI script runs (against a stub `aws`) and the policy it hands to create-role passes lint-policy', async () => {
  const bin = join(tmp.dir, 'bin');
  mkdirSync(bin);
  const log = join(tmp.dir, 'aws.log');
  const captured = join(tmp.dir, 'captured-policy.json');
  writeFileSync(
    join(bin, 'aws'),
    [
      '#!/bin/sh',
      `echo "aws $*" >> ${log}`,
      'if [ "$1 $2" = "sts get-caller-identity" ]; then echo 210987654321; fi',
      `for a in "$@"; do case "$a" in file://*) cat "\${a#file://}" > ${captured};; esac; done`,
      '',
    ].join('\n'),
  );
  chmodSync(join(bin, 'aws'), 0o755);
  // without --account-id: the script asks STS for the caller's account
  const args = ARGS.filter((a, i) => a !== '--account-id' && ARGS[i - 1] !== '--account-id');
  const r = await runCli([...args, '--format', 'cli']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^ACCOUNT_ID="\$\(aws sts get-caller-identity --query Account --output text\)"$/m);
  const script = join(tmp.dir, 'setup.sh');
  writeFileSync(script, r.stdout);
  execFileSync('sh', [script], { env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` } });
  const calls = readFileSync(log, 'utf8').trim().split('\n');
  assert.deepEqual(calls[0], 'aws sts get-caller-identity --query Account --output text');
  assert.equal(
    calls[1],
    `aws iam create-open-id-connect-provider --url ${ISSUER} --client-id-list sts.amazonaws.com --thumbprint-list ${TP1} a053375bfe84e8b748782c7cee15827a6af5a405`,
  );
  assert.match(
    calls[2]!,
    /^aws iam create-role --role-name ci-deploy --assume-role-policy-document file:\/\/\S+ --query Role\.Arn --output text$/,
  );
  const policy = JSON.parse(readFileSync(captured, 'utf8')) as { Statement: { Principal: { Federated: string } }[] };
  assert.equal(policy.Statement[0]!.Principal.Federated, 'arn:aws:iam::210987654321:oidc-provider/bridge.example.com/tenant-a');
  assert.deepEqual(lintPolicy(policy, { issuer: ISSUER }).findings, []);
});

void test('CloudFormation: the template parses; its trust policy (Ref resolved to the ARN) passes lint-policy', async () => {
  const r = await runCli([...ARGS, '--format', 'cloudformation']);
  const t = parseYaml(r.stdout) as {
    Resources: {
      TokenBridgeOidcProvider: { Type: string; Properties: { Url: string } };
      TokenBridgeRole: { Type: string; Properties: { AssumeRolePolicyDocument: { Statement: { Principal: { Federated: unknown } }[] } } };
    };
  };
  assert.equal(t.Resources.TokenBridgeOidcProvider.Type, 'AWS::IAM::OIDCProvider');
  assert.equal(t.Resources.TokenBridgeOidcProvider.Properties.Url, ISSUER);
  const policy = t.Resources.TokenBridgeRole.Properties.AssumeRolePolicyDocument;
  assert.deepEqual(policy.Statement[0]!.Principal.Federated, { Ref: 'TokenBridgeOidcProvider' });
  policy.Statement[0]!.Principal.Federated = 'arn:aws:iam::123456789012:oidc-provider/bridge.example.com/tenant-a';
  assert.deepEqual(lintPolicy(policy, { issuer: ISSUER }).findings, []);
});

void test('Terraform: the policy keys are P:aud and P:sub without a scheme, and the principal is the provider resource', async () => {
  const r = await runCli([...ARGS, '--format', 'terraform']);
  assert.match(r.stdout, /Principal = \{ Federated = aws_iam_openid_connect_provider\.token_bridge\.arn \}/);
  assert.match(r.stdout, /^ {10}"bridge\.example\.com\/tenant-a:aud" = "sts\.amazonaws\.com"$/m);
  assert.match(r.stdout, /^ {10}"bridge\.example\.com\/tenant-a:sub" = \["did:keri:[^"]+", "did:key:[^"]+"\]$/m);
  assert.ok(!r.stdout.includes('https://bridge.example.com/tenant-a:'));
});

void test('a forced wildcard subject goes under StringLike and lint-policy reports it (rule 3)', () => {
  const plan = planSetup({
    issuer: ISSUER,
    subjects: ['did:keri:E*'],
    thumbprints: [TP1],
    allowWildcardSubject: true,
    accountId: '123456789012',
  });
  assert.ok(plan.warnings.some((w) => w.includes('wildcard')));
  const policy = trustPolicy(plan, 'arn:aws:iam::123456789012:oidc-provider/bridge.example.com/tenant-a');
  const lint = lintPolicy(policy);
  assert.deepEqual(
    lint.findings.filter((f) => f.severity === 'error').map((f) => [f.rule, f.id]),
    [
      [3, 'sub_wildcard'],
      [2, 'sub_not_pinned'],
    ],
  );
});

void test('refused inputs, each with its code', () => {
  const base: SetupInput = { issuer: ISSUER, subjects: [KERI], thumbprints: [TP1], accountId: '123456789012' };
  const cases: [string, Partial<SetupInput>, string][] = [
    ['wildcard subject without --allow-wildcard-subject', { subjects: ['did:keri:*'] }, 'wildcard_subject'],
    ['? wildcard', { subjects: ['did:key:z6Mk?'] }, 'wildcard_subject'],
    ['not a DID', { subjects: ['repo:org/name:ref:refs/heads/main'] }, 'invalid_subject'],
    ['no subject', { subjects: [] }, 'invalid_subject'],
    ['issuer with a port', { issuer: 'https://bridge.example.com:8443' }, 'invalid_option'],
    ['http issuer', { issuer: 'http://bridge.example.com' }, 'invalid_option'],
    ['trailing slash', { issuer: 'https://bridge.example.com/' }, 'invalid_option'],
    ['account id', { accountId: '1234' }, 'invalid_option'],
    ['partition', { partition: 'azure' }, 'invalid_option'],
    ['role name', { roleName: 'a role' }, 'invalid_option'],
    ['audience with a space', { audience: 'sts amazonaws' }, 'invalid_option'],
    ['no thumbprint', { thumbprints: [] }, 'no_thumbprint'],
    ['bad thumbprint', { extraThumbprints: ['abcd'] }, 'invalid_thumbprint'],
    ['six thumbprints', { extraThumbprints: ['1', '2', '3', '4', '5'].map((d) => d.repeat(40)) }, 'too_many_thumbprints'],
  ];
  for (const [name, over, code] of cases) {
    assert.throws(
      () => planSetup({ ...base, ...over }),
      (e: unknown) => e instanceof FederationError && e.code === code,
      name,
    );
  }
  // five in all is the limit; duplicates count once
  assert.equal(planSetup({ ...base, extraThumbprints: ['1', '2', '3', '4', '1'].map((d) => d.repeat(40)) }).thumbprints.length, 5);
  // json needs the account
  const plan = planSetup({ ...base, accountId: undefined });
  assert.throws(() => renderSetup(plan, 'json'), /needs --account-id/);
});

void test('CLI: --audience refuses a comma list (a TB_AUDIENCE meant for serve); --connect-to needs --connect', async () => {
  const r = await runCli([...ARGS, '--audience', 'sts.amazonaws.com,api://ci']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /one audience/);
  const c = await runCli([...ARGS, '--connect-to', '127.0.0.1:1']);
  assert.match(c.stderr, /--connect-to needs --connect/);
});
