/**
 * Where a customer's request-log entries stand between the gateway and auth's table, for a test
 * that waited for one in vain to say why: stored but not shown, or still in JetStream (and then
 * whether auth's durable has it pending, delivered and unacked, or not yet asked for).
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { serviceSql } from "./service-db.ts";

export async function requestLogState(customerId: string): Promise<string> {
  const parts: string[] = [];
  const sql = serviceSql("auth");
  try {
    const [{ n }] = await sql<{ n: number }[]>`
      select count(*)::int as n from auth.request_log where customer_id = ${customerId}`;
    parts.push(`auth holds ${n} request-log entries of the customer`);
  } catch (err) {
    parts.push(`auth's request_log could not be read: ${String(err)}`);
  } finally {
    await sql.end();
  }
  const ns = process.env.HB_NS;
  if (!ns) return parts.join("; ");
  const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
  try {
    const jsm = await jetstreamManager(nc);
    const stream = `${ns.toUpperCase()}_REQLOG`;
    const s = await jsm.streams.info(stream);
    const c = await jsm.consumers.info(stream, "auth-request-log");
    parts.push(
      `${stream} last seq ${s.state.last_seq}; auth-request-log delivered ${c.delivered.stream_seq}, ` +
        `acked to ${c.ack_floor.stream_seq}, pending ${c.num_pending}, unacked ${c.num_ack_pending}, ` +
        `redelivered ${c.num_redelivered}, pull requests waiting ${c.num_waiting}`,
    );
  } catch (err) {
    parts.push(`JetStream could not be read: ${String(err)}`);
  } finally {
    await nc.close();
  }
  return parts.join("; ");
}
