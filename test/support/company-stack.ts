/**
 * One private stack for the suites that change company-wide settings (the Customer API switch,
 * the modules, the hourly and key limits): they would disturb every other file on the shared
 * stack, but not each other, since each runs after the last and puts back what it changed.
 * Started by the first suite that asks, closed by test/company-wide.test.ts after the last.
 */
import { type OwnStack, ownStack } from "../own-stack.ts";

let started: Promise<OwnStack> | undefined;

export function companyStack(): Promise<OwnStack> {
  started ??= ownStack("company");
  return started;
}

export async function closeCompanyStack(): Promise<void> {
  const s = await started?.catch(() => undefined);
  started = undefined;
  await s?.close();
}
