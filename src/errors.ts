/**
 * Typed errors with stable codes, in the manner of panva/jose: every failure a caller may branch
 * on carries a `code` (snake_case, stable). Each module declares its codes as a closed union in its
 * own `errors.ts` (`export type NoteErrorCode = 'malformed_note' | …`) and its error classes extend
 * `CodedError<ThatUnion>`, so a throw with a code outside the union does not compile. Callers
 * branch with `instanceof` on the owning module's class and compare `code` against its union,
 * never by matching a bare string on ProtocolError. Every code is listed in docs/errors.md
 * (checked by test/architecture/error-codes.test.ts); the HTTP layer maps codes to statuses.
 */

/** The base every module error extends; `e instanceof ProtocolError` narrows `code` to `string`. */
export class ProtocolError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
    this.name = new.target.name;
  }
}

/**
 * A ProtocolError whose code is one of the union `C`: `class NoteError extends
 * CodedError<NoteErrorCode> {}`. Branch on the module's class, not on CodedError (a generic class
 * narrows to its `any` instantiation, which is why ProtocolError itself is not generic).
 */
export class CodedError<C extends string> extends ProtocolError {
  declare readonly code: C;
  // eslint-disable-next-line @typescript-eslint/no-useless-constructor -- narrows `code` to C
  constructor(code: C, message: string) {
    super(code, message);
  }
}
