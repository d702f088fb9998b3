/**
 * Key files (SPEC §1): PKCS#8 PEM, mode 0600, refused when group- or world-readable, created with
 * O_EXCL so an existing key is never overwritten (keys are never silently regenerated).
 */
import { openSync, writeSync, closeSync, fsyncSync, readFileSync, statSync, constants } from 'node:fs';
import { KeyFileError } from './errors.ts';

/** Write a new key file; fails if the path exists. */
export function writeNewKeyFile(path: string, pem: string): void {
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new KeyFileError('key_exists', `${path} already exists; refusing to overwrite a key`);
    throw new KeyFileError('key_unwritable', `cannot create ${path}: ${code ?? String(e)}`);
  }
  try {
    writeSync(fd, pem);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Read a key file's PEM text, refusing a missing file or one readable by group or others. */
export function readKeyFile(path: string): string {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new KeyFileError(
      'key_missing',
      `key file ${path}: ${code === 'ENOENT' ? 'no such file' : `cannot read it (${code ?? String(e)})`}`,
    );
  }
  if ((mode & 0o077) !== 0) {
    throw new KeyFileError(
      'key_permissions',
      `key file ${path}: accessible by group or others (mode ${(mode & 0o777).toString(8)}); run: chmod 600 ${path}`,
    );
  }
  return readFileSync(path, 'utf8');
}
