/** The bench's webhooks part (scripts/bench.ts): events through JetStream and the webhooks service to a receiver. */
import { spawn } from "node:child_process";
import path from "node:path";
import { AuthService } from "@hb/contracts/hb/auth/v1/auth_pb";
import { AuthStaffService } from "@hb/contracts/hb/auth/v1/auth_staff_pb";
import { WebhooksStaffService } from "@hb/contracts/hb/webhooks/v1/webhooks_staff_pb";
import { backendClient } from "@hb/platform";
import postgres from "postgres";
import type { Stack } from "../stack.ts";
import { commandTicks, cpuTicks, machineBusyTicks } from "./scratch-stack.ts";
import { adminIdentity } from "./seed.ts";

export interface WebhookRun {
  text: string;
  events: number;
  delivered: number;
  /** Deliveries a second from the first publish to the last delivery. */
  throughput: number;
  p99Ms: number;
}

/**
 * `events` events across 100 partners through JetStream, the webhooks service and a local
 * receiver, offered at `rate` a second (0: as fast as the publisher goes, a burst). `tag` keeps
 * the partners of two runs on one stack apart.
 */
export async function webhookBench(
  stack: Stack,
  env: Record<string, string>,
  run: { events: number; rate: number; tag: string },
): Promise<WebhookRun> {
  const { create, toBinary } = await import("@bufbuild/protobuf");
  const { timestampNow } = await import("@bufbuild/protobuf/wkt");
  const { EventSchema } = await import("@hb/contracts/hb/events/v1/events_pb");
  const { ServiceStatus } = await import("@hb/contracts/hb/billing/v1/common_pb");
  const { PartnerStatus } = await import("@hb/contracts/hb/auth/v1/partners_pb");
  const { WebhooksService } = await import("@hb/contracts/hb/webhooks/v1/webhooks_pb");
  const { newId, streams } = await import("@hb/platform");
  const { jetstream, jetstreamManager } = await import("@nats-io/jetstream");
  const { connect } = await import("@nats-io/transport-node");
  const EVENTS = run.events;
  // Events offered per second (issue 31 asks 3,000/s held); 0 publishes as fast as it can.
  const RATE = run.rate;
  const PARTNERS = 100;
  const published = new Map<string, number>();
  // Each event's stream position, to place it against the webhooks consumer's progress.
  const seqOf = new Map<string, number>();
  const partnerOf = new Map<string, string>();
  const arrived = new Map<string, number>();
  const receiver = spawn(process.execPath, [path.join(import.meta.dirname, "webhook-receiver.ts")], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = (await import("node:readline")).createInterface({ input: receiver.stdout! });
  const port = await new Promise<number>((resolve) => {
    lines.once("line", (l) => {
      resolve(Number(l));
      lines.on("line", (arrival) => {
        const [id, at] = arrival.split(" ");
        arrived.set(id, Number(at));
      });
    });
  });
  const auth = backendClient("grpc-js", [AuthService, AuthStaffService], env.AUTH_ADDR, {
    timeoutMs: 10_000,
    tls: adminIdentity(env),
  });
  const webhooks = backendClient("grpc-js", [WebhooksService, WebhooksStaffService], env.WEBHOOKS_ADDR, {
    timeoutMs: 10_000,
    tls: adminIdentity(env),
  });
  await webhooks.client.updateProgrammeSettings({ addAllowedDestinations: [`127.0.0.1:${port}`] });
  const partners: string[] = [];
  for (let i = 0; i <= PARTNERS; i++) {
    const { customer } = await auth.client.createCustomer({
      name: `P${i} ${run.tag}`,
      email: `p${i}-${run.tag}@bench.test`,
      currency: "EUR",
    });
    await auth.client.createPartner({ customerId: customer!.id, status: PartnerStatus.ACTIVE });
    await webhooks.client.setWebhookUrl({
      partnerId: customer!.id,
      url: `http://127.0.0.1:${port}/${i === PARTNERS ? "hang" : "hook"}`,
    });
    partners.push(customer!.id);
  }
  const hanging = partners.pop()!;
  auth.close();
  webhooks.close();
  const nc = await connect({ servers: env.NATS_URL ?? process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
  const js = jetstream(nc);
  const subject = `${env.HB_NS}.events.service.suspended`;
  const publish = async (partnerId: string, serviceId: string) => {
    const event = create(EventSchema, {
      id: newId(),
      type: "service.suspended",
      occurredAt: timestampNow(),
      partnerId,
      payload: { case: "service", value: { serviceId, status: ServiceStatus.SUSPENDED, hostname: "h" } },
    });
    const ack = await js.publish(subject, toBinary(EventSchema, event), { msgID: event.id });
    seqOf.set(serviceId, ack.seq);
    partnerOf.set(serviceId, partnerId);
  };
  // The webhooks consumer's progress every 25 ms: the last position handed to it (pulled) and its
  // ack floor (every event through it stored as a delivery: a batch is acked after its insert).
  // Its 40 requests a second count in the publisher's and NATS's CPU below (a few µs a delivery).
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  const progress: { at: number; pulled: number; stored: number }[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const info = await jsm.consumers
        .info(streams(env.HB_NS).events.name, "webhooks-deliveries")
        .catch(() => undefined);
      if (info)
        progress.push({
          at: Date.now(),
          pulled: info.delivered.stream_seq,
          stored: info.ack_floor.stream_seq,
        });
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  for (let i = 0; i < 20; i++) await publish(hanging, newId()); // a partner whose endpoint hangs
  // CPU from the first publish to the last arrival: the machine's (every process, PostgreSQL and
  // NATS included) and the processes of the pipeline, per delivery.
  const cpuPids = {
    webhooks: stack.procs.get("webhooks")!.pid!,
    // asked for each partner's profile before its deliveries go out
    auth: stack.procs.get("auth")!.pid!,
    compute: stack.procs.get("compute")!.pid!,
    receiver: receiver.pid!,
    "bench (publisher)": process.pid,
  };
  const cpuBefore = Object.fromEntries(Object.entries(cpuPids).map(([k, pid]) => [k, cpuTicks(pid)]));
  const machineBefore = machineBusyTicks();
  const serversBefore = { postgres: commandTicks("postgres"), "nats-server": commandTicks("nats-server") };
  // What PostgreSQL did per delivery, free of the machine's other load: the stack database's
  // transactions and the rows webhooks wrote (each insert or update is one tuple version).
  const pg = postgres(env.DATABASE_URL, { max: 1, onnotice: () => {} });
  const pgWork = async () => {
    await pg`select pg_stat_force_next_flush()`.catch(() => {});
    const [x] = await pg<{ xacts: string }[]>`select (xact_commit + xact_rollback)::text as xacts
      from pg_stat_database where datname = current_database()`;
    const tables = await pg<{ relname: string; written: string }[]>`
      select relname, (n_tup_ins + n_tup_upd)::text as written from pg_stat_all_tables
      where schemaname = 'webhooks' and relname in ('deliveries', 'partner_queues')`;
    return {
      xacts: Number(x.xacts),
      ...Object.fromEntries(tables.map((t) => [t.relname, Number(t.written)])),
    } as Record<string, number>;
  };
  const pgBefore = await pgWork();
  const start = Date.now();
  const batch: Promise<void>[] = [];
  for (let i = 0; i < EVENTS; i++) {
    // Offered at RATE events/s (0: as fast as the publisher goes), in steps of 10 ms.
    if (RATE > 0 && i % Math.max(1, RATE / 100) === 0) {
      const due = start + (i / RATE) * 1000;
      if (due > Date.now()) {
        await Promise.all(batch.splice(0));
        await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
      }
    }
    const id = newId();
    published.set(id, Date.now());
    batch.push(publish(partners[i % PARTNERS], id));
    if (batch.length >= 200) await Promise.all(batch.splice(0));
  }
  await Promise.all(batch);
  const publishedIn = Date.now() - start;
  const until = Date.now() + 180_000;
  while (arrived.size < EVENTS && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
  sampling = false;
  await sampler;
  const perDelivery = (ticks: number) => Math.round((ticks * 10_000) / Math.max(1, arrived.size));
  const cpu = {
    ...Object.fromEntries(
      Object.entries(cpuPids).map(([k, pid]) => [k, perDelivery(cpuTicks(pid) - cpuBefore[k])]),
    ),
    postgres: perDelivery(commandTicks("postgres") - serversBefore.postgres),
    "nats-server": perDelivery(commandTicks("nats-server") - serversBefore["nats-server"]),
    "whole machine": perDelivery(machineBusyTicks() - machineBefore),
  };
  // A backend reports its statistics at most once a second while busy, and within 10 s once idle.
  await new Promise((r) => setTimeout(r, 11_000));
  const pgAfter = await pgWork();
  await pg.end();
  const pgPer = (k: string) => ((pgAfter[k] ?? 0) - (pgBefore[k] ?? 0)) / Math.max(1, arrived.size);
  await nc.close();
  receiver.kill("SIGTERM");
  const lat = [...arrived.entries()].map(([id, t]) => t - published.get(id)!).sort((a, b) => a - b);
  const pctOf = (xs: number[], p: number) =>
    xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;
  const pct = (p: number) => pctOf(lat, p);
  // Where the latency is: when the consumer was first seen past each event's position (pulled),
  // when its ack floor was (stored), and the arrival, each to the sampler's 25 ms.
  const firstPast = (seq: number, key: "pulled" | "stored") => {
    let lo = 0;
    let hi = progress.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (progress[mid][key] >= seq) hi = mid;
      else lo = mid + 1;
    }
    return progress[lo]?.at;
  };
  const stages = {
    "publish → pulled": [] as number[],
    "pulled → stored": [] as number[],
    "stored → arrival": [] as number[],
  };
  // A partner's deliveries go one after another (spec: attempted in creation order, the queue
  // stopping at a failure), so a partner's rate is bounded by one delivery's turn: the gap between
  // two arrivals of the same partner when the second was already stored as the first arrived.
  const byPartner = new Map<string, { at: number; storedAt: number }[]>();
  for (const [id, at] of arrived) {
    const seq = seqOf.get(id);
    const partner = partnerOf.get(id);
    if (seq === undefined || partner === undefined) continue;
    const pulledAt = firstPast(seq, "pulled");
    const storedAt = firstPast(seq, "stored");
    if (pulledAt === undefined || storedAt === undefined) continue;
    stages["publish → pulled"].push(pulledAt - published.get(id)!);
    stages["pulled → stored"].push(storedAt - pulledAt);
    stages["stored → arrival"].push(at - storedAt);
    const list = byPartner.get(partner) ?? [];
    list.push({ at, storedAt });
    byPartner.set(partner, list);
  }
  const turns: number[] = [];
  for (const list of byPartner.values()) {
    list.sort((a, b) => a.at - b.at);
    for (let k = 1; k < list.length; k++)
      if (list[k].storedAt <= list[k - 1].at) turns.push(list[k].at - list[k - 1].at);
  }
  turns.sort((a, b) => a - b);
  const stageText = Object.entries(stages)
    .map(([k, xs]) => {
      xs.sort((a, b) => a - b);
      return `${k} p50 ${pctOf(xs, 50)} ms, p99 ${pctOf(xs, 99)} ms`;
    })
    .join("; ");
  const meanTurn = turns.reduce((a, b) => a + b, 0) / Math.max(1, turns.length);
  const turnText = `one partner's turn per delivery while its queue was waiting (${turns.length.toLocaleString("en")} turns): p50 ${pctOf(turns, 50)} ms, p90 ${pctOf(turns, 90)} ms, mean ${meanTurn.toFixed(1)} ms, so one partner at most about ${Math.round(1000 / Math.max(1, meanTurn))} deliveries/s${RATE > 0 ? ` against the ${Math.round(RATE / PARTNERS)}/s offered each` : ""}`;
  const last = Math.max(...arrived.values());
  const offered = RATE > 0 ? `offered at ${RATE.toLocaleString("en")} events/s and ` : "";
  const text = `${EVENTS.toLocaleString("en")} events across ${PARTNERS} partners (plus one partner whose endpoint never answers, with the default 30 s deadline), ${offered}published to JetStream in ${publishedIn} ms (${Math.round(EVENTS / (publishedIn / 1000)).toLocaleString("en")} events/s), partners' queues leased as their events are stored (a pass every 1 s besides), to a receiver on loopback (a process of its own):

| Delivered | Throughput (first publish → last delivery) | p50 event → delivery | p99 event → delivery |
|---|---|---|---|
| ${arrived.size.toLocaleString("en")} of ${EVENTS.toLocaleString("en")} | ${Math.round(arrived.size / ((last - start) / 1000)).toLocaleString("en")} deliveries/s | ${pct(50)} ms | ${pct(99)} ms |

CPU per delivery from the first publish to the last arrival (µs): ${Object.entries(cpu)
    .map(([k, v]) => `${k} ${v.toLocaleString("en")}`)
    .join(", ")} (the machine's figure includes PostgreSQL, NATS and every other process).

PostgreSQL per delivery (the stack's database only): ${pgPer("xacts").toFixed(2)} transactions; rows written by webhooks ${pgPer("deliveries").toFixed(2)} in deliveries${"partner_queues" in pgAfter ? `, ${pgPer("partner_queues").toFixed(2)} in partner_queues` : ""} (each insert or update is one tuple version).

Where the latency is (the webhooks consumer's progress read every 25 ms): ${stageText}; ${turnText}.

Latency is measured from publishing the event (the outbox relay's step) to its first arrival at the receiver; it includes the wait for the event to be stored and its partner's queue claimed. The hanging partner's deliveries time out after 30 s each without delaying the other partners, which are served concurrently.`;
  process.stdout.write(`${text}\n`);
  return {
    text,
    events: EVENTS,
    delivered: arrived.size,
    throughput: Math.round(arrived.size / ((last - start) / 1000)),
    p99Ms: pct(99),
  };
}
