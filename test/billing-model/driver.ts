/**
 * The small driver the invariant test speaks through: HTTP calls with an actor's key (reseller
 * calls signed), typed reads of the JSON answers, and billing's clock.
 */

import { randomUUID } from "node:crypto";
import { type Timestamp, timestampMs } from "@bufbuild/protobuf/wkt";
import { signResellerRequest } from "@hb/webhook-signature";

export interface Reply {
  status: number;
  body: unknown;
  text: string;
}

export interface CallOptions {
  body?: unknown;
  /** Sent as is (e.g. a number written as a string). */
  rawBody?: string;
  idempotencyKey?: string;
  /** The partner's signing secret: the call is a signed reseller request. */
  signWith?: string;
}

export type Http = (method: string, path: string, key: string, opts?: CallOptions) => Promise<Reply>;

export function http(gatewayUrl: string): Http {
  return async (method, path, key, opts = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    const raw = opts.rawBody ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
    if (raw !== undefined) headers["content-type"] = "application/json";
    if (opts.idempotencyKey) headers["idempotency-key"] = opts.idempotencyKey;
    if (opts.signWith) {
      Object.assign(headers, signResellerRequest({ body: raw, secret: opts.signWith }));
    }
    const res = await fetch(`${gatewayUrl}/api/v1${path}`, { method, headers, body: raw });
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: res.status, body, text };
  };
}

/** Reads a path of keys out of a JSON value; undefined when any step is missing. */
export function at(value: unknown, ...path: (string | number)[]): unknown {
  let v = value;
  for (const k of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string | number, unknown>)[k];
  }
  return v;
}

export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

export const idemKey = () => randomUUID();

/** The clock RPC, when the billing contract has it (it is optional so older builds still run). */
export interface ClockAdmin {
  adminAdvanceClock(req: { seconds: bigint }): Promise<{ now?: Timestamp }>;
}

export function clockAdminOf(client: object): ClockAdmin | undefined {
  return "adminAdvanceClock" in client ? (client as ClockAdmin) : undefined;
}

/**
 * Billing's time as the model knows it: the wall clock plus the offset learned from the last
 * AdminAdvanceClock answer. Billing reads its clock somewhere inside that call (before the due
 * work runs), so the offset is known to lie between two bounds; `lo()` and `hi()` bracket billing's
 * now, and callers bracket a request with `lo()` before it and `hi()` after it.
 */
export class ModelClock {
  private offsetLo = 0;
  private offsetHi = 0;
  private readonly admin: ClockAdmin | undefined;
  constructor(admin: ClockAdmin | undefined) {
    this.admin = admin;
  }
  lo(): Date {
    return new Date(Date.now() + this.offsetLo);
  }
  hi(): Date {
    return new Date(Date.now() + this.offsetHi);
  }
  get available() {
    return this.admin !== undefined;
  }
  /** Moves billing's clock; false when this build has no clock control. */
  async advance(seconds: number): Promise<boolean> {
    if (!this.admin) return false;
    let sent = Date.now();
    let r: { now?: Timestamp };
    try {
      r = await this.admin.adminAdvanceClock({ seconds: BigInt(seconds) });
    } catch (err) {
      // The clock may have moved although the answer was lost: learn where it is now.
      sent = Date.now();
      r = await this.admin.adminAdvanceClock({ seconds: 0n });
      this.learn(r.now, sent);
      throw err;
    }
    this.learn(r.now, sent);
    return true;
  }

  private learn(now: Timestamp | undefined, sent: number) {
    const answered = Date.now();
    const at = timestampMs(now!);
    this.offsetLo = at - answered;
    this.offsetHi = at - sent;
  }
}
