/**
 * Every write of the admin panel, declared once (issue 29 §1), as `route.ts` declares the API's
 * routes: its path and method, the staff RPC it performs, the staff permission it needs, the
 * request schema its form is read with, its form kind (every write form carries the one-time form
 * token: admin-once.ts), the audit entries it writes and where it goes after.
 *
 * Routes are registered only from this table (`actionRoutes` in admin-act.ts), so a write cannot
 * skip its permission, its token or its schema; rendering asks the same table whether to draw a
 * control (`allowed`), so staff never see a control that would answer 403. A test walks the table
 * (test/admin-actions.test.ts): each action acts once per token, writes its audit row, and is drawn
 * only for staff allowed it.
 */

import type { StaffPermission } from "@hb/platform";
import type { Response } from "express";
import { z } from "zod";
import { sessionOf } from "./session.ts";

/** A text field of a form: absent is empty; bounded like the API's strings. */
const text = (max = 1000) => z.string().max(max).default("");
/** A checkbox: "on" (or the value it was given) when ticked, absent when not. */
const box = z.string().max(10).optional();
/** Checked permission boxes: none, one or several `permissions` fields. */
const permissions = z
  .union([z.string().max(100), z.array(z.string().max(100)).max(50)])
  .optional()
  .transform((v) => [v ?? []].flat());

const person = { name: text(200), email: text(320), permissions };

/**
 * Where a write goes once done: `redirect` (POST-redirect-GET, the path named), or `page`: the
 * answer is a page shown once (a set-password link, a new secret), never redirected to.
 */
type After = { redirect: string } | { page: string };

export interface AdminAction {
  path: string;
  method: "POST";
  /** The staff RPC(s) the action performs, as service.Method. */
  rpc: readonly string[];
  permission: StaffPermission;
  /** A stronger permission for part of the action (the field that asks for it), if any. */
  stronger?: { field: string; permission: StaffPermission };
  schema: z.ZodType<Record<string, unknown>>;
  /** Every write form carries the one-time token: a repeat acts once (admin-once.ts). */
  form: "once";
  /** The audit entries written, first the action's own (staff-audit.ts). */
  audit: readonly [string, ...string[]];
  after: After;
  /** The nav entry the action's pages belong to. */
  area: string;
}

const CUSTOMERS = "/admin/customers";

