import createClient, { type Client, type MaybeOptionalInit } from "openapi-fetch";
import type {
  PathsWithMethod,
  Readable,
  RequiredKeysOf,
  ResponseObjectMap,
  SuccessResponse,
} from "openapi-typescript-helpers";
import { errorFromResponse, HbError } from "./errors.ts";
import type { paths } from "./gen/openapi.ts";
import { paginatedLists } from "./gen/operations.ts";
import { defaultRetryPolicy, type RetryPolicy, sleep } from "./retry.ts";
import { createTransport, type RetryEvent } from "./transport.ts";

export type { paths };

type Method = "get" | "post" | "put" | "delete";

/** The success body of an operation: `{ success: true, data, ... }`. */
export type Ok<Op> =
  Op extends Record<string | number, unknown>
    ? Readable<SuccessResponse<ResponseObjectMap<Op>, "application/json">>
    : never;
/** The `data` of a path's success answer. */
export type DataOf<P extends keyof paths, M extends Method = "get"> =
  Ok<paths[P][M]> extends { data: infer D } ? D : never;

// openapi-fetch's own rule for when the second argument may be left out (not exported by it).
type InitParam<Init> =
  RequiredKeysOf<Init> extends never
    ? [(Init & { [key: string]: unknown })?]
    : [Init & { [key: string]: unknown }];

/** A typed call that answers the success body, or throws an HbError for a refusal. */
export type Call<M extends Method> = <
  P extends PathsWithMethod<paths, M>,
  I extends MaybeOptionalInit<paths[P], M>,
>(
  path: P,
  ...init: InitParam<I>
) => Promise<Ok<paths[P][M]>>;

export type ListPath = keyof typeof paginatedLists;
type ItemsOf<D, K> = K extends string
  ? D extends { [F in K]: (infer T)[] }
    ? T
    : never
  : D extends (infer T)[]
    ? T
    : never;
/** One item of a paginated list: a VPS of /vps, an invoice of /invoices, ... */
export type ListItem<P extends ListPath> = ItemsOf<DataOf<P>, (typeof paginatedLists)[P]["items"]>;
/** A list's query without the page, which the iterator turns. */
export type ListQuery<P extends ListPath> = Omit<NonNullable<paths[P]["get"]["parameters"]["query"]>, "page">;

export type Job = DataOf<"/jobs/{id}">;

export interface HbClientOptions {
  /** The API's address: `https://host` or `https://host/api/v1` (the /api/v1 is added when missing). */
  baseUrl: string;
  /** An API key, `hbk_...`; sent as `Authorization: Bearer`. */
  apiKey: string;
  /** Retries of 5xx, 429 and lost connections (money-moving calls only after a re-read). */
  retry?: Partial<RetryPolicy>;
  /** Makes each money-moving call's Idempotency-Key (default: a random UUID). */
  idempotencyKey?: () => string;
  /** Told before each retry. */
  onRetry?: (event: RetryEvent) => void;
  /** A fetch to use instead of the global one. */
  fetch?: (input: Request) => Promise<Response>;
  userAgent?: string;
}

export interface WaitOptions {
  /** Give up (HbError TIMEOUT) when the job is still running after this long (default 10 minutes). */
  timeoutMs?: number;
  /** Time between two reads of the job (default 1 s). */
  intervalMs?: number;
  /** Called with the job on the first read and whenever its status or progress changes. */
  onProgress?: (job: Job) => void;
  signal?: AbortSignal;
}

export interface HbClient {
  /** The underlying openapi-fetch client (answers `{ data, error, response }`, never throws on a refusal). */
  readonly raw: Client<paths, "application/json">;
  readonly baseUrl: string;
  get: Call<"get">;
  post: Call<"post">;
  put: Call<"put">;
  delete: Call<"delete">;
  /** Every item of a paginated list, page after page (200 a page unless `limit` says otherwise). */
  paginate<P extends ListPath>(
    path: P,
    query?: ListQuery<P>,
    opts?: { signal?: AbortSignal },
  ): AsyncGenerator<ListItem<P>, void, undefined>;
  /** Reads the job until it leaves `running`; answers it succeeded or failed. */
  waitForJob(jobId: string, opts?: WaitOptions): Promise<Job>;
}

/** The API's base URL with /api/v1 and without a trailing slash. */
export function normaliseBaseUrl(url: string): string {
  const u = url.trim().replace(/\/+$/, "");
  new URL(u); // refuses what is not an absolute URL, with the URL in the message
  return u.endsWith("/api/v1") ? u : `${u}/api/v1`;
}

export function createHbClient(options: HbClientOptions): HbClient {
  const baseUrl = normaliseBaseUrl(options.baseUrl);
  const transport = createTransport({
    baseUrl,
    fetch: options.fetch ?? ((input) => globalThis.fetch(input)),
    retry: { ...defaultRetryPolicy, ...options.retry },
    idempotencyKey: options.idempotencyKey ?? (() => globalThis.crypto.randomUUID()),
    onRetry: options.onRetry,
  });
  const raw = createClient<paths, "application/json">({
    baseUrl,
    fetch: transport,
    headers: {
      authorization: `Bearer ${options.apiKey}`,
      "user-agent": options.userAgent ?? "hosting-platform-sdk/0.1",
    },
  });

  const unwrap = async (
    pending: Promise<{ data?: unknown; error?: unknown; response: Response }>,
  ): Promise<never> => {
    const { data, error, response } = await pending;
    // openapi-fetch has read the body already: the refusal is built from what it parsed.
    if (error !== undefined || !response.ok)
      throw errorFromResponse(response.status, error, response.headers);
    return data as never;
  };
  const call =
    <M extends Method>(method: M): Call<M> =>
    (path, ...init) =>
      unwrap(raw.request(method, path as never, ...(init as [never])));

  const get = call("get");

  async function* paginate<P extends ListPath>(
    path: P,
    query?: ListQuery<P>,
    opts: { signal?: AbortSignal } = {},
  ): AsyncGenerator<ListItem<P>, void, undefined> {
    const field = paginatedLists[path].items as string | null;
    for (let page = 1; ; page++) {
      const body = (await unwrap(
        raw.request(
          "get",
          path as never,
          {
            params: { query: { limit: 200, ...query, page } },
            signal: opts.signal,
          } as never,
        ),
      )) as { data: unknown; pagination?: { pages: number } };
      const data = body.data as Record<string, unknown>;
      const items = (field === null ? data : data[field]) as ListItem<P>[];
      const pagination = (field === null ? body.pagination : data.pagination) as { pages: number };
      yield* items;
      if (items.length === 0 || page >= pagination.pages) return;
    }
  }

  async function waitForJob(jobId: string, opts: WaitOptions = {}): Promise<Job> {
    const timeoutMs = opts.timeoutMs ?? 600_000;
    const intervalMs = opts.intervalMs ?? 1000;
    const deadline = Date.now() + timeoutMs;
    let last: Job | undefined;
    for (;;) {
      const { data: job } = await get("/jobs/{id}", { params: { path: { id: jobId } }, signal: opts.signal });
      if (!last || last.status !== job.status || last.progress !== job.progress) opts.onProgress?.(job);
      last = job;
      if (job.status !== "running") return job;
      if (Date.now() + intervalMs > deadline) {
        throw new HbError("TIMEOUT", `job ${jobId} is still running after ${timeoutMs} ms`);
      }
      await sleep(intervalMs, opts.signal);
    }
  }

  return {
    raw,
    baseUrl,
    get,
    post: call("post"),
    put: call("put"),
    delete: call("delete"),
    paginate,
    waitForJob,
  };
}
