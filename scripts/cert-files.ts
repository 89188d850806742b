/**
 * Where the development certificates live, apart from the code that makes them, so every process
 * that only reads them (the admin command, tests, benchmarks) skips loading the X.509 library.
 */
import path from "node:path";

export const DEV_CERTS_DIR = path.join(path.resolve(import.meta.dirname, ".."), ".tmp", "certs");

/** Paths of one identity's files in a certificate directory. */
export const certFiles = (dir: string, name: string) => ({
  TLS_CA: path.join(dir, "ca.pem"),
  TLS_CERT: path.join(dir, `${name}.pem`),
  TLS_KEY: path.join(dir, `${name}.key`),
});
