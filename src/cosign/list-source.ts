/**
 * The `--logs-list SRC` sources (SPEC §5.5): a file path, read whole and required to be UTF-8, or
 * an `https://` URL (`http://` with --dev) fetched by list-fetch.ts.
 */
import { readFile } from 'node:fs/promises';
import { ListFetchError } from './errors.ts';
import { fetchList, listSourceLabel, parseListUrl, type ListFetchOptions } from './list-fetch.ts';

/** One `--logs-list` source. */
export interface ListSource {
  /** As configured. */
  readonly spec: string;
  /** For logs and metrics: the path, or the URL's scheme, host and path. */
  readonly label: string;
  readonly kind: 'file' | 'url';
  read(): Promise<string>;
}

/** A source from its `--logs-list` value: an `https://` URL (`http://` with --dev) or a file path. */
export function listSource(spec: string, dev: boolean, fetchOptions: ListFetchOptions = {}): ListSource {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(spec)) {
    const url = parseListUrl(spec, dev);
    return { spec, label: listSourceLabel(url), kind: 'url', read: () => fetchList(url, { ...fetchOptions, dev }) };
  }
  return {
    spec,
    label: spec,
    kind: 'file',
    read: async () => {
      let bytes: Buffer;
      try {
        bytes = await readFile(spec);
      } catch (e) {
        throw new ListFetchError('list_unreadable', `${spec}: ${(e as Error).message}`);
      }
      try {
        return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        throw new ListFetchError('list_not_utf8', `${spec}: not UTF-8`);
      }
    },
  };
}
