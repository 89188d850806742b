/** One request-log entry as the gateway publishes it (JSON) and auth stores it. */
export interface RequestLogRecord {
  keyId: string;
  customerId: string;
  method: string;
  endpoint: string;
  status: number;
  ip: string;
  /** ISO 8601 */
  at: string;
  durationMs: number;
}
