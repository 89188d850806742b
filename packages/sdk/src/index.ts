/**
 * A typed client of the customer REST API. The types come from the API's OpenAPI document
 * (openapi-typescript, through openapi-fetch); this layer adds what a script needs on top:
 * Idempotency-Keys and safe retries for money-moving calls, iterators over paginated lists,
 * waiting for jobs, and refusals as errors typed by their code.
 */
export {
  type Call,
  createHbClient,
  type DataOf,
  type HbClient,
  type HbClientOptions,
  type Job,
  type ListItem,
  type ListPath,
  type ListQuery,
  normaliseBaseUrl,
  type Ok,
  type paths,
  type WaitOptions,
} from "./client.ts";
export {
  type ApiErrorCode,
  type ClientErrorCode,
  type ErrorCode,
  type FieldError,
  HbError,
  isHbError,
} from "./errors.ts";
export type { components, operations } from "./gen/openapi.ts";
export { apiErrorCodes, moneyMovingOperations, paginatedLists, queryChoices } from "./gen/operations.ts";
export { defaultRetryPolicy, type RetryPolicy } from "./retry.ts";
export type { RetryEvent } from "./transport.ts";
