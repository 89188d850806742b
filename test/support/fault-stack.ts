/**
 * One supervised private stack (as `npm start` runs it) for the suites that kill services
 * (test/faults.test.ts): they would disturb every other file on the shared stack, but not each
 * other, since each runs after the last and the supervisor starts what they kill again. Started
 * by the first suite that asks, closed by test/faults.test.ts after the last.
 */
import { type OwnStack, ownStack } from "../own-stack.ts";

let started: Promise<OwnStack> | undefined;
/** Every service the supervisor started again after it exited on its own, in order. */
export const supervisorRestarts: string[] = [];

export function faultStack(): Promise<OwnStack> {
  started ??= ownStack("faults", { WEBHOOK_PASS_INTERVAL_MS: "200" }, undefined, {
    supervise: true,
    onRestart: (name) => supervisorRestarts.push(name),
  });
  return started;
}

export async function closeFaultStack(): Promise<void> {
  const s = await started?.catch(() => undefined);
  started = undefined;
  await s?.close();
}
