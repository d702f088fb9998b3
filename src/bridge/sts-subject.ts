/**
 * The JWT `sub` as AWS STS will take it (SPEC §7): STS copies `sub` into
 * `SubjectFromWebIdentityToken`, which its API reference bounds to 6–255 characters, so the
 * trusted-roots loader and the issue path both refuse a subject outside that.
 */
/** STS's bounds (shape `webIdentitySubjectType`), counted in code points (every bound id is ASCII). */
export const STS_SUBJECT_MIN = 6;
export const STS_SUBJECT_MAX = 255;

/** Why `sub` cannot be an STS subject, or null when it can. */
export function stsSubjectProblem(sub: string): string | null {
  const n = sub.length - (sub.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0);
  if (n >= STS_SUBJECT_MIN && n <= STS_SUBJECT_MAX) return null;
  return `is ${n} characters; AWS STS accepts a sub (SubjectFromWebIdentityToken) of ${STS_SUBJECT_MIN}–${STS_SUBJECT_MAX} characters`;
}
