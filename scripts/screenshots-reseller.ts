/**
 * The reseller panel's photos for `npm run screenshots`: the demo partner places an order for one
 * of its customers through the panel (cart, then Reseller → Orders), while its live events page
 * is open, so the photos show the partner's customers' orders and services and the event stream.
 */
import type { Locator, Page } from "playwright-core";

type ShotWhen = (page: Page, name: string, ready: Locator) => Promise<void>;

export async function resellerShots(page: Page, base: string, shotWhen: ShotWhen): Promise<void> {
  // Events raised before the stream page opens are not shown on it: open it first, in its own tab.
  const stream = await page.context().newPage();
  await stream.goto(`${base}/portal/reseller/stream`);
  await stream.getByText("Listening: new events appear below").waitFor({ timeout: 30_000 });

  await page.goto(`${base}/portal/cart`);
  await page
    .getByRole("link", { name: /^Add .* to the cart$/ })
    .first()
    .click();
  await page.getByLabel("Hostname").fill("shop-42.example.com");
  await page.getByRole("button", { name: "Add to cart" }).click();
  await page.goto(`${base}/portal/reseller/orders`);
  // The orders page also has a search by order id: the placing form is the POST one.
  const place = page.locator('form[method="post"][action="/portal/reseller/orders"]');
  await place.getByLabel("Your order id").fill("SHOP-1042");
  await place.getByLabel("Your customer's id").fill("cust-5");
  await place.getByRole("button", { name: "Place the order for your customer" }).click();

  await shotWhen(stream, "portal-reseller-stream", stream.locator("#stream-events li"));
  await stream.close();
  // The order's service is built a moment later; the list says so once it is active.
  const deadline = Date.now() + 30_000;
  do {
    await page.goto(`${base}/portal/reseller/services`);
  } while (!(await page.getByText(/active/i).count()) && Date.now() < deadline);
  await shotWhen(page, "portal-reseller-services", page.getByText("shop-42.example.com"));
  await page.goto(`${base}/portal/reseller/orders`);
  await shotWhen(page, "portal-reseller-orders", page.getByText("SHOP-1042"));
  await page.goto(`${base}/portal/reseller`);
  await shotWhen(page, "portal-reseller", page.getByRole("heading", { name: "Deliveries" }));
}
