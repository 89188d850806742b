/** A terminal's size in character cells. */
export interface ConsoleSize {
  cols: number;
  rows: number;
}

/** The default size of a terminal that did not say (a VT100's). */
export const DEFAULT_SIZE: ConsoleSize = { cols: 80, rows: 24 };

/**
 * An open console of a machine, as a driver gives it: the bytes it writes, and what to send it.
 * `output` ends when the console ends on its side (the login session exited, the machine stopped);
 * `close` ends it from ours.
 */
export interface MachineConsole {
  readonly output: AsyncIterable<Uint8Array>;
  write(data: Uint8Array): void;
  resize(size: ConsoleSize): void;
  close(): void;
}

/**
 * A queue of output chunks read as an async iterable by one reader. Consoles push as their
 * source delivers; a reader slower than the source holds the chunks until it comes back (a
 * console's output is small and bounded by the person typing, so no backpressure is needed).
 */
export function byteQueue(): {
  push(chunk: Uint8Array): void;
  end(): void;
  readonly iterable: AsyncIterable<Uint8Array>;
} {
  const chunks: Uint8Array[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  return {
    push(chunk) {
      if (ended) return;
      chunks.push(chunk);
      notify();
    },
    end() {
      ended = true;
      notify();
    },
    iterable: {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          const next = chunks.shift();
          if (next) {
            yield next;
            continue;
          }
          if (ended) return;
          await new Promise<void>((r) => {
            wake = r;
          });
        }
      },
    },
  };
}
