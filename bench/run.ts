/**
 * `npm run bench [name…]`: runs bench/<name>.ts (all of them when no name is given), one child
 * process each, in sequence; each prints one JSON document on stdout.
 */
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const dir = import.meta.dirname;
const wanted = process.argv.slice(2);
const all = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('_'))
  .map((f) => f.slice(0, -3))
  .sort();
const names = wanted.length > 0 ? wanted : all;
let failed = false;
for (const name of names) {
  if (!all.includes(name)) {
    process.stderr.write(`no benchmark bench/${name}.ts (have: ${all.join(', ')})\n`);
    failed = true;
    continue;
  }
  process.stderr.write(`# bench/${name}\n`);
  const r = spawnSync(process.execPath, [join(dir, `${name}.ts`)], { stdio: 'inherit' });
  if (r.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
