// SPEC §9 environment mapping: prefix + the flag upper-cased with - → _; booleans 1/true/0/false; flags win.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { envProgram, collectList } from '../../src/cli/options.ts';

async function parse(env: Record<string, string>, argv: string[]): Promise<Record<string, unknown>> {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    let got: Record<string, unknown> = {};
    const p = envProgram('t', 'TT_');
    p.exitOverride();
    p.command('run')
      .option('--max-body-bytes <n>', 'n')
      .option('--audience <a>', 'a', collectList)
      .option('--dev', 'd')
      .option('--no-proof-of-possession', 'p')
      .action((o: Record<string, unknown>) => {
        got = o;
      });
    await p.parseAsync(['node', 't', 'run', ...argv]);
    return got;
  } finally {
    for (const k of Object.keys(env)) Reflect.deleteProperty(process.env, k);
    Object.assign(process.env, saved);
  }
}

void test('valued, repeatable, boolean and negated flags read their variables', async () => {
  assert.deepEqual(await parse({}, []), { proofOfPossession: true });
  const o = await parse({ TT_MAX_BODY_BYTES: '100', TT_AUDIENCE: 'a,b', TT_DEV: '1', TT_NO_PROOF_OF_POSSESSION: 'true' }, []);
  assert.deepEqual(o, { maxBodyBytes: '100', audience: ['a', 'b'], dev: true, proofOfPossession: false });
  // 0/false leave the switch off; a negated flag stays on
  assert.deepEqual(await parse({ TT_DEV: '0', TT_NO_PROOF_OF_POSSESSION: '0' }, []), { dev: false, proofOfPossession: true });
  // flags win over variables
  assert.deepEqual(
    await parse({ TT_MAX_BODY_BYTES: '100', TT_NO_PROOF_OF_POSSESSION: '0' }, ['--max-body-bytes', '7', '--no-proof-of-possession']),
    {
      maxBodyBytes: '7',
      proofOfPossession: false,
    },
  );
  await assert.rejects(parse({ TT_DEV: 'yes' }, []), /TT_DEV must be 1\/true or 0\/false/);
});
