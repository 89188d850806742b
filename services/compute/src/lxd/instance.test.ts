import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type LxdClient, LxdError, type LxdOperation } from "./client.ts";
import { submitDelete } from "./instance.ts";

const busy = () =>
  new LxdError(
    'Failed to create instance delete operation: Instance is busy running a "stop" operation',
    400,
  );

/** An instance that runs, whose force stop takes `stopWaits` waits to end and whose delete LXD refuses busy `refusals` times. */
function fakeLxd(stopWaits: number, refusals: number) {
  const asked: string[] = [];
  let waits = 0;
  const client: LxdClient = {
    endpoint: { name: "fake", url: "unix:///fake" } as LxdClient["endpoint"],
    async get<T>() {
      return { name: "hb-x", status: "Running" } as T;
    },
    async submit(method, path) {
      asked.push(`${method} ${path}`);
      if (method === "DELETE" && refusals-- > 0) throw busy();
      return method === "DELETE" ? "delete-op" : "stop-op";
    },
    async send() {
      return "";
    },
    async operation(id) {
      asked.push(`wait ${id}`);
      const running = id === "stop-op" && ++waits <= stopWaits;
      return { id, status: running ? "Running" : "Success", err: "" } as LxdOperation;
    },
    async download() {},
    async upload() {
      return "";
    },
  };
  return { client, asked };
}

describe("deleting an instance: stopped first, another operation waited out", () => {
  it("waits for its stop to end and asks again a delete LXD refuses busy, when given patience", async () => {
    const lxd = fakeLxd(2, 2);
    assert.equal(await submitDelete(lxd.client, "hb-x", 30_000), "delete-op");
    assert.deepEqual(lxd.asked, [
      "PUT /1.0/instances/hb-x/state",
      "wait stop-op",
      "wait stop-op",
      "wait stop-op",
      "DELETE /1.0/instances/hb-x",
      "DELETE /1.0/instances/hb-x",
      "DELETE /1.0/instances/hb-x",
    ]);
  });

  it("leaves a busy refusal to its caller without patience (a build's delete step waits it out across ticks)", async () => {
    const lxd = fakeLxd(0, 1);
    await assert.rejects(submitDelete(lxd.client, "hb-x"), /Instance is busy running/);
  });

  it("gives up once its patience has passed", async () => {
    const lxd = fakeLxd(0, 100);
    await assert.rejects(submitDelete(lxd.client, "hb-x", 1_500), /Instance is busy running/);
    assert.ok(lxd.asked.filter((a) => a.startsWith("DELETE")).length <= 3, lxd.asked.join("\n"));
  });
});
