/**
 * Retrying a partner order's payment moves money, as paying a document does, so it takes an
 * Idempotency-Key the same way the customer's money routes do (docs/architecture.md,
 * "Idempotency-Key"): a repeat with the key answers the first attempt's answer and charges
 * nothing; a new key is a new attempt. Before, the route ignored the header, so a careful client's
 * blind repeat after a lost answer was refused 409 although its first attempt had paid.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { addCredit, balanceOf, newPartner, newProduct, type Partner, signed } from "./helpers.ts";

const retry = (p: Partner, orderId: string, key?: string) =>
  signed(p, "POST", `/api/v1/reseller/orders/${orderId}/retry-payment`, undefined, {
    headers: key ? { "idempotency-key": key } : {},
  });

/** A credit order the partner could not cover: placed, unpaid, its payment failed. */
async function unpaidOrder(p: Partner, productId: string) {
  const r = await signed(p, "POST", "/api/v1/reseller/orders", {
    externalOrderId: `ext-${randomUUID()}`,
    paymentMode: "credit",
    items: [{ productId, billingCycle: "monthly" }],
  });
  assert.equal(r.status, 201, r.text);
  const one = await signed(p, "GET", `/api/v1/reseller/orders/${r.body.data.id}`);
  assert.equal(one.body.data.payment_status, "unpaid", one.text);
  return r.body.data.id as string;
}

describe("reseller: retry-payment with an Idempotency-Key", () => {
  it("a repeat with the same key answers the first answer and charges once; another key is a new attempt", async () => {
    const p = await newPartner();
    const acct = { customerId: p.customerId, ownerId: p.ownerId, key: p.key, keyId: "" };
    const product = await newProduct("vps", { monthly: "10.0000" });
    const orderId = await unpaidOrder(p, product.id);
    const other = await unpaidOrder(p, product.id);

    // Without credit the attempt fails; its key keeps that answer even once credit is there.
    const poor = randomUUID();
    const failed = await retry(p, orderId, poor);
    assert.equal(failed.status, 200, failed.text);
    assert.equal(failed.body.data.payment_status, "unpaid");
    await addCredit(acct, "25");
    const again = await retry(p, orderId, poor);
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.body, failed.body, "the first answer, not a new attempt");
    assert.equal(await balanceOf(p.key), 25, "nothing charged by the repeat");

    // A new key tries again and pays; its repeat is that answer, not 409, and charges nothing.
    const key = randomUUID();
    const paid = await retry(p, orderId, key);
    assert.equal(paid.status, 200, paid.text);
    assert.equal(paid.body.data.payment_status, "paid");
    assert.equal(await balanceOf(p.key), 15);
    const repeat = await retry(p, orderId, key);
    assert.equal(repeat.status, 200, repeat.text);
    assert.deepEqual(repeat.body, paid.body);
    assert.equal(await balanceOf(p.key), 15, "charged once");

    // Without a key (or with a new one) a paid order is refused as before.
    assert.equal((await retry(p, orderId)).status, 409);
    assert.equal((await retry(p, orderId, randomUUID())).status, 409);
    // The key names one request: on another order it is refused, and that order is not charged.
    const reused = await retry(p, other, key);
    assert.equal(reused.status, 400, reused.text);
    assert.equal(await balanceOf(p.key), 15);
  });
});
