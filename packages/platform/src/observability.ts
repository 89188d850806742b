/**
 * What every service starts for observability: trace export when configured, /metrics on the
 * service's metrics port (<SERVICE>_METRICS_PORT, default below; 0 picks a free port).
 */
import { z } from "zod";
import { loadConfig } from "./config.ts";
import type { Logger } from "./log.ts";
import { type MetricsServer, startMetricsServer } from "./metrics.ts";
import { initTracing } from "./tracing.ts";

const defaultMetricsPorts: Record<string, number> = {
  gateway: 9100,
  auth: 9101,
  compute: 9102,
  billing: 9103,
  webhooks: 9104,
};

const metricsPortVariable = (service: string) => `${service.toUpperCase()}_METRICS_PORT`;

export interface Observability {
  metrics?: MetricsServer;
  close(): Promise<void>;
}

export async function startObservability(
  service: string,
  log: Logger,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Observability> {
  const name = metricsPortVariable(service);
  const cfg = loadConfig(
    {
      [name]: z.coerce
        .number()
        .int()
        .min(0)
        .max(65535)
        .default(defaultMetricsPorts[service] ?? 9100),
      METRICS_HOST: z.string().default("0.0.0.0"),
    },
    env,
  );
  const tracing = await initTracing(service, env);
  const metrics = await startMetricsServer(service, cfg[name] as number, cfg.METRICS_HOST as string, log);
  log.info("observability ready", { metricsPort: metrics?.port, tracesExported: tracing.exporting });
  return {
    metrics,
    close: async () => {
      await metrics?.close();
      await tracing.shutdown();
    },
  };
}
