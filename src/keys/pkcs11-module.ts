/**
 * PKCS#11 modules (SPEC §1.1) through the optional npm `pkcs11js` addon, for the `pkcs11:` signer
 * backend (pkcs11.ts).
 *
 * - The addon is loaded on first use; absent or unbuilt → `pkcs11_unavailable` (never a crash).
 * - A module (`module-path`) must be a regular file that group and others cannot write
 *   (`pkcs11_module_unsafe`); it is loaded once per process and initialised with
 *   CKF_OS_LOCKING_OK (without it, concurrent signing crashes SoftHSM2 2.6.1).
 * - Re-initialisation (C_Finalize + C_Initialize) happens once for all the signers of a module.
 * - C_SignAsync runs on the libuv thread pool: `ensureThreadPoolSize` sizes it.
 */
import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { KeyRefError } from './errors.ts';
import { BackendError } from './signer.ts';
import type * as Pkcs11js from 'pkcs11js';

type Pkcs11Lib = typeof Pkcs11js;

const CKR_CRYPTOKI_ALREADY_INITIALIZED = 0x191;
const CKF_OS_LOCKING_OK = 0x2;

let lib: Pkcs11Lib | undefined;
let loader: () => Pkcs11Lib = () => createRequire(import.meta.url)('pkcs11js') as Pkcs11Lib;

/** Tests only: replace how pkcs11js is loaded (e.g. to simulate its absence). */
export function setPkcs11LoaderForTests(load: (() => Pkcs11Lib) | undefined): void {
  loader = load ?? ((): Pkcs11Lib => createRequire(import.meta.url)('pkcs11js') as Pkcs11Lib);
  lib = undefined;
}

function pkcs11js(): Pkcs11Lib {
  if (lib !== undefined) return lib;
  try {
    lib = loader();
    return lib;
  } catch (e) {
    throw new KeyRefError(
      'pkcs11_unavailable',
      `pkcs11: references need the optional npm package pkcs11js (a native addon), which is not installed or did not build: ${(e as Error).message.split('\n')[0]}`,
    );
  }
}

/** Is pkcs11js loadable here? (Tests skip, and say so, when it is not.) */
export function pkcs11Available(): boolean {
  try {
    pkcs11js();
    return true;
  } catch {
    return false;
  }
}

/** Set UV_THREADPOOL_SIZE ≥ 4 + sessions; effective only before the process's first async I/O. */
export function ensureThreadPoolSize(sessions: number, env: NodeJS.ProcessEnv = process.env): void {
  const want = 4 + sessions;
  const have = Number.parseInt(env.UV_THREADPOOL_SIZE ?? '4', 10);
  if (!(have >= want)) env.UV_THREADPOOL_SIZE = String(want);
}

/** The CKR_* name (else a hex code) and numeric code of a pkcs11js error. */
export function ckrName(e: unknown): { name: string; code: number } {
  const err = e as { code?: unknown; message?: unknown };
  const code = typeof err.code === 'number' ? err.code : -1;
  const msg = typeof err.message === 'string' ? err.message : String(e);
  const m = /CKR_[A-Z_]+/.exec(msg);
  return { name: m?.[0] ?? (code >= 0 ? `CKR_0x${code.toString(16)}` : 'pkcs11_error'), code };
}

/** One loaded module, shared by every signer that names it. */
export class Pkcs11Module {
  readonly p11: Pkcs11js.PKCS11;
  /** Bumped by every re-initialization: sessions of an older generation are gone. */
  generation = 0;

  readonly path: string;

  constructor(path: string) {
    this.path = path;
    const lib = pkcs11js();
    this.p11 = new lib.PKCS11();
    try {
      this.p11.load(path);
    } catch (e) {
      throw new KeyRefError('pkcs11_module_unsafe', `PKCS#11 module ${path} cannot be loaded: ${(e as Error).message}`);
    }
    this.initialize();
  }

  private initialize(): void {
    try {
      this.p11.C_Initialize({ flags: CKF_OS_LOCKING_OK });
    } catch (e) {
      if (ckrName(e).code !== CKR_CRYPTOKI_ALREADY_INITIALIZED)
        throw new BackendError(ckrName(e).name, `C_Initialize: ${(e as Error).message}`);
    }
  }

  /** C_Finalize + C_Initialize once for all signers of this module (if none did since `seen`). */
  reinitialize(seen: number): void {
    if (this.generation !== seen) return;
    this.generation++;
    try {
      this.p11.C_Finalize();
    } catch {
      // already finalized or the token is gone: initialise anyway
    }
    this.initialize();
  }
}

const modules = new Map<string, Pkcs11Module>();
function checkModuleFile(path: string): void {
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    throw new KeyRefError('pkcs11_module_unsafe', `PKCS#11 module ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  if (!st.isFile()) throw new KeyRefError('pkcs11_module_unsafe', `PKCS#11 module ${path} is not a regular file`);
  if ((st.mode & 0o022) !== 0) {
    throw new KeyRefError(
      'pkcs11_module_unsafe',
      `PKCS#11 module ${path} is writable by group or others (mode ${(st.mode & 0o777).toString(8)})`,
    );
  }
}

/** The loaded module at `path` (checked, loaded and initialised on first use). */
export function moduleFor(path: string): Pkcs11Module {
  pkcs11js(); // the missing addon first: no module helps without it
  checkModuleFile(path);
  let m = modules.get(path);
  if (m === undefined) {
    m = new Pkcs11Module(path);
    modules.set(path, m);
  }
  return m;
}
