import { type DataOf, type HbClient, HbError, type ListItem, queryChoices } from "@hosting-platform/sdk";
import { type Command, Option } from "commander";
import { progressReporter, waitOptions } from "./progress.ts";
import { CliExit, type Runtime } from "./runtime.ts";
import { withWait } from "./vps.ts";

// The statuses GET /orders filters on (order statuses and payment statuses), from the API's document.
const ORDER_STATUSES = queryChoices["/orders"].status;
type OrderStatusFilter = (typeof ORDER_STATUSES)[number];

type Service = DataOf<"/services/{id}">;
type Order = ListItem<"/orders">;
type Product = DataOf<"/products">["products"][number];

/** Where a new service's provisioning ends (or cannot go on). */
const SETTLED_STATUSES = new Set(["active", "provisioning_failed", "suspended", "terminated", "cancelled"]);

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Follows each service of a paid order until its provisioning ends, showing the build job's
 * progress while compute builds it.
 */
async function waitForServices(
  rt: Runtime,
  hb: HbClient,
  ids: string[],
  timeoutMs: number,
): Promise<Service[]> {
  const deadline = Date.now() + timeoutMs;
  const done: Service[] = [];
  for (const id of ids) {
    const progress = progressReporter(rt, `service ${id.slice(0, 8)}`);
    let lastStatus = "";
    try {
      for (;;) {
        const { data: service } = await hb.get("/services/{id}", { params: { path: { id } } });
        if (SETTLED_STATUSES.has(service.status)) {
          done.push(service);
          break;
        }
        if (Date.now() > deadline) {
          throw new HbError("TIMEOUT", `service ${id} is still ${service.status} after ${timeoutMs} ms`);
        }
        const { data } = await hb.get("/jobs", {
          params: { query: { resource: id, action: "build", limit: 1 } },
        });
        const build = data.jobs[0];
        if (build?.status === "running") {
          await hb.waitForJob(build.id, {
            timeoutMs: Math.max(1, deadline - Date.now()),
            intervalMs: 500,
            onProgress: (j) => progress.update(j),
          });
        } else {
          if (service.status !== lastStatus && !rt.errIsTTY)
            rt.err(`service ${id.slice(0, 8)} ${service.status}\n`);
          lastStatus = service.status;
          // Billing hands the paid service to compute on its next pass; nothing to watch yet.
          await pause(300);
        }
      }
    } finally {
      progress.done();
    }
  }
  return done;
}

export function registerOrders(program: Command, rt: Runtime): void {
  const products = program.command("products").description("The orderable catalogue");
  products
    .command("list")
    .description("products with their billing cycles and prices")
    .action(async (_opts, cmd: Command) => {
      const hb = await rt.client(cmd);
      const { data } = await hb.get("/products");
      rt.print(cmd).list<Product>(data.products, [
        { header: "ID", value: (p) => p.id },
        { header: "NAME", value: (p) => p.name },
        { header: "KIND", value: (p) => p.kind },
        { header: "CURRENCY", value: (p) => p.currency },
        { header: "CYCLES", value: (p) => p.billing_cycles },
      ]);
    });
  products
    .command("show")
    .description("one product: cycles, add-on options and the OS images an order accepts")
    .argument("<id>", "the product id")
    .action(async (id: string, _opts, cmd: Command) => {
      const hb = await rt.client(cmd);
      const { data } = await hb.get("/products/{id}", { params: { path: { id } } });
      rt.print(cmd).record(data);
    });

  const orders = program.command("orders").description("Place and read orders");

  withWait(
    orders
      .command("create")
      .description("order a product; settled from credit when the balance covers it")
      .requiredOption("--product <productId>", "the product (hb products list)")
      .option("--cycle <cycle>", "the billing cycle", "monthly")
      .option("--hostname <hostname>", "the new machine's hostname")
      .option("--image <osImageId>", "the operating system image (hb products show <id>)")
      .option(
        "--idempotency-key <key>",
        "repeat a call safely: the same key and order within 24 hours answers the first result",
      ),
  )
    .addHelpText(
      "after",
      "\nWith --wait, follows each new service until it is active (exit 0) or its provisioning failed (exit 3).",
    )
    .action(
      async (
        opts: {
          product: string;
          cycle: string;
          hostname?: string;
          image?: string;
          idempotencyKey?: string;
          wait?: boolean;
          timeout: string;
        },
        cmd: Command,
      ) => {
        const hb = await rt.client(cmd);
        const { data } = await hb.post("/orders", {
          body: {
            productId: opts.product,
            billingCycle: opts.cycle,
            ...(opts.hostname ? { hostname: opts.hostname } : {}),
            ...(opts.image ? { configOptions: { os_image_id: opts.image } } : {}),
          },
          headers: opts.idempotencyKey ? { "Idempotency-Key": opts.idempotencyKey } : {},
        });
        const print = rt.print(cmd);
        if (!opts.wait) {
          print.record(data);
          return;
        }
        if (!data.settled) {
          print.record(data);
          throw new CliExit(
            3,
            `order ${data.order.order_number} is not paid (${data.next_step}); nothing is provisioned until it is`,
          );
        }
        const services = await waitForServices(
          rt,
          hb,
          data.services.map((s) => s.id),
          waitOptions(opts.timeout),
        );
        print.record({ ...data, services });
        const failed = services.filter((s) => s.status !== "active");
        if (failed.length) {
          throw new CliExit(
            3,
            failed
              .map((s) => `service ${s.id} is ${s.status}${s.failure_reason ? `: ${s.failure_reason}` : ""}`)
              .join("\n"),
          );
        }
      },
    );

  orders
    .command("list")
    .description("the account's orders, newest first (all pages)")
    .addOption(
      new Option("--status <status>", "only orders in this order or payment status").choices(ORDER_STATUSES),
    )
    .action(async (opts: { status?: OrderStatusFilter }, cmd: Command) => {
      const hb = await rt.client(cmd);
      const rows: Order[] = [];
      for await (const o of hb.paginate("/orders", opts.status ? { status: opts.status } : {})) rows.push(o);
      rt.print(cmd).list(rows, [
        { header: "ID", value: (o) => o.id },
        { header: "NUMBER", value: (o) => o.order_number },
        { header: "STATUS", value: (o) => o.status },
        { header: "PAYMENT", value: (o) => o.payment_status },
        { header: "TOTAL", value: (o) => `${o.total} ${o.currency}` },
        { header: "CREATED", value: (o) => o.created_at },
      ]);
    });

  orders
    .command("show")
    .description("one order and the services it produced")
    .argument("<id>", "the order id")
    .action(async (id: string, _opts, cmd: Command) => {
      const hb = await rt.client(cmd);
      const { data } = await hb.get("/orders/{id}", { params: { path: { id } } });
      rt.print(cmd).record(data);
    });
}
