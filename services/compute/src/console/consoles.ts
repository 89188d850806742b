import { randomUUID } from "node:crypto";
import type { HandlerContext } from "@connectrpc/connect";
import type {
  CheckConsoleRequest,
  OpenConsoleRequest,
  OpenConsoleResponse,
  WriteConsoleRequest,
} from "@hb/contracts/hb/compute/v1/console_pb";
import { apiError, type Logger, type Sql } from "@hb/platform";
import { callerId } from "../context.ts";
import type { Drivers, ProviderDriver } from "../driver.ts";
import { hasInstance, type MachineRow, ownMachine } from "../machines.ts";
import { type ConsoleSize, DEFAULT_SIZE, type MachineConsole } from "./types.ts";

/** Why a console closed, as console_sessions.close_reason and the stream's last message say it. */
export type CloseReason =
  | "ended"
  | "suspended"
  | "terminated"
  | "stopped"
  | "shutdown"
  // the gateway's (WriteConsole's close): the session or the key that held the console open ended
  | GatewayCloseReason;
type GatewayCloseReason = "session-ended" | "not-permitted" | "key-revoked" | "key-expired";

interface OpenConsole {
  customerId: string;
  serviceId: string;
  console: MachineConsole;
  close(reason: CloseReason): void;
}

type Event = Omit<OpenConsoleResponse, "$typeName" | "$unknown">["item"];

/**
 * Web consoles (ComputeConsoleService, console.proto): opens a running VPS's console on its
 * driver, relays it to the gateway, records who opened it (console_sessions) and closes it when
 * its service stops being usable. A console lives in the compute process that opened it: the
 * gateway's writes reach it over the same channel as its stream (docs/architecture.md, "Web
 * console").
 */
export function createConsoles(sql: Sql, drivers: Drivers, log: Logger, recheckMs = 5_000) {
  const open = new Map<string, OpenConsole>();

  /** The caller's VPS and its driver, when a console may be opened on it now. */
  async function usable(
    customerId: string,
    serviceId: string,
  ): Promise<{ m: MachineRow; driver: ProviderDriver }> {
    const m = await ownMachine(sql, customerId, serviceId, "vps");
    if (m.service_status === "suspended" || m.service_status === "terminated") {
      throw apiError("FORBIDDEN", `The service is ${m.service_status}`);
    }
    if (!hasInstance(m)) throw apiError("NOT_FOUND", "The machine does not exist or its build failed");
    if (m.state !== "running") {
      throw apiError("CONFLICT", `The VPS is ${m.state}; its console opens while it is running`);
    }
    const driver = drivers[m.provider];
    if (!driver?.console) throw apiError("ACTION_NOT_ALLOWED", "This VPS's provider has no console");
    return { m, driver };
  }

  /** Closes the open consoles of these services (each console's stream then ends with the reason). */
  function closeServices(serviceIds: Iterable<string>, reason: CloseReason): void {
    const ids = new Set(serviceIds);
    for (const c of open.values()) if (ids.has(c.serviceId)) c.close(reason);
  }

  // A suspension or termination reaches one compute replica's event consumer, and a machine can
  // stop from inside: every replica rereads its own consoles' machines now and then, so each
  // console closes within this interval wherever it lives.
  const timer = setInterval(() => {
    if (open.size === 0) return;
    const ids = [...new Set([...open.values()].map((c) => c.serviceId))];
    sql<Pick<MachineRow, "service_id" | "service_status" | "state" | "has_instance">[]>`
      select service_id, service_status, state, has_instance from machines where service_id = any(${ids}::uuid[])`
      .then((rows) => {
        for (const r of rows) {
          if (r.service_status === "suspended" || r.service_status === "terminated")
            closeServices([r.service_id], r.service_status);
          else if (!r.has_instance || r.state !== "running") closeServices([r.service_id], "stopped");
        }
      })
      .catch((err: unknown) => log.warn("console recheck failed", { err }));
  }, recheckMs);
  timer.unref();

  async function* openConsole(req: OpenConsoleRequest, ctx: HandlerContext): AsyncGenerator<{ item: Event }> {
    const customerId = callerId(req.caller);
    const { m, driver } = await usable(customerId, req.serviceId);
    const size: ConsoleSize = req.cols && req.rows ? { cols: req.cols, rows: req.rows } : DEFAULT_SIZE;
    let mc: MachineConsole;
    try {
      mc = await (driver.console as NonNullable<ProviderDriver["console"]>)(m, size);
    } catch (err) {
      log.warn("console could not be opened", { serviceId: m.service_id, provider: m.provider, err });
      throw apiError("PROVIDER_ERROR", "The machine's console could not be opened; try again in a moment");
    }
    const id = randomUUID();
    let reason: CloseReason | undefined;
    const entry: OpenConsole = {
      customerId,
      serviceId: m.service_id,
      console: mc,
      close(why) {
        reason ??= why;
        mc.close();
      },
    };
    try {
      await sql`insert into console_sessions (id, service_id, customer_id, person_id, key_id, via, provider)
        values (${id}, ${m.service_id}, ${customerId}, ${req.caller?.personId ?? ""}, ${req.caller?.keyId ?? ""},
                ${req.via}, ${m.provider})`;
    } catch (err) {
      // No console without its audit record.
      mc.close();
      throw err;
    }
    open.set(id, entry);
    const gone = () => entry.close("ended");
    ctx.signal.addEventListener("abort", gone, { once: true });
    try {
      yield { item: { case: "opened", value: { consoleId: id, provider: m.provider } } as Event };
      for await (const chunk of mc.output) {
        yield { item: { case: "output", value: chunk } as Event };
      }
      yield { item: { case: "closed", value: { reason: reason ?? "ended" } } as Event };
    } finally {
      ctx.signal.removeEventListener("abort", gone);
      open.delete(id);
      mc.close();
      await sql`update console_sessions set closed_at = now(), close_reason = ${reason ?? "ended"}
        where id = ${id}`.catch((err: unknown) => log.warn("console close not recorded", { id, err }));
    }
  }

  return {
    closeServices,
    /** Closes every console (shutdown): their streams end, and their records say why. */
    stop() {
      clearInterval(timer);
      for (const c of open.values()) c.close("shutdown");
    },
    handlers: {
      async checkConsole(req: CheckConsoleRequest) {
        const { m } = await usable(callerId(req.caller), req.serviceId);
        return { provider: m.provider };
      },
      openConsole,
      async writeConsole(req: WriteConsoleRequest) {
        const c = open.get(req.consoleId);
        // Another customer's console is indistinguishable from one that is not open.
        if (!c || c.customerId !== callerId(req.caller)) throw apiError("NOT_FOUND", "No such open console");
        if (req.cols && req.rows) c.console.resize({ cols: req.cols, rows: req.rows });
        if (req.input.length > 0) c.console.write(req.input);
        // The proto's validation admits only the gateway's reasons.
        if (req.close) c.close(req.close as GatewayCloseReason);
        return {};
      },
    },
  };
}

export type Consoles = ReturnType<typeof createConsoles>;
