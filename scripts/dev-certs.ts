/**
 * The development certificate authority and one certificate per service identity, made by the
 * stack launcher for `npm start`, `npm test` and the benchmarks (Kubernetes gets its certificates
 * from cert-manager or the operator instead). Kept under a git-ignored directory and reused while
 * valid, so a restart does not re-issue them; parallel launchers never see a half-written set
 * because a set is written to a directory of its own and renamed into place in one step.
 */
import { createPrivateKey, webcrypto, X509Certificate } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { SERVICE_IDENTITIES } from "@hb/platform";
import { certFiles, DEV_CERTS_DIR } from "./cert-files.ts";

export { certFiles, DEV_CERTS_DIR };

/**
 * @peculiar/x509, loaded only when certificates are to be made: loading it takes long enough
 * (seconds on a busy machine) to matter to every launcher that only reuses the set on file.
 */
async function x509Library() {
  // It resolves its algorithms through tsyringe, which needs the polyfill loaded first.
  await import("reflect-metadata");
  const x509 = await import("@peculiar/x509");
  // Node's Web Crypto, typed by @types/node rather than the DOM library the package expects.
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  return x509;
}

const algorithm = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const DAY = 86_400_000;
const LIFETIME_DAYS = 90;

/** True when every identity's certificate is on file, issued by the CA on file and valid another day. */
function usable(dir: string, names: readonly string[]): boolean {
  try {
    const ca = new X509Certificate(readFileSync(path.join(dir, "ca.pem")));
    const until = Date.now() + DAY;
    if (Date.parse(ca.validTo) < until) return false;
    return names.every((name) => {
      const files = certFiles(dir, name);
      const cert = new X509Certificate(readFileSync(files.TLS_CERT));
      return (
        Date.parse(cert.validTo) >= until &&
        cert.verify(ca.publicKey) &&
        cert.checkPrivateKey(createPrivateKey(readFileSync(files.TLS_KEY)))
      );
    });
  } catch {
    return false;
  }
}

const keyPem = async (key: webcrypto.CryptoKey) =>
  createPrivateKey({
    key: Buffer.from(await webcrypto.subtle.exportKey("pkcs8", key)),
    format: "der",
    type: "pkcs8",
  })
    .export({ format: "pem", type: "pkcs8" })
    .toString();

async function issue(dir: string, names: readonly string[]): Promise<void> {
  const x509 = await x509Library();
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(Date.now() + LIFETIME_DAYS * DAY);
  const caKeys = await webcrypto.subtle.generateKey(algorithm, true, ["sign", "verify"]);
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    name: "CN=hb development CA",
    notBefore,
    notAfter,
    keys: caKeys,
    signingAlgorithm: algorithm,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  writeFileSync(path.join(dir, "ca.pem"), ca.toString("pem"));
  for (const name of names) {
    const keys = await webcrypto.subtle.generateKey(algorithm, true, ["sign", "verify"]);
    const cert = await x509.X509CertificateGenerator.create({
      subject: `CN=${name}`,
      issuer: ca.subject,
      notBefore,
      notAfter,
      publicKey: keys.publicKey,
      signingKey: caKeys.privateKey,
      signingAlgorithm: algorithm,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        // Each certificate is both: a service answers calls and makes them with the same identity.
        new x509.ExtendedKeyUsageExtension([
          x509.ExtendedKeyUsage.serverAuth,
          x509.ExtendedKeyUsage.clientAuth,
        ]),
        // The stack's services are reached at 127.0.0.1; the name is there for a DNS set-up.
        new x509.SubjectAlternativeNameExtension([
          { type: "dns", value: name },
          { type: "dns", value: "localhost" },
          { type: "ip", value: "127.0.0.1" },
        ]),
        await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
      ],
    });
    const files = certFiles(dir, name);
    writeFileSync(files.TLS_CERT, cert.toString("pem"));
    writeFileSync(files.TLS_KEY, await keyPem(keys.privateKey), { mode: 0o600 });
  }
}

/**
 * Makes sure `dir` holds a CA and a certificate for every service identity (and any extra names),
 * issuing a new set when one is missing, expiring or not from the CA on file. Returns `dir`.
 */
export async function ensureDevCerts(dir = DEV_CERTS_DIR, extra: readonly string[] = []): Promise<string> {
  const names = [...SERVICE_IDENTITIES, ...extra];
  if (usable(dir, names)) return dir;
  const fresh = `${dir}.${process.pid}.${Date.now().toString(36)}`;
  mkdirSync(fresh, { recursive: true, mode: 0o700 });
  await issue(fresh, names);
  if (existsSync(dir)) {
    // Another launcher may have replaced it meanwhile; keep theirs if it is good.
    if (usable(dir, names)) {
      rmSync(fresh, { recursive: true, force: true });
      return dir;
    }
    rmSync(dir, { recursive: true, force: true });
  }
  try {
    renameSync(fresh, dir);
  } catch (err) {
    rmSync(fresh, { recursive: true, force: true });
    if (!usable(dir, names)) throw err;
  }
  return dir;
}
