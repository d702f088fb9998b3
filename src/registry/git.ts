/**
 * Running the `git` CLI on a repository the witness does not trust (SPEC §3.5 `git:`): through
 * execFile/spawn, never a shell; no system or global configuration, no replace objects, no
 * prompts, a minimal environment; every output read with a byte cap.
 */
import { spawn } from 'node:child_process';
import { KelSourceError } from './errors.ts';

/** The environment of every git run: only PATH is inherited. */
export function gitEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    LC_ALL: 'C',
  };
}

/**
 * `git -C repo args…` with `input` on stdin; resolves with stdout (at most `maxBytes`), rejects
 * with KelSourceError `kel_source_unreadable` when git fails or says more than `maxBytes`.
 */
export function runGit(repo: string, args: readonly string[], maxBytes: number, input?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-C', repo, ...args], { env: gitEnv(), stdio: ['pipe', 'pipe', 'pipe'], shell: false });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let failed: Error | undefined;
    const fail = (e: Error): void => {
      if (failed !== undefined) return;
      failed = e;
      child.kill('SIGKILL');
    };
    child.stdout.on('data', (b: Buffer) => {
      outBytes += b.length;
      if (outBytes > maxBytes) fail(new KelSourceError('kel_source_unreadable', `git ${args[0]}: more than ${maxBytes} bytes of output`));
      else out.push(b);
    });
    child.stderr.on('data', (b: Buffer) => {
      if (err.length < 2000) err += b.toString('utf8');
    });
    child.on('error', (e) => {
      fail(new KelSourceError('kel_source_unreadable', `git ${args[0]}: ${e.message}`));
    });
    child.stdin.on('error', () => undefined);
    child.on('close', (code) => {
      if (failed !== undefined) reject(failed);
      else if (code !== 0)
        reject(new KelSourceError('kel_source_unreadable', `git ${args[0]} in ${repo} failed (exit ${code}): ${err.trim().slice(0, 500)}`));
      else resolve(Buffer.concat(out));
    });
    child.stdin.end(input ?? '');
  });
}

/** One object of `git cat-file --batch-check` output. */
export interface ObjectInfo {
  type: string;
  size: number;
}

/** Types and sizes of `oids` (`cat-file --batch-check`); a missing object has no entry. */
export async function objectInfo(repo: string, oids: readonly string[]): Promise<Map<string, ObjectInfo>> {
  const info = new Map<string, ObjectInfo>();
  if (oids.length === 0) return info;
  const out = await runGit(repo, ['cat-file', '--batch-check'], 200 * oids.length + 4096, oids.join('\n') + '\n');
  for (const line of out.toString('utf8').split('\n')) {
    const m = /^([0-9a-f]{40}|[0-9a-f]{64}) (\S+) (\d+)$/.exec(line);
    if (m !== null) info.set(m[1]!, { type: m[2]!, size: Number(m[3]) });
  }
  return info;
}

/** The contents of blobs whose sizes were checked first (`cat-file --batch`). */
export async function readBlobs(repo: string, oids: readonly string[], totalBytes: number): Promise<Map<string, Buffer>> {
  const blobs = new Map<string, Buffer>();
  if (oids.length === 0) return blobs;
  const out = await runGit(repo, ['cat-file', '--batch'], totalBytes + 200 * oids.length + 4096, oids.join('\n') + '\n');
  let at = 0;
  while (at < out.length) {
    const nl = out.indexOf(0x0a, at);
    if (nl < 0) break;
    const header = out.subarray(at, nl).toString('utf8');
    const m = /^([0-9a-f]{40}|[0-9a-f]{64}) (\S+) (\d+)$/.exec(header);
    if (m === null) {
      at = nl + 1; // "<oid> missing"
      continue;
    }
    const size = Number(m[3]);
    const body = out.subarray(nl + 1, nl + 1 + size);
    if (body.length !== size) throw new KelSourceError('kel_source_unreadable', 'git cat-file --batch: truncated output');
    if (m[2] === 'blob') blobs.set(m[1]!, Buffer.from(body));
    at = nl + 1 + size + 1;
  }
  return blobs;
}

/** One entry of a tree object: its mode (octal text, `40000` for a tree), name and object id. */
export interface TreeEntry {
  mode: string;
  name: string;
  oid: string;
}

/** Parse a raw tree object (`<mode> SP <name> NUL <oid bytes>`…); `oidBytes` is 20 (SHA-1) or 32 (SHA-256). */
export function parseRawTree(body: Buffer, oidBytes: number): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let at = 0;
  while (at < body.length) {
    const sp = body.indexOf(0x20, at);
    const nul = body.indexOf(0x00, sp + 1);
    if (sp < 0 || nul < 0 || nul + 1 + oidBytes > body.length)
      throw new KelSourceError('kel_source_unreadable', 'git: a tree object does not parse');
    entries.push({
      mode: body.subarray(at, sp).toString('latin1'),
      name: body.subarray(sp + 1, nul).toString('utf8'),
      oid: body.subarray(nul + 1, nul + 1 + oidBytes).toString('hex'),
    });
    at = nul + 1 + oidBytes;
  }
  return entries;
}

/**
 * The entries of several trees named `<rev>:<path>` (one `cat-file --batch-check` for the sizes,
 * one `cat-file --batch` for those of at most `maxBytesEach`): per name, its entries, `missing`
 * (no such tree) or `oversize`. Never recursive: a tree of trees costs one level.
 */
export async function readTrees(
  repo: string,
  names: readonly string[],
  maxBytesEach: number,
): Promise<Map<string, TreeEntry[] | 'missing' | 'oversize'>> {
  const out = new Map<string, TreeEntry[] | 'missing' | 'oversize'>();
  if (names.length === 0) return out;
  const check = await runGit(repo, ['cat-file', '--batch-check'], 200 * names.length + 4096, names.join('\n') + '\n');
  const lines = check.toString('utf8').split('\n');
  const small: string[] = [];
  for (let i = 0; i < names.length; i++) {
    const m = /^([0-9a-f]{40}|[0-9a-f]{64}) (\S+) (\d+)$/.exec(lines[i] ?? '');
    if (m === null || m[2] !== 'tree') out.set(names[i]!, 'missing');
    else if (Number(m[3]) > maxBytesEach) out.set(names[i]!, 'oversize');
    else small.push(names[i]!);
  }
  if (small.length === 0) return out;
  const body = await runGit(repo, ['cat-file', '--batch'], (maxBytesEach + 200) * small.length + 4096, small.join('\n') + '\n');
  let at = 0;
  for (const name of small) {
    const nl = body.indexOf(0x0a, at);
    const m = nl < 0 ? null : /^([0-9a-f]{40}|[0-9a-f]{64}) (\S+) (\d+)$/.exec(body.subarray(at, nl).toString('utf8'));
    if (m === null) throw new KelSourceError('kel_source_unreadable', `git cat-file --batch: unexpected output for ${name}`);
    const size = Number(m[3]);
    const content = body.subarray(nl + 1, nl + 1 + size);
    if (content.length !== size) throw new KelSourceError('kel_source_unreadable', 'git cat-file --batch: truncated output');
    out.set(name, m[2] === 'tree' ? parseRawTree(content, m[1]!.length / 2) : 'missing');
    at = nl + 1 + size + 1;
  }
  return out;
}
