// `token-bridge lint-policy` (SPEC §8): a table of bad trust policies, each caught with the right
// rule number and id; what is only a warning; the exit statuses 0 / 1 / 2 and `--json`, in process
// and through bin/token-bridge.js.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { lintPolicy, lintPolicyText } from '../../src/federation/lint.ts';
import type { Finding } from '../../src/federation/lint.ts';
import { FederationError } from '../../src/federation/errors.ts';
import { tempDir } from '../helpers/tmp.ts';
import { runBin, runCli } from './_helpers.ts';

const P = 'bridge.example.com';
const ISSUER = `https://${P}`;
const ARN = `arn:aws:iam::123456789012:oidc-provider/${P}`;
const SUB = 'did:keri:EBfdlu8R27Fbx-ehrqwImnK-8Cm79sqbAQ4MmvEAYqao';

type Policy = { Version?: unknown; Statement: Record<string, unknown>[] };

function good(): Policy {
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { Federated: ARN },
        Action: 'sts:AssumeRoleWithWebIdentity',
        Condition: { StringEquals: { [`${P}:aud`]: 'sts.amazonaws.com', [`${P}:sub`]: SUB } },
      },
    ],
  };
}

function edit(f: (p: Policy, s: Record<string, unknown>) => void): Policy {
  const p = good();
  f(p, p.Statement[0]!);
  return p;
}
const drop = (o: Record<string, unknown>, key: string): boolean => Reflect.deleteProperty(o, key);
const cond = (s: Record<string, unknown>): Record<string, Record<string, unknown>> =>
  s.Condition as Record<string, Record<string, unknown>>;

