/**
 * Files named by a flag (`--config`, `--key`, `--tls-cert`, `--trusted-roots`, `--chain`, …): a
 * failure to read or parse one is reported as `--flag FILE: what is wrong`, in plain words (system
 * and OpenSSL codes translated), so an operator knows which file of which flag to fix. A coded
 * error keeps its class and code; an uncoded one (a system error, a JSON/YAML syntax error) becomes
 * the caller's coded error when the caller gives one.
 */
import { ProtocolError } from '../errors.ts';

const SYSTEM_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'is a directory, not a file',
  ENOTDIR: 'a parent of it is not a directory',
  ELOOP: 'too many symbolic links',
};

/** The OpenSSL failures a user's PEM file causes, in plain words. */
const OPENSSL_ERRORS: readonly [RegExp, string][] = [
  [/ERR_OSSL_PEM_NO_START_LINE|no start line/, 'not PEM: no "-----BEGIN …-----" line'],
  [/ERR_OSSL_PEM_BAD_END_LINE|bad end line/, 'not PEM: a "-----BEGIN" without its matching "-----END" line'],
  [/ERR_OSSL_PEM_BAD_BASE64_DECODE|bad base64 decode/, 'broken PEM: the base64 between the BEGIN and END lines does not decode'],
  [/ERR_OSSL_UNSUPPORTED|DECODER routines::unsupported/, 'not a private key that can be read (expected an unencrypted PEM private key)'],
  [/ERR_OSSL_X509_KEY_VALUES_MISMATCH|key values mismatch/, 'the private key does not belong to the certificate'],
  [/bad decrypt|ERR_OSSL_BAD_DECRYPT|interrupted or cancelled/, 'an encrypted key: give an unencrypted one (mode 0600)'],
];

/** What is wrong with a file, in plain words, from the error its reading or parsing threw. */
export function fileProblem(e: unknown, file: string): string {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && SYSTEM_ERRORS[code] !== undefined) return SYSTEM_ERRORS[code];
  const message = e instanceof Error ? e.message : String(e);
  if ((typeof code === 'string' && code.startsWith('ERR_OSSL')) || /routines::/.test(message)) {
    const text = `${typeof code === 'string' ? code : ''} ${message}`;
    for (const [re, plain] of OPENSSL_ERRORS) if (re.test(text)) return plain;
    return `OpenSSL cannot read it (${message.replace(/^error:[0-9A-F]+:/, '')})`;
  }
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return `cannot read it (${code})`;
  const name = e instanceof Error ? e.name : '';
  if (name === 'JsonError') return `not valid JSON: ${message}`;
  if (name.startsWith('YAML')) return `not valid YAML: ${message.split('\n')[0]}`;
  // Messages that already name the file (`FILE: …`, `key file FILE: …`) lose that part.
  for (const lead of [`${file}: `, `key file ${file}: `]) if (message.startsWith(lead)) return message.slice(lead.length);
  return message;
}

/** `--flag FILE: what is wrong` for an error thrown while reading that file. */
export function inputFileMessage(flag: string, file: string, e: unknown): string {
  return `${flag} ${file}: ${fileProblem(e, file)}`;
}

/**
 * Run `read` (reading and parsing `file`, given by `flag`); an error it throws comes out as
 * `--flag FILE: what is wrong`: a coded error with its class and code kept, another through
 * `coded` when given (else a plain Error).
 */
export function readInputFile<T>(flag: string, file: string, read: () => T, coded?: (message: string) => Error): T {
  try {
    return read();
  } catch (e) {
    throw inputFileError(flag, file, e, coded);
  }
}

export function inputFileError(flag: string, file: string, e: unknown, coded?: (message: string) => Error): Error {
  const message = inputFileMessage(flag, file, e);
  if (e instanceof ProtocolError) {
    e.message = message;
    return e;
  }
  return coded?.(message) ?? new Error(message);
}
