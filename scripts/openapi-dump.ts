/** Prints the OpenAPI document built from the gateway's route table (for linting in CI). */
import { buildOpenApi } from "../services/gateway/src/openapi.ts";
import { allRoutes } from "../services/gateway/src/routes/index.ts";

process.stdout.write(
  `${JSON.stringify(buildOpenApi(allRoutes("http://localhost:8080"), "http://localhost:8080/api/v1"), null, 2)}\n`,
);