/** [name, policy, expected error (rule, id), lint options] */
const BAD: [string, Policy, [number, string], { issuer?: string }?][] = [
  ['missing aud', edit((_, s) => drop(cond(s).StringEquals!, `${P}:aud`)), [1, 'aud_not_pinned']],
  [
    'aud only under StringLike with a wildcard',
    edit((_, s) => {
      drop(cond(s).StringEquals!, `${P}:aud`);
      cond(s).StringLike = { [`${P}:aud`]: 'sts.*' };
    }),
    [1, 'aud_wildcard'],
  ],
  ['missing sub', edit((_, s) => drop(cond(s).StringEquals!, `${P}:sub`)), [2, 'sub_not_pinned']],
  ['no Condition at all', edit((_, s) => delete s.Condition), [2, 'sub_not_pinned']],
  [
    'StringLike did:keri:*',
    edit((_, s) => {
      drop(cond(s).StringEquals!, `${P}:sub`);
      cond(s).StringLike = { [`${P}:sub`]: 'did:keri:*' };
    }),
    [3, 'sub_wildcard'],
  ],
  [
    'StringLike did:keri:E* among exact ones',
    edit((_, s) => {
      cond(s).StringLike = { [`${P}:sub`]: [SUB, 'did:keri:E*'] };
    }),
    [3, 'sub_wildcard'],
  ],
  [
    '? in a sub value',
    edit((_, s) => {
      cond(s).StringEquals![`${P}:sub`] = 'did:key:z6Mk?';
    }),
    [3, 'sub_wildcard'],
  ],
  [
    'condition keys with https://',
    edit((_, s) => {
      cond(s).StringEquals = { [`https://${P}:aud`]: 'sts.amazonaws.com', [`https://${P}:sub`]: SUB };
    }),
    [4, 'condition_key_scheme'],
  ],
  [
    'condition key prefix ≠ Federated ARN',
    edit((_, s) => {
      cond(s).StringEquals = { 'other.example.com:aud': 'sts.amazonaws.com', 'other.example.com:sub': SUB };
    }),
    [4, 'condition_key_prefix'],
  ],
  [
    'GitHub provider keys on the bridge statement',
    edit((_, s) => {
      cond(s).StringEquals![`token.actions.githubusercontent.com:sub`] = 'repo:o/r:ref:refs/heads/main';
      drop(cond(s).StringEquals!, `${P}:sub`);
    }),
    [4, 'condition_key_prefix'],
  ],
  [
    'provider ARN with a scheme',
    edit((_, s) => {
      s.Principal = { Federated: `arn:aws:iam::123456789012:oidc-provider/https://${P}` };
    }),
    [4, 'provider_arn_scheme'],
  ],
  [
    'Federated ARN for another provider than --issuer',
    edit((_, s) => {
      s.Principal = { Federated: 'arn:aws:iam::123456789012:oidc-provider/bridge.example.org' };
      cond(s).StringEquals = { 'bridge.example.org:aud': 'sts.amazonaws.com', 'bridge.example.org:sub': SUB };
    }),
    [4, 'provider_mismatch'],
    { issuer: ISSUER },
  ],
  [
    'ForAllValues:StringEquals on sub',
    edit((_, s) => {
      drop(cond(s).StringEquals!, `${P}:sub`);
      cond(s)['ForAllValues:StringEquals'] = { [`${P}:sub`]: SUB };
    }),
    [5, 'set_operator'],
  ],
  [
    'ForAnyValue:StringLike on aud',
    edit((_, s) => {
      cond(s)['ForAnyValue:StringLike'] = { [`${P}:aud`]: 'sts.amazonaws.com' };
    }),
    [5, 'set_operator'],
  ],
  [
    'StringEqualsIfExists on sub',
    edit((_, s) => {
      drop(cond(s).StringEquals!, `${P}:sub`);
      cond(s).StringEqualsIfExists = { [`${P}:sub`]: SUB };
    }),
    [5, 'if_exists'],
  ],
  [
    'StringNotEquals on sub',
    edit((_, s) => {
      cond(s).StringNotEquals = { [`${P}:sub`]: 'did:keri:Eattacker' };
    }),
    [5, 'negated_operator'],
  ],
  [
    'StringEqualsIgnoreCase on sub',
    edit((_, s) => {
      cond(s).StringEqualsIgnoreCase = { [`${P}:sub`]: SUB };
    }),
    [5, 'ignore_case'],
  ],
  [
    'ArnLike on aud',
    edit((_, s) => {
      cond(s).ArnLike = { [`${P}:aud`]: 'sts.amazonaws.com' };
    }),
    [5, 'unexpected_operator'],
  ],
  [
    'Principal "*"',
    edit((_, s) => {
      s.Principal = '*';
    }),
    [5, 'principal_not_provider'],
  ],
  [
    'Principal AWS account',
    edit((_, s) => {
      s.Principal = { AWS: 'arn:aws:iam::123456789012:root', Federated: ARN };
    }),
    [5, 'principal_not_provider'],
  ],
  [
    'Federated not an OIDC provider ARN',
    edit((_, s) => {
      s.Principal = { Federated: 'accounts.google.com' };
    }),
    [5, 'principal_not_provider'],
  ],
  [
    'two providers in one statement',
    edit((_, s) => {
      s.Principal = { Federated: [ARN, 'arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com'] };
    }),
    [5, 'principal_not_provider'],
  ],
  [
    'Action sts:AssumeRole',
    edit((_, s) => {
      s.Action = 'sts:AssumeRole';
    }),
    [5, 'action_not_web_identity'],
  ],
  [
    'Action sts:*',
    edit((_, s) => {
      s.Action = 'sts:*';
    }),
    [5, 'action_not_web_identity'],
  ],
  [
    'Action only sts:TagSession',
    edit((_, s) => {
      s.Action = 'sts:TagSession';
    }),
    [5, 'action_not_web_identity'],
  ],
  [
    'NotPrincipal',
    edit((_, s) => {
      delete s.Principal;
      s.NotPrincipal = { AWS: 'arn:aws:iam::123456789012:root' };
    }),
    [5, 'not_principal'],
  ],
  [
    'NotAction',
    edit((_, s) => {
      delete s.Action;
      s.NotAction = 'iam:*';
    }),
    [5, 'not_action'],
  ],
  [
    'Version 2008-10-17',
    edit((p) => {
      p.Version = '2008-10-17';
    }),
    [5, 'version'],
  ],
  [
    'no Version',
    edit((p) => {
      delete p.Version;
    }),
    [5, 'version'],
  ],
  [
    'only a Deny statement',
    edit((_, s) => {
      s.Effect = 'Deny';
    }),
    [5, 'no_provider_statement'],
  ],
  [
    'a second, unpinned Allow statement for the provider',
    edit((p) => {
      p.Statement.push({
        Effect: 'Allow',
        Principal: { Federated: ARN },
        Action: 'sts:AssumeRoleWithWebIdentity',
        Condition: { StringEquals: { [`${P}:aud`]: 'sts.amazonaws.com' } },
      });
    }),
    [2, 'sub_not_pinned'],
  ],
];

