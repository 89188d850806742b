import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { KeyEntrySchema, WatchKeysResponseSchema } from "@hb/contracts/hb/auth/v1/key_distribution_pb";
import { KeyTable } from "../key-table.ts";
import { keyCloseReason } from "./key-hold.ts";
import type { ConsoleGrant } from "./tickets.ts";

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 27, 12);
const dayStart = (ms: number) => ({ seconds: BigInt(Math.floor(ms / DAY) * 86_400), nanos: 0 });

/** A key table in step with auth holding the given keys of customer c1. */
function tableWith(entries: Parameters<typeof create<typeof KeyEntrySchema>>[1][], serving = true) {
  const table = new KeyTable();
  table.apply(
    create(WatchKeysResponseSchema, {
      item: {
        case: "snapshot",
        value: {
          settings: { customerApiEnabled: true },
          entries: entries.map((e) => create(KeyEntrySchema, { customerId: "c1", ...e })),
          leaseMs: 1000,
        },
      },
    }),
  );
  return { table, serving: () => serving };
}

const grant = (over: Partial<ConsoleGrant> = {}): ConsoleGrant => ({
  customerId: "c1",
  personId: "p1",
  keyId: "k1",
  permissions: [],
  isOwner: true,
  currency: "EUR",
  serviceId: "s1",
  via: "api",
  ...over,
});

describe("an API console's key", () => {
  it("holds while the key works, through its last day", () => {
    assert.equal(keyCloseReason(tableWith([{ prefix: "aaaa", keyId: "k1" }]), grant(), NOW), undefined);
    const lastDayToday = tableWith([{ prefix: "aaaa", keyId: "k1", expiresOn: dayStart(NOW) }]);
    assert.equal(keyCloseReason(lastDayToday, grant(), NOW), undefined);
  });

  it("closes it once the key is revoked, gone from the table, or past its last day", () => {
    const revoked = tableWith([{ prefix: "aaaa", keyId: "k1", revoked: true }]);
    assert.equal(keyCloseReason(revoked, grant(), NOW), "key-revoked");
    const gone = tableWith([{ prefix: "bbbb", keyId: "k2" }]);
    assert.equal(keyCloseReason(gone, grant(), NOW), "key-revoked");
    const lastDayYesterday = tableWith([{ prefix: "aaaa", keyId: "k1", expiresOn: dayStart(NOW - DAY) }]);
    assert.equal(keyCloseReason(lastDayYesterday, grant(), NOW), "key-expired");
  });

  it("says nothing for a portal console, without a key table, or while the table is out of step", () => {
    const revoked = [{ prefix: "aaaa", keyId: "k1", revoked: true }];
    assert.equal(keyCloseReason(tableWith(revoked), grant({ via: "portal", keyId: "" }), NOW), undefined);
    assert.equal(keyCloseReason(undefined, grant(), NOW), undefined);
    assert.equal(keyCloseReason(tableWith(revoked, false), grant(), NOW), undefined);
  });
});