export const ADMIN_ACTIONS = {
  "customer.create": {
    path: "/customers",
    method: "POST",
    rpc: ["auth.CreateCustomer"],
    permission: "edit_clients",
    schema: z.object({
      name: text(200),
      email: text(320),
      company: text(200),
      country: text(10),
      currency: text(10),
    }),
    form: "once",
    audit: ["customer.create"],
    after: { redirect: "/admin/customers/:id?done=created" },
    area: CUSTOMERS,
  },
  "customer.update": {
    path: "/customers/:id/profile",
    method: "POST",
    rpc: ["auth.UpdateCustomer"],
    permission: "edit_clients",
    schema: z.object({ name: text(200), email: text(320), company: text(200), country: text(10) }),
    form: "once",
    audit: ["customer.update"],
    after: { redirect: "/admin/customers/:id?done=profile" },
    area: CUSTOMERS,
  },
  "customer.suspend": {
    path: "/customers/:id/suspend",
    method: "POST",
    rpc: ["auth.SetCustomerStatus"],
    permission: "edit_clients",
    schema: z.object({ reason: text() }),
    form: "once",
    audit: ["customer.suspend"],
    after: { redirect: "/admin/customers/:id?done=suspended" },
    area: CUSTOMERS,
  },
  "customer.unsuspend": {
    path: "/customers/:id/unsuspend",
    method: "POST",
    rpc: ["auth.SetCustomerStatus"],
    permission: "edit_clients",
    schema: z.object({ reason: text() }),
    form: "once",
    audit: ["customer.unsuspend"],
    after: { redirect: "/admin/customers/:id?done=unsuspended" },
    area: CUSTOMERS,
  },
  "person.create": {
    path: "/customers/:id/people",
    method: "POST",
    rpc: ["auth.CreatePerson", "portal.CreatePasswordLink"],
    permission: "edit_clients",
    schema: z.object(person),
    form: "once",
    audit: ["person.create", "person.password_link"],
    after: { page: "the person's set-password link, shown once" },
    area: CUSTOMERS,
  },
  "person.link": {
    path: "/customers/:id/people/:person/link",
    method: "POST",
    rpc: ["portal.CreatePasswordLink"],
    permission: "edit_clients",
    schema: z.object({}),
    form: "once",
    audit: ["person.password_link"],
    after: { page: "the person's set-password link, shown once" },
    area: CUSTOMERS,
  },
  "person.permissions": {
    path: "/customers/:id/people/:person/permissions",
    method: "POST",
    rpc: ["auth.SetPermissions"],
    permission: "edit_clients",
    schema: z.object({ permissions }),
    form: "once",
    audit: ["person.permissions"],
    after: { redirect: "/admin/customers/:id/people?done=permissions" },
    area: CUSTOMERS,
  },
  "service.power": {
    path: "/customers/:id/services/:service/power",
    method: "POST",
    rpc: ["compute.DeskRunPowerAction"],
    permission: "edit_clients",
    schema: z.object({ action: text(20) }),
    form: "once",
    audit: ["service.power"],
    after: { redirect: "/admin/customers/:id/services?done=power" },
    area: CUSTOMERS,
  },
  "credit.adjust": {
    path: "/customers/:id/credit",
    method: "POST",
    rpc: ["billing.DeskAdjustCredit"],
    permission: "edit_clients",
    schema: z.object({ person: text(40), amount: text(40), reason: text() }),
    form: "once",
    audit: ["credit.adjust"],
    after: { redirect: "/admin/customers/:id/balance?done=credit" },
    area: CUSTOMERS,
  },
  "key.revoke": {
    path: "/customers/:id/keys/:key/revoke",
    method: "POST",
    rpc: ["auth.StaffRevokeKey"],
    permission: "edit_clients",
    schema: z.object({}),
    form: "once",
    audit: ["key.revoke"],
    after: { redirect: "/admin/customers/:id/keys?done=revoked" },
    area: CUSTOMERS,
  },
  "staff.create": {
    path: "/staff",
    method: "POST",
    rpc: ["auth.CreateStaff", "portal.CreatePasswordLink"],
    permission: "edit_clients",
    schema: z.object(person),
    form: "once",
    audit: ["staff.create", "staff.password_link"],
    after: { page: "the staff member's set-password link, shown once" },
    area: "/admin/staff",
  },
  "staff.permissions": {
    path: "/staff/:id/permissions",
    method: "POST",
    rpc: ["portal.SetStaffPermissions"],
    permission: "edit_clients",
    schema: z.object({ permissions }),
    form: "once",
    audit: ["staff.permissions"],
    after: { page: "the staff list with the permissions saved" },
    area: "/admin/staff",
  },
  "staff.link": {
    path: "/staff/:id/link",
    method: "POST",
    rpc: ["portal.CreatePasswordLink"],
    permission: "edit_clients",
    schema: z.object({}),
    form: "once",
    audit: ["staff.password_link"],
    after: { page: "the staff member's set-password link, shown once" },
    area: "/admin/staff",
  },
  "settings.customer_api": {
    path: "/settings",
    method: "POST",
    rpc: ["auth.UpdateSettings"],
    permission: "edit_clients",
    schema: z.object({ api: box, hourly: text(20), keys: text(20), inventory: box, vps: box }),
    form: "once",
    audit: ["settings.customer_api"],
    after: { redirect: "/admin/settings?saved=1" },
    area: "/admin/settings",
  },
  "settings.webhooks": {
    path: "/settings/webhooks",
    method: "POST",
    rpc: ["webhooks.UpdateProgrammeSettings"],
    permission: "edit_clients",
    schema: z.object({ max_attempts: text(20), base_delay: text(20) }),
    form: "once",
    audit: ["settings.webhooks"],
    after: { redirect: "/admin/settings?saved=1" },
    area: "/admin/settings",
  },
  "partner.webhook_url": {
    path: "/partners/:id/webhook",
    method: "POST",
    rpc: ["webhooks.SetWebhookUrl"],
    permission: "edit_clients",
    schema: z.object({ url: text(2048) }),
    form: "once",
    audit: ["partner.webhook_url"],
    after: { page: "the partner's settings with the URL saved" },
    area: "/admin/partners",
  },
  "partner.rotate_secret": {
    path: "/partners/:id/rotate",
    method: "POST",
    rpc: ["auth.RotatePartnerSecret"],
    permission: "edit_clients",
    schema: z.object({}),
    form: "once",
    audit: ["partner.rotate_secret"],
    after: { page: "the new signing secret, shown once" },
    area: "/admin/partners",
  },
  "partner.approve": {
    path: "/partners/:id/approve",
    method: "POST",
    rpc: ["auth.SetPartnerStatus"],
    permission: "edit_clients",
    schema: z.object({}),
    form: "once",
    audit: ["partner.approve"],
    after: { page: "the partner's settings, now active" },
    area: "/admin/partners",
  },
  "partner.suspend": {
    path: "/partners/:id/suspend",
    method: "POST",
    rpc: ["auth.SetPartnerStatus"],
    permission: "edit_clients",
    schema: z.object({}),
    form: "once",
    audit: ["partner.suspend"],
    after: { page: "the partner's settings, now suspended" },
    area: "/admin/partners",
  },
  "billing.bank_transfer_confirm": {
    path: "/bank-transfers/confirm",
    method: "POST",
    rpc: ["billing.ConfirmBankTransfer"],
    permission: "edit_clients",
    stronger: { field: "above_requested", permission: "approve_overpayments" },
    schema: z.object({ reference: text(40), received: text(40), above_requested: box }),
    form: "once",
    audit: ["billing.bank_transfer_confirm"],
    after: { redirect: "/admin/bank-transfers?confirmed=:reference" },
    area: "/admin/bank-transfers",
  },
} as const satisfies Record<string, AdminAction>;

