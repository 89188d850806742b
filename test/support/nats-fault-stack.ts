/**
 * One private stack on a NATS server of its own, for the suites that take NATS away: started
 * while that server is down (what the start-up outage suite checks; it then starts NATS), and
 * used after it by the restart suite. Started by the first suite that asks, closed by
 * test/faults.test.ts after the last.
 */
import { type OwnStack, ownStack } from "../own-stack.ts";
import { type PrivateServer, privateNats } from "./private-servers.ts";

export interface NatsFaultStack {
  nats: PrivateServer;
  s: OwnStack;
}

let started: Promise<NatsFaultStack> | undefined;

export function natsFaultStack(): Promise<NatsFaultStack> {
  started ??= (async () => {
    const nats = await privateNats();
    await nats.kill();
    try {
      const s = await ownStack("natsfaults", {
        NATS_URL: nats.url,
        WEBHOOK_PASS_INTERVAL_MS: "200",
        SIM_BUILD_MS: "100",
      });
      return { nats, s };
    } catch (err) {
      await nats.close();
      throw err;
    }
  })();
  return started;
}

export async function closeNatsFaultStack(): Promise<void> {
  const f = await started?.catch(() => undefined);
  started = undefined;
  await f?.s.close();
  await f?.nats.close();
}