const errorsOf = (fs: readonly Finding[]): [number, string][] => fs.filter((f) => f.severity === 'error').map((f) => [f.rule, f.id]);

void test('the good policy is clean, with and without --issuer', () => {
  assert.deepEqual(lintPolicy(good()).findings, []);
  assert.deepEqual(lintPolicy(good(), { issuer: ISSUER }).findings, []);
});

for (const [name, policy, [rule, id], opts] of BAD) {
  void test(`rule ${rule} [${id}]: ${name}`, () => {
    const r = lintPolicy(policy, opts ?? {});
    assert.ok(r.errors > 0, `no error for: ${name}`);
    assert.ok(
      errorsOf(r.findings).some(([ru, i]) => ru === rule && i === id),
      `expected rule ${rule} ${id}, got ${JSON.stringify(errorsOf(r.findings))}`,
    );
    for (const f of r.findings) assert.match(f.message, /\S/);
  });
}

void test('findings for the specific mistakes are exactly those (no noise)', () => {
  const wild = edit((_, s) => {
    drop(cond(s).StringEquals!, `${P}:sub`);
    cond(s).StringLike = { [`${P}:sub`]: 'did:keri:*' };
  });
  assert.deepEqual(errorsOf(lintPolicy(wild).findings), [
    [3, 'sub_wildcard'],
    [2, 'sub_not_pinned'],
  ]);
  const scheme = edit((_, s) => {
    cond(s).StringEquals = { [`https://${P}:aud`]: 'sts.amazonaws.com', [`${P}:sub`]: SUB };
  });
  assert.deepEqual(errorsOf(lintPolicy(scheme).findings), [
    [4, 'condition_key_scheme'],
    [1, 'aud_not_pinned'],
  ]);
});

void test("warnings only: sts:TagSession, several audiences, a sub that is not a DID next to a pinned one, another provider's statement with --issuer", () => {
  const p = edit((pol, s) => {
    s.Action = ['sts:AssumeRoleWithWebIdentity', 'sts:TagSession'];
    cond(s).StringEquals![`${P}:aud`] = ['sts.amazonaws.com', 'api://other'];
    cond(s).StringEquals![`${P}:sub`] = [SUB, 'repo:org/name'];
    pol.Statement.push({
      Effect: 'Allow',
      Principal: { Federated: 'arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com' },
      Action: 'sts:AssumeRoleWithWebIdentity',
      Condition: {
        StringEquals: {
          'token.actions.githubusercontent.com:aud': 'sts.amazonaws.com',
          'token.actions.githubusercontent.com:sub': 'repo:o/r:ref:refs/heads/main',
        },
      },
    });
  });
  const r = lintPolicy(p, { issuer: ISSUER });
  assert.equal(r.errors, 0, JSON.stringify(r.findings));
  assert.deepEqual(r.findings.map((f) => f.id).sort(), ['aud_multiple', 'other_provider', 'sub_not_did', 'tag_session']);
});

void test('condition keys and actions are case-insensitive as in IAM; values are not', () => {
  const p = edit((_, s) => {
    s.Action = 'STS:AssumeRoleWithWebIdentity';
    cond(s).StringEquals = { [`${P.toUpperCase()}:AUD`]: 'sts.amazonaws.com', [`${P}:Sub`]: SUB };
  });
  assert.deepEqual(lintPolicy(p).findings, []);
});

