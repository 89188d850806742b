import { Counter, Gauge, metricsRegistry, type Sql } from "@hb/platform";

/** Delivery attempts by outcome: delivered, retry (will be tried again), failed (gave up). */
export const deliveriesTotal = new Counter({
  name: "webhook_deliveries_total",
  help: "Webhook delivery attempts by outcome (delivered, retry, failed)",
  labelNames: ["outcome"] as const,
  registers: [metricsRegistry],
});

/** The queue depth is read from the database at scrape time: it is shared by every replica. */
export function registerQueueDepth(sql: Sql): void {
  new Gauge({
    name: "webhook_queue_depth",
    help: "Deliveries pending (waiting for their first attempt or a retry)",
    registers: [metricsRegistry],
    async collect() {
      const [row] = await sql<
        { n: number }[]
      >`select count(*)::int as n from deliveries where status = 'pending'`;
      this.set(row?.n ?? 0);
    },
  });
}
