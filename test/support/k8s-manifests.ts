/**
 * Renders the Kubernetes manifests under deploy/k8s with kustomize (kubectl's built-in one) and
 * validates every object against the Kubernetes API schemas that kubernetes-models ships
 * (offline: types, required fields, enums, formats). Used by test/k8s-manifests.test.ts.
 */
import { execFile, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { parseAllDocuments } from "yaml";

export const K8S_DIR = path.join(import.meta.dirname, "../../deploy/k8s");

/** A Kubernetes object as rendered: only the fields every object has are typed. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  // Objects are checked field by field in the tests; their shapes differ per kind.
  // biome-ignore lint/suspicious/noExplicitAny: a rendered manifest is untyped YAML
  [field: string]: any;
}

/** kubectl with kustomize v5 (components, labels), or undefined when the machine has none. */
export function findKubectl(): string | undefined {
  const probe = spawnSync("kubectl", ["version", "--client", "-o", "json"], {
    encoding: "utf8",
    timeout: 10_000,
  });
  if (probe.status !== 0) return undefined;
  const version = JSON.parse(probe.stdout) as { kustomizeVersion?: string };
  const major = Number(/^v(\d+)/.exec(version.kustomizeVersion ?? "")?.[1]);
  return major >= 5 ? "kubectl" : undefined;
}

/**
 * A private copy of deploy/k8s, so a test can add the development overlay's git-ignored
 * secrets files (from their examples) or break a file without touching the repository.
 */
export function copyOfManifests(): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), "hb-k8s-"));
  cpSync(K8S_DIR, dir, { recursive: true });
  for (const file of ["secrets.env", "auth-secrets.env", "database-urls.env"]) {
    cpSync(
      path.join(dir, "overlays/development", `${file}.example`),
      path.join(dir, "overlays/development", file),
    );
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `kubectl kustomize <dir>`, parsed; throws with kustomize's message when it refuses. */
export async function render(kubectl: string, dir: string): Promise<K8sObject[]> {
  try {
    const { stdout } = await promisify(execFile)(kubectl, ["kustomize", dir], { encoding: "utf8" });
    return parseYamlObjects(stdout);
  } catch (err) {
    throw new Error(`kustomize refused ${dir}: ${(err as { stderr?: string }).stderr ?? err}`);
  }
}

export function parseYamlObjects(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(doc.errors.map((e) => e.message).join("\n"));
      return doc.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null);
}

/**
 * Custom resources whose CRD schema is not shipped by any npm package (and a schema fetched from
 * the operators' repositories may not be committed here): only their identity and a spec are
 * checked. Any other kind without a schema fails validation.
 */
const CUSTOM_RESOURCES_WITHOUT_SCHEMA = new Set([
  "postgresql.cnpg.io/v1/Cluster",
  "redis.redis.opstreelabs.in/v1beta2/Redis",
]);

type ModelClass = new (data: unknown) => { validate(): void };

/** The schema problems of one object, empty when it is valid. */
export async function schemaProblems(obj: K8sObject): Promise<string[]> {
  const id = `${obj.apiVersion}/${obj.kind}`;
  const where = `${obj.kind}/${obj.metadata?.name ?? "?"}`;
  if (CUSTOM_RESOURCES_WITHOUT_SCHEMA.has(id)) {
    return obj.metadata?.name && obj.spec && typeof obj.spec === "object"
      ? []
      : [`${where}: needs metadata.name and spec`];
  }
  // kubernetes-models lays its models out as <group>/<version>/<Kind>, the core group as v1/<Kind>.
  let Model: ModelClass | undefined;
  try {
    // cert-manager's resources come from its own models package, the rest from kubernetes-models.
    const from = obj.apiVersion.startsWith("cert-manager.io/")
      ? "@kubernetes-models/cert-manager"
      : "kubernetes-models";
    const module = (await import(`${from}/${obj.apiVersion}/${obj.kind}`)) as Record<string, ModelClass>;
    Model = module[obj.kind];
  } catch {
    Model = undefined;
  }
  if (!Model) return [`${where}: no schema for ${id}`];
  try {
    new Model(withUnwrappedBase64(obj)).validate();
    return [];
  } catch (err) {
    const errors = (err as { errors?: Array<{ instancePath: string; message?: string }> }).errors;
    return (
      errors?.map((e) => `${where}${e.instancePath}: ${e.message}`) ?? [`${where}: ${(err as Error).message}`]
    );
  }
}

/**
 * kustomize wraps a long base64 value of a Secret's data over several lines; the API server's
 * decoder skips line breaks, the schema's "byte" format does not.
 */
function withUnwrappedBase64(obj: K8sObject): K8sObject {
  if (obj.kind !== "Secret" || !obj.data) return obj;
  const data = Object.fromEntries(
    Object.entries(obj.data as Record<string, string>).map(([k, v]) => [k, v.replace(/\s+/g, "")]),
  );
  return { ...obj, data };
}

export async function allSchemaProblems(objects: K8sObject[]): Promise<string[]> {
  return (await Promise.all(objects.map(schemaProblems))).flat();
}

/** The pod spec of a Deployment or Job. */
export const podSpec = (obj: K8sObject) => obj.spec?.template?.spec;