void test('accepted document shapes: `aws iam get-role` output, aws-setup JSON, URL-encoded policy', () => {
  assert.equal(lintPolicy({ Role: { RoleName: 'r', AssumeRolePolicyDocument: good() } }).errors, 0);
  assert.equal(lintPolicy({ AssumeRolePolicyDocument: encodeURIComponent(JSON.stringify(good())) }).errors, 0);
});

void test('unparsable: not JSON, duplicate keys, no Statement, bad Effect', () => {
  const cases = [
    '{"Version": "2012-10-17", "Statement": [',
    '{"Version": "2012-10-17", "Version": "2012-10-17", "Statement": []}',
    '{"Version": "2012-10-17"}',
    '{"Version": "2012-10-17", "Statement": [{"Effect": "Maybe"}]}',
    '{"Version": "2012-10-17", "Statement": ["x"]}',
    '[1, 2]',
  ];
  for (const c of cases) {
    assert.throws(
      () => lintPolicyText(c),
      (e: unknown) => e instanceof FederationError && e.code === 'policy_unparsable',
      c,
    );
  }
});

let tmp: { dir: string; cleanup: () => void };
before(() => {
  tmp = tempDir('tb-lint-');
});
after(() => {
  tmp.cleanup();
});

void test('CLI exit statuses: 0 clean, 0 warnings only (printed), 1 errors, 2 unparsable or missing; --json; stdin', async () => {
  const write = (name: string, v: unknown): string => {
    const f = join(tmp.dir, name);
    writeFileSync(f, typeof v === 'string' ? v : JSON.stringify(v));
    return f;
  };
  const clean = await runCli(['lint-policy', write('good.json', good()), '--issuer', ISSUER]);
  assert.equal(clean.code, 0);
  assert.match(clean.stdout, /ok: 0 error\(s\), 0 warning\(s\)/);

  const warnOnly = await runCli([
    'lint-policy',
    write(
      'warn.json',
      edit((_, s) => (s.Action = ['sts:AssumeRoleWithWebIdentity', 'sts:TagSession'])),
    ),
  ]);
  assert.equal(warnOnly.code, 0);
  assert.match(warnOnly.stdout, /warning rule 5 \[tag_session\] Statement\[0\]/);

  const badFile = write('bad.json', BAD[4]![1]);
  const bad = await runCli(['lint-policy', badFile]);
  assert.equal(bad.code, 1);
  assert.match(bad.stdout, /error rule 3 \[sub_wildcard\] Statement\[0\]/);

  const json = await runCli(['lint-policy', badFile, '--json']);
  assert.equal(json.code, 1);
  const doc = JSON.parse(json.stdout) as { ok: boolean; errors: number; findings: Finding[] };
  assert.equal(doc.ok, false);
  assert.ok(doc.findings.some((f) => f.rule === 3 && f.id === 'sub_wildcard' && f.severity === 'error' && f.statement === 0));

  const broken = await runCli(['lint-policy', write('broken.json', '{"Statement": ['), '--json']);
  assert.equal(broken.code, 2);
  assert.match((JSON.parse(broken.stdout) as { unparsable: string }).unparsable, /not a JSON policy/);
  const missing = await runCli(['lint-policy', join(tmp.dir, 'nope.json')]);
  assert.equal(missing.code, 2);
  const badIssuer = await runCli(['lint-policy', badFile, '--issuer', 'https://bridge.example.com:8443']);
  assert.equal(badIssuer.code, 2);
  assert.match(badIssuer.stderr, /cannot lint: --issuer .*port/);

  const stdin = await runCli(['lint-policy', '-'], JSON.stringify({ Role: { AssumeRolePolicyDocument: good() } }));
  assert.equal(stdin.code, 0, stdin.stdout + stdin.stderr);

  // the real binary: exit statuses reach the shell
  const bins = await Promise.all([
    runBin(['lint-policy', badFile]),
    runBin(['lint-policy', '-'], { stdin: 'not json' }),
    runBin(['lint-policy', '-', '--issuer', ISSUER], { stdin: JSON.stringify(good()) }),
  ]);
  assert.deepEqual(
    bins.map((b) => b.code),
    [1, 2, 0],
  );
});
