import { createHash, timingSafeEqual } from "node:crypto";
import type { KeyEntry, KeySettings, WatchKeysResponse } from "@hb/contracts/hb/auth/v1/key_distribution_pb";

/**
 * This replica's copy of auth's key table (docs/architecture.md, "Key table"). It holds no secret
 * from auth: a key's secret is confirmed once by auth.Verify, and the replica then keeps its own
 * SHA-256 of the key it was shown, to recognise the same key again.
 */
export class KeyTable {
  settings: KeySettings | undefined;
  private byPrefix = new Map<string, KeyEntry>();
  private byCustomer = new Map<string, Set<string>>();
  /** key id → SHA-256 of the full key auth confirmed. */
  private confirmed = new Map<string, Buffer>();

  /** Applies one message of the stream; returns false for a message it does not know. */
  apply(msg: WatchKeysResponse): boolean {
    const item = msg.item;
    switch (item.case) {
      case "snapshot":
        this.settings = item.value.settings;
        this.byPrefix.clear();
        this.byCustomer.clear();
        for (const e of item.value.entries) this.put(e);
        // A confirmed digest outlives a resync: it only says which key auth accepted for an id.
        return true;
      case "customer": {
        for (const prefix of this.byCustomer.get(item.value.customerId) ?? []) this.byPrefix.delete(prefix);
        this.byCustomer.delete(item.value.customerId);
        for (const e of item.value.entries) this.put(e);
        return true;
      }
      case "settings":
        this.settings = item.value;
        return true;
      case "heartbeat":
        return true;
      default:
        return false;
    }
  }

  private put(e: KeyEntry): void {
    this.byPrefix.set(e.prefix, e);
    const set = this.byCustomer.get(e.customerId) ?? new Set<string>();
    set.add(e.prefix);
    this.byCustomer.set(e.customerId, set);
  }

  get size(): number {
    return this.byPrefix.size;
  }

  entry(prefix: string): KeyEntry | undefined {
    return this.byPrefix.get(prefix);
  }

  /** A customer's key by its id (a customer holds few keys: their entries are scanned). */
  entryById(customerId: string, keyId: string): KeyEntry | undefined {
    for (const prefix of this.byCustomer.get(customerId) ?? []) {
      const e = this.byPrefix.get(prefix);
      if (e?.keyId === keyId) return e;
    }
    return undefined;
  }

  /** Remembers that auth accepted this full key for this key id. */
  confirm(keyId: string, fullKey: string): void {
    this.confirmed.set(keyId, digest(fullKey));
  }

  /** True: the key is the one auth confirmed; false: another; undefined: never confirmed here. */
  matches(keyId: string, fullKey: string): boolean | undefined {
    const known = this.confirmed.get(keyId);
    if (!known) return undefined;
    return timingSafeEqual(known, digest(fullKey));
  }
}

const digest = (fullKey: string) => createHash("sha256").update(fullKey).digest();
