import { createReadStream, createWriteStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import https from "node:https";
import { pipeline } from "node:stream/promises";
import { http } from "@hb/platform/node-http";

/**
 * A minimal client for LXD's REST API (/1.0): only the endpoints the driver uses, typed. It talks
 * to the daemon's unix socket, or to a remote daemon or cluster over HTTPS with a client
 * certificate the daemon trusts. Incus speaks the same API.
 */

/** Where an LXD daemon (or one cluster) is reached. */
export type LxdEndpoint =
  | { name: string; socketPath: string }
  | { name: string; url: string; cert: Buffer; key: Buffer; serverCert?: Buffer };

/** An LXD background operation (GET /1.0/operations/{id}). */
export interface LxdOperation {
  id: string;
  /** Running, Success, Failure, Cancelled */
  status: string;
  status_code: number;
  err: string;
  metadata: Record<string, unknown> | null;
}

export interface LxdInstance {
  name: string;
  /** Running, Stopped, Frozen, Error */
  status: string;
  location: string;
  config: Record<string, string>;
  devices: Record<string, Record<string, string>>;
}

export interface LxdInstanceState {
  status: string;
  cpu: { usage: number };
  memory: { usage: number };
  disk: Record<string, { usage: number }>;
  network: Record<
    string,
    {
      addresses: { family: string; address: string; netmask: string; scope: string }[];
      counters: { bytes_received: number; bytes_sent: number };
    }
  > | null;
  pid: number;
}

export interface LxdResources {
  memory: { total: number; used: number };
}

/** An error LXD answered (or the daemon could not be reached: status 0). */
export class LxdError extends Error {
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.name = "LxdError";
    this.status = status;
  }
}

interface Envelope<T> {
  type: "sync" | "async" | "error";
  status_code: number;
  error_code: number;
  error: string;
  operation: string;
  metadata: T;
}

/** The daemon's answers are small JSON documents; an export is streamed instead (`download`). */
const MAX_ANSWER_BYTES = 16 << 20;
const REQUEST_TIMEOUT_MS = 30_000;

export interface LxdClient {
  readonly endpoint: LxdEndpoint;
  /** A sync request's metadata. */
  get<T>(path: string): Promise<T>;
  /** A request that answers sync or starts an operation: the operation id (or "" when sync). */
  submit(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<string>;
  /** Raw bytes to a path (a file push, a backup import): the operation id, or "" when sync. */
  send(method: string, path: string, data: Buffer, headers: Record<string, string>): Promise<string>;
  /** An operation's state; waits up to `timeoutS` seconds for it to finish when given. */
  operation(id: string, timeoutS?: number): Promise<LxdOperation>;
  /** Streams a response body to a file (a backup export). */
  download(path: string, file: string): Promise<void>;
  /**
   * Streams a file as a request's body (a backup import): the operation id, or "" when sync. A
   * backup is as large as the machine's files, so it is never held in memory whole.
   */
  upload(method: string, path: string, file: string, headers: Record<string, string>): Promise<string>;
}

/** A request body read from a file as it is sent. */
interface FileBody {
  file: string;
  size: number;
}

/** Reads an HTTPS endpoint's certificate files: `https://host:8443` plus the paths from config. */
export async function httpsEndpoint(
  url: string,
  files: { cert: string; key: string; serverCert?: string },
): Promise<LxdEndpoint> {
  const [cert, key, serverCert] = await Promise.all([
    readFile(files.cert),
    readFile(files.key),
    files.serverCert ? readFile(files.serverCert) : undefined,
  ]);
  return { name: url, url, cert, key, serverCert };
}

export function createLxdClient(endpoint: LxdEndpoint): LxdClient {
  function request(
    method: string,
    path: string,
    body: Buffer | FileBody | undefined,
    headers: Record<string, string>,
  ): Promise<IncomingMessage> {
    const common = { method, path, headers: { ...headers }, timeout: REQUEST_TIMEOUT_MS };
    if (body) common.headers["content-length"] = String(Buffer.isBuffer(body) ? body.length : body.size);
    return new Promise((resolve, reject) => {
      const req =
        "socketPath" in endpoint
          ? http.request({ ...common, socketPath: endpoint.socketPath }, resolve)
          : https.request(
              {
                ...common,
                host: new URL(endpoint.url).hostname,
                port: new URL(endpoint.url).port || 8443,
                cert: endpoint.cert,
                key: endpoint.key,
                ca: endpoint.serverCert,
                // LXD's certificates are self-signed for a host name that rarely matches the
                // address dialled: trust is pinned by the server certificate given as the CA.
                checkServerIdentity: () => undefined,
                rejectUnauthorized: Boolean(endpoint.serverCert),
              },
              resolve,
            );
      req.on("timeout", () => req.destroy(new Error(`LXD did not answer ${method} ${path} in time`)));
      req.on("error", (err) =>
        reject(new LxdError(`LXD at ${endpoint.name} could not be reached: ${err.message}`, 0)),
      );
      if (body && !Buffer.isBuffer(body))
        pipeline(createReadStream(body.file), req).catch((err: Error) =>
          reject(new Error(`${body.file} could not be sent to LXD: ${err.message}`)),
        );
      else req.end(body);
    });
  }

  async function answer<T>(res: IncomingMessage): Promise<Envelope<T>> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res) {
      size += (chunk as Buffer).length;
      if (size > MAX_ANSWER_BYTES) throw new LxdError("LXD's answer was too large", res.statusCode ?? 0);
      chunks.push(chunk as Buffer);
    }
    const text = Buffer.concat(chunks).toString("utf8");
    let env: Envelope<T>;
    try {
      env = JSON.parse(text) as Envelope<T>;
    } catch {
      throw new LxdError(`LXD answered ${res.statusCode} without JSON`, res.statusCode ?? 0);
    }
    if (env.type === "error") throw new LxdError(env.error || "LXD refused the request", env.error_code);
    return env;
  }

  async function call<T>(method: string, path: string, body?: Buffer, headers: Record<string, string> = {}) {
    return answer<T>(await request(method, path, body, headers));
  }

  const json = (body: unknown) => (body === undefined ? undefined : Buffer.from(JSON.stringify(body)));
  const opId = (env: Envelope<unknown>) => (env.type === "async" ? env.operation.split("/").pop() || "" : "");

  return {
    endpoint,
    async get<T>(path: string) {
      return (await call<T>("GET", path)).metadata;
    },
    async submit(method, path, body, headers = {}) {
      return opId(await call(method, path, json(body), { "content-type": "application/json", ...headers }));
    },
    async send(method, path, data, headers) {
      return opId(await call(method, path, data, headers));
    },
    async operation(id, timeoutS) {
      const path =
        timeoutS === undefined
          ? `/1.0/operations/${encodeURIComponent(id)}`
          : `/1.0/operations/${encodeURIComponent(id)}/wait?timeout=${timeoutS}`;
      return (await call<LxdOperation>("GET", path)).metadata;
    },
    async download(path, file) {
      const res = await request("GET", path, undefined, {});
      if (res.statusCode !== 200) {
        await answer(res);
        throw new LxdError(`LXD answered ${res.statusCode} to ${path}`, res.statusCode ?? 0);
      }
      await pipeline(res, createWriteStream(file, { mode: 0o600 }));
    },
    async upload(method, path, file, headers) {
      const { size } = await stat(file);
      return opId(await answer(await request(method, path, { file, size }, headers)));
    },
  };
}
