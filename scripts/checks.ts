// `npm test`'s static checks (`typecheck`, `lint`, `format:check`), run at the same time instead of
// one after another: each is one Node process that uses about one core, and the type-aware lint
// alone takes about two minutes on the 2-core CI machine, so in sequence they cost the sum of
// the three, in parallel about the longest one (docs/build.md, "Test-suite time").
// Each check's output is held and printed whole when it ends, so the three never interleave.
// Exit status: 0 when all three pass, else 1 (every check still runs to the end and is reported).
import { spawn } from 'node:child_process';

const CHECKS = ['typecheck', 'lint', 'format:check'] as const;

interface Outcome {
  script: string;
  code: number | null;
  ms: number;
  output: string;
}

function runScript(script: string): Promise<Outcome> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const child = spawn('npm', ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => chunks.push(c));
    const done = (code: number | null, extra = '') => {
      resolve({ script, code, ms: performance.now() - t0, output: Buffer.concat(chunks).toString('utf8') + extra });
    };
    child.on('error', (err) => {
      done(null, `\n${err.message}\n`);
    });
    child.on('close', (code) => {
      done(code);
    });
  });
}

const outcomes = await Promise.all(
  CHECKS.map(async (script) => {
    const o = await runScript(script);
    const verdict = o.code === 0 ? 'ok' : `FAILED (exit ${String(o.code)})`;
    process.stdout.write(`# npm run ${script}: ${verdict} in ${(o.ms / 1000).toFixed(1)} s\n`);
    if (o.output.trim() !== '') process.stdout.write(o.output.endsWith('\n') ? o.output : `${o.output}\n`);
    return o;
  }),
);
process.exitCode = outcomes.every((o) => o.code === 0) ? 0 : 1;
