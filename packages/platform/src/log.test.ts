import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { generateKey } from "./api-key.ts";
import { redact } from "./log.ts";

describe("log redaction", () => {
  it("masks API keys and signing secrets, keeping the prefix for support", () => {
    const { full, prefix } = generateKey();
    const line = redact(`auth failed for ${full} with whsec_Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4OTA`);
    assert.ok(!line.includes(full.split("_")[2]));
    assert.ok(line.includes(`hbk_${prefix}_[redacted]`));
    assert.ok(line.includes("whsec_[redacted]"));
  });
});
