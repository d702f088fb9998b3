/**
 * Progress of long command-line work on a terminal: one status line on stderr, redrawn in place at
 * most every 200 ms (`kel verify: read 120/500 files`), with the elapsed time, and cleared when the
 * work is done. Silent when stderr is not a TTY (a pipe, a file, CI logs) or when the command's
 * output is JSON for a program (`--json`): nothing but the command's own output is ever written then.
 */

/** The stream progress is drawn on: stderr, or a stand-in in tests. */
export interface ProgressStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

export interface Progress {
  /** Whether anything is drawn (stderr is a TTY and no `--json`). */
  readonly active: boolean;
  /** Set the counted work done so far (of `total`, when known) and what is being done. */
  update(done: number, total?: number, what?: string): void;
  /** Clear the status line (after this, the command's own output follows on a clean line). */
  done(): void;
  /** Run `fn` with the status line showing `what` and the elapsed seconds while it is pending. */
  during<T>(what: string, fn: () => Promise<T>): Promise<T>;
  /** Write a whole line (a warning, say) without tearing the status line. */
  line(text: string): void;
}

const CLEAR = '\r\x1b[K';
const REDRAW_MS = 200;

/** A progress line for `label` (the command), active only on a TTY and without `json`. */
export function progress(label: string, opts: { json?: boolean; stream?: ProgressStream; now?: () => number } = {}): Progress {
  const stream = opts.stream ?? process.stderr;
  const now = opts.now ?? Date.now;
  const active = stream.isTTY === true && opts.json !== true;
  const started = now();
  let shown = false;
  let lastDraw = -Infinity;
  let text = '';
  let lastWhat: string | undefined;
  const draw = (force: boolean): void => {
    if (!active || (!force && now() - lastDraw < REDRAW_MS)) return;
    lastDraw = now();
    const seconds = Math.floor((lastDraw - started) / 1000);
    stream.write(`${CLEAR}${label}: ${text}${seconds >= 1 ? ` (${seconds} s)` : ''}`);
    shown = true;
  };
  const clear = (): void => {
    if (shown) stream.write(CLEAR);
    shown = false;
  };
  const p: Progress = {
    active,
    update(done, total, what) {
      text = `${what === undefined ? '' : `${what} `}${done}${total === undefined ? '' : `/${total}`}`;
      // a new stage and the last step are always shown
      draw(what !== lastWhat || (total !== undefined && done === total));
      lastWhat = what;
    },
    done() {
      clear();
    },
    async during(what, fn) {
      text = what;
      draw(true);
      const timer = active
        ? setInterval(() => {
            draw(true);
          }, 1000)
        : undefined;
      try {
        return await fn();
      } finally {
        if (timer !== undefined) clearInterval(timer);
      }
    },
    line(line) {
      const wasShown = shown;
      clear();
      stream.write(line.endsWith('\n') ? line : `${line}\n`);
      if (wasShown) draw(true);
    },
  };
  return p;
}
