// The gateway checks allowlists too (its local key check), so the parser lives in the platform.
export * from "@hb/platform/allowlist";