export type AdminActionName = keyof typeof ADMIN_ACTIONS;
/** The form body of an action, as its schema reads it. */
export type ActionBody<N extends AdminActionName> = z.output<(typeof ADMIN_ACTIONS)[N]["schema"]>;

/** Whether the signed-in staff member may perform the action: the one question rendering asks. */
export function allowed(res: Response, name: AdminActionName): boolean {
  return sessionOf(res).permissions.includes(ADMIN_ACTIONS[name].permission);
}

/** Whether the staff member holds the action's stronger permission (e.g. crediting an overpayment). */
export function allowedStronger(res: Response, name: AdminActionName): boolean {
  const a: AdminAction = ADMIN_ACTIONS[name];
  return !!a.stronger && sessionOf(res).permissions.includes(a.stronger.permission);
}

/**
 * The pages of the panel (GET), with the permission each needs; the nav draws only those the
 * staff member may open, so no menu item answers 403.
 */
export const ADMIN_PAGES = [
  { href: "/admin/customers", label: "Customers", permission: "view_clients" },
  { href: "/admin/search", label: "Search", permission: "view_clients" },
  { href: "/admin/partners", label: "Partners", permission: "view_clients" },
  { href: "/admin/bank-transfers", label: "Bank transfers", permission: "view_clients" },
  { href: "/admin/card-payments", label: "Card payments", permission: "view_clients" },
  { href: "/admin/staff", label: "Staff", permission: "edit_clients" },
  { href: "/admin/settings", label: "Settings", permission: "view_clients" },
] as const satisfies readonly { href: string; label: string; permission: StaffPermission }[];
