/**
 * Files the client keeps (party chain state, monitor state, bundles): written atomically — a
 * temporary file in the same directory, fsync, rename over the target, fsync the directory — so a
 * crash leaves either the old or the new content, never a torn file.
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { stringifyJson } from '../encoding/json.ts';
import { ClientError } from './errors.ts';
import { parseJsonBody } from './http.ts';

export function writeFileAtomic(path: string, content: string | Uint8Array, mode = 0o600): void {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'wx', mode);
  try {
    writeSync(fd, typeof content === 'string' ? Buffer.from(content, 'utf8') : content);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    unlinkSync(tmp);
    throw e;
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (e) {
    unlinkSync(tmp);
    throw e;
  }
  try {
    const dfd = openSync(dir, 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch {
    // directories cannot be fsynced on every platform; the rename is still atomic
  }
}

export function writeJsonAtomic(path: string, value: unknown, mode = 0o600): void {
  writeFileAtomic(path, stringifyJson(value, 2) + '\n', mode);
}

/** Read a JSON file (lossless for `cumulative`); undefined when it does not exist. */
export function readJsonFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ClientError('state_invalid', `cannot read ${path}: ${(e as Error).message}`);
  }
  try {
    return parseJsonBody(text);
  } catch (e) {
    throw new ClientError('state_invalid', `${path}: ${(e as Error).message}`);
  }
}
