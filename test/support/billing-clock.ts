/**
 * Billing's clock on a private stack started with BILLING_CLOCK_CONTROL=true, moved through the
 * staff RPC: what the clock-moving suites (billing-cycle, money-holes, machine-records)
 * read and move it with. A move runs billing's due pass.
 */
import { timestampDate } from "@bufbuild/protobuf/wkt";

/** What moving the clock needs of billing's staff client. */
interface ClockDesk {
  adminAdvanceClock(req: { seconds: bigint }): Promise<{ now?: Parameters<typeof timestampDate>[0] }>;
}

export function billingClock(billing: () => ClockDesk) {
  /** Billing's time now. */
  const now = async () => timestampDate((await billing().adminAdvanceClock({ seconds: 0n })).now!);
  /** Moves the clock to `at` (or just past it); nothing when it is already there. */
  const advanceTo = async (at: Date) => {
    const seconds = Math.ceil((at.getTime() - (await now()).getTime()) / 1000) + 1;
    if (seconds > 0) await billing().adminAdvanceClock({ seconds: BigInt(seconds) });
  };
  /** Moves the clock by `days`, in steps of at most 10 days: the due pass runs as it does day by day. */
  const advanceDays = async (days: number) => {
    for (let left = days; left > 0; left -= 10)
      await billing().adminAdvanceClock({ seconds: BigInt(Math.round(Math.min(10, left) * 86_400)) });
  };
  return { now, advanceTo, advanceDays };
}
