// The Node version gate of the command-line entries (bin/*.js, compiled to lib/bin/*.js). Plain
// JavaScript with no imports, loaded before anything else: on an old Node the rest of the program
// would fail in its own way (a `.ts` extension error with a stack in a checkout, a segmentation
// fault from the native SQLite addon in an installed package). docs/build.md, "Node versions".

/** The oldest Node the package runs on (package.json `engines`). */
export const MIN_NODE_MAJOR = 22;

/**
 * Why this Node cannot run the program, or undefined when it can: older than Node 22, or, in a
 * checkout (the entry runs the TypeScript sources), a Node that does not strip types (< 22.18).
 * `versions` and `features` are process.versions and process.features; `checkout` says whether
 * the entry loads `.ts` sources.
 */
export function nodeProblem(program, versions, features, checkout) {
  const major = Number(String(versions.node).split('.')[0]);
  const stripsTypes = features !== undefined && features !== null && Boolean(features.typescript);
  if (major >= MIN_NODE_MAJOR && (!checkout || stripsTypes)) return undefined;
  const what = `${program} needs Node >= ${MIN_NODE_MAJOR} (ML-DSA-44 needs >= 24.6`;
  return checkout
    ? `${what}; a checkout's TypeScript sources >= 22.18), this is Node v${versions.node}; in a checkout run node_modules/.bin/node bin/${program}.js`
    : `${what}), this is Node v${versions.node}; install Node ${MIN_NODE_MAJOR} or later`;
}

/**
 * Exit 1 with one line on stderr when this Node cannot run `program`. `entryUrl` is the entry's
 * import.meta.url: under lib/bin/ it is the compiled package, elsewhere a checkout.
 */
export function requireNode(program, entryUrl) {
  const checkout = !/\/lib\/bin\/[^/]+\.js$/.test(entryUrl);
  const problem = nodeProblem(program, process.versions, process.features, checkout);
  if (problem === undefined) return;
  process.stderr.write(problem + '\n');
  process.exit(1);
}
