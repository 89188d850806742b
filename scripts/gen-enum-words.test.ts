import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { ServiceStatusSchema } from "@hb/contracts/hb/billing/v1/common_pb";
import { enumWord } from "@hb/platform/enum-words";
import { SERVICE_STATUS_WORDS } from "@hb/platform/enum-words.gen";
import { ENUM_WORDS_FILE, enumWordsSource } from "./gen-enum-words.ts";

describe("the enum words generated from the contracts", () => {
  it("are what the descriptors say now (run npm run gen after changing an enum in proto/)", async () => {
    assert.equal(readFileSync(ENUM_WORDS_FILE, "utf8"), await enumWordsSource());
  });

  it("are each value's word, in the contract's order, UNSPECIFIED left out", () => {
    assert.deepEqual(
      SERVICE_STATUS_WORDS,
      ServiceStatusSchema.values
        .filter((v) => v.number !== 0)
        .map((v) => enumWord(ServiceStatusSchema, v.number)),
    );
    assert.equal(SERVICE_STATUS_WORDS[0], "pending_payment");
  });

  it("writes only the tables another file names: an unused one is dead code", async () => {
    const source = await enumWordsSource();
    const written = [...source.matchAll(/export const (\w+_WORDS)/g)].map((m) => m[1]);
    assert.ok(written.includes("SERVICE_STATUS_WORDS"));
    // Nothing uses the delivery statuses' words (webhooks maps its own enum), so no table is written.
    assert.ok(!written.includes("DELIVERY_STATUS_WORDS"), written.join(" "));
  });
});
