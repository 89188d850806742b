/**
 * The pause between a polling loop's passes, cut short by a notification (PostgreSQL NOTIFY, a
 * connection coming up). A notification that arrives while a pass runs is kept: the next pause
 * ends at once, since the pass may have read its rows before the notifying transaction committed.
 */
export interface WakeablePause {
  /** Ends the current pause now, or the next one as soon as it starts. */
  wake(): void;
  /** Resolves after `ms` (to false), or sooner when woken (to true). */
  pause(ms: number): Promise<boolean>;
}

export function wakeablePause(): WakeablePause {
  let woken = false;
  let cut: (() => void) | undefined;
  return {
    wake() {
      woken = true;
      cut?.();
    },
    pause(ms) {
      return new Promise<boolean>((resolve) => {
        const end = (byWake: boolean) => {
          clearTimeout(timer);
          cut = undefined;
          woken = false;
          resolve(byWake);
        };
        const timer = setTimeout(() => end(woken), woken ? 0 : ms);
        cut = () => end(true);
      });
    },
  };
}
