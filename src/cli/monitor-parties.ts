/**
 * The parties' keys for `anchor-witness monitor`, read as the witnesses read them: a plain
 * registry file (SPEC §3.2), or with `--kel-source` the same registry file and KEL source a
 * witness serves with (SPEC §3.5: entries without `keys`, `"delegates": true`), the keys derived by
 * src/registry's KEL registry (the same verifier and rules as the witness). The KEL source is read
 * again before every poll. With a KEL source a party's keys are every key its accepted KEL made
 * current at any reload since the monitor started: an anchor signed before a rotation is still the
 * party's (docs/client.md, "Monitoring a KEL-registry deployment").
 */
import { keyFingerprint, parseRegistry, parseRegistryFile, type Registry, type RegistryParty } from '../anchor/registry.ts';
import { readDocument } from '../config/config-file.ts';
import { DEFAULT_KEL_LIMITS } from '../keri/index.ts';
import { KelPartyRegistry } from '../registry/live.ts';
import { parseKelSourceSpec } from '../registry/source.ts';
import { ClientError } from '../client/errors.ts';
import { ProtocolError } from '../errors.ts';
import { UsageError } from '../verify/errors.ts';

/** Where the monitor's party keys come from. */
export interface MonitorParties {
  /** The registry for the next poll (with a KEL source: read again first). */
  current(): Promise<Registry>;
  close(): Promise<void>;
}

const why = (e: unknown): string => (e instanceof ProtocolError || e instanceof Error ? e.message : String(e));

function readDoc(path: string): unknown {
  try {
    return readDocument(path);
  } catch (e) {
    throw new UsageError(`--registry ${path}: ${(e as NodeJS.ErrnoException).code ?? why(e)}`);
  }
}

/** A plain registry file: every entry has its `keys`. */
function staticParties(path: string): MonitorParties {
  const doc = readDoc(path);
  let registry: Registry;
  try {
    registry = parseRegistry(doc);
  } catch (e) {
    let hint = '';
    try {
      parseRegistryFile(doc);
      hint = " (this registry file takes keys from key event logs: give the witness's KEL source too, --kel-source dir:PATH|git:PATH)";
    } catch {
      // not a KEL-registry file either: the first message stands
    }
    throw new UsageError(`--registry ${path}: ${why(e)}${hint}`);
  }
  return { current: () => Promise.resolve(registry), close: () => Promise.resolve() };
}

/** A registry file with a KEL source, as `anchor-witness serve --registry F --kel-source S`. */
async function kelParties(path: string, source: string): Promise<MonitorParties> {
  let spec;
  try {
    spec = parseKelSourceSpec(source);
  } catch (e) {
    throw new UsageError(why(e));
  }
  try {
    parseRegistryFile(readDoc(path));
  } catch (e) {
    if (e instanceof ClientError) throw e;
    throw new UsageError(`--registry ${path}: ${why(e)}`);
  }
  // The monitor has no store: the highest tips it accepted live in memory (a copy rolled back
  // during a run is refused as the witness would refuse it).
  const tips = new Map<string, { prefix: string; s: number; d: string }>();
  const failures: string[] = [];
  let live: KelPartyRegistry;
  try {
    live = await KelPartyRegistry.open({
      registryFile: path,
      source: spec,
      limits: DEFAULT_KEL_LIMITS,
      pollSeconds: 0,
      store: {
        kelTips: () => Promise.resolve([...tips.values()]),
        raiseKelTips: (raised) => {
          for (const t of raised) tips.set(t.prefix, { prefix: t.prefix, s: t.s, d: t.d });
          return Promise.resolve();
        },
      },
      events: { failed: (_why, reason) => failures.push(reason) },
    });
  } catch (e) {
    throw new UsageError(`--registry ${path} --kel-source ${source}: ${why(e)}`);
  }
  // Every key a party's accepted KEL made current while this monitor ran, by party id.
  const seen = new Map<string, RegistryParty>();
  const merge = (snapshot: Registry): Registry => {
    for (const p of snapshot.parties.values()) {
      const known = seen.get(p.id);
      if (known === undefined) {
        seen.set(p.id, { ...p, keys: [...p.keys] });
        continue;
      }
      const have = new Set(known.keys.map((k) => keyFingerprint(k.curve, k.publicKey)));
      for (const k of p.keys) if (!have.has(keyFingerprint(k.curve, k.publicKey))) known.keys.push(k);
    }
    return { parties: new Map(seen), ...(snapshot.withheld !== undefined ? { withheld: snapshot.withheld } : {}) };
  };
  let first = true;
  return {
    current: async () => {
      if (!first) {
        await live.reload('poll');
        // A source that cannot be read now keeps the keys of the last reload (as the witness does).
        for (const f of failures.splice(0)) process.stderr.write(`warning: KEL source not reloaded (keeping the last keys): ${f}\n`);
      }
      first = false;
      return merge(live.current());
    },
    close: () => live.stop(),
  };
}

/** The monitor's party keys: `--registry FILE`, with `--kel-source dir:PATH|git:PATH` when the witnesses use one. */
export function openMonitorParties(registryFile: string, kelSource: string | undefined): Promise<MonitorParties> {
  return kelSource === undefined ? Promise.resolve(staticParties(registryFile)) : kelParties(registryFile, kelSource);
}
