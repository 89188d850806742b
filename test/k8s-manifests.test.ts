/**
 * The Kubernetes manifests: every overlay renders with kustomize, every object matches its
 * Kubernetes schema, and the deployment rules hold (one set of objects per service, only the
 * gateway reachable from outside, pinned images, probes, limits, no Secret in the repository's
 * base or production). Needs no stack; kustomize is kubectl's own.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { productionSecretProblems } from "@hb/platform/production-secrets";
import { testSwitches } from "@hb/platform/test-switches";
import {
  allSchemaProblems,
  copyOfManifests,
  findKubectl,
  K8S_DIR,
  type K8sObject,
  parseYamlObjects,
  podSpec,
  render,
  schemaProblems,
} from "./support/k8s-manifests.ts";

const SERVICES = ["gateway", "auth", "compute", "billing", "webhooks"];
const TARGETS = ["base", "overlays/development", "overlays/production", "dependencies"];
const kubectl = findKubectl();
const noKubectl = !kubectl && "kubectl with kustomize v5 is not on PATH: nothing can be rendered";

const named = (objects: K8sObject[], kind: string, name: string) =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);
const ofKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const workloads = (objects: K8sObject[]) =>
  objects.filter((o) => o.kind === "Deployment" || o.kind === "Job");

describe("Kubernetes manifests, file by file", () => {
  it("every object in base and dependencies matches its Kubernetes schema", async () => {
    for (const dir of ["base", "dependencies"]) {
      for (const file of readdirSync(path.join(K8S_DIR, dir)).filter((f) => f.endsWith(".yaml"))) {
        if (file === "kustomization.yaml" || file === "nats-values.yaml") continue;
        const objects = parseYamlObjects(readFileSync(path.join(K8S_DIR, dir, file), "utf8"));
        assert.ok(objects.length > 0, `${dir}/${file} holds no object`);
        assert.deepEqual(await allSchemaProblems(objects), [], `${dir}/${file}`);
      }
    }
  });

  it("refuses an object with a field of the wrong type, a missing required field or an unknown kind", async () => {
    const [deployment] = parseYamlObjects(readFileSync(path.join(K8S_DIR, "base/auth.yaml"), "utf8")).filter(
      (o) => o.kind === "Deployment",
    );
    assert.ok(deployment);
    const broken = structuredClone(deployment);
    broken.spec.replicas = "two";
    delete broken.spec.template.spec.containers[0].name;
    broken.spec.template.spec.containers[0].livenessProbe.periodSeconds = "often";
    const problems = await schemaProblems(broken);
    assert.ok(
      problems.some((p) => p.includes("/spec/replicas") && p.includes("integer")),
      problems.join("\n"),
    );
    assert.ok(
      problems.some((p) => p.includes("/spec/template/spec/containers/0") && p.includes("name")),
      problems.join("\n"),
    );
    assert.ok(
      problems.some((p) => p.includes("livenessProbe/periodSeconds")),
      problems.join("\n"),
    );
    assert.deepEqual(await schemaProblems({ ...deployment, apiVersion: "apps/v1beta9" }), [
      "Deployment/auth: no schema for apps/v1beta9/Deployment",
    ]);
  });
});

describe("test hooks stay out of production", () => {
  it("no file of base, production or the image sets a test switch (BILLING_CLOCK_CONTROL, ...)", () => {
    const files = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)],
      );
    const production = [
      ...files(path.join(K8S_DIR, "base")),
      ...files(path.join(K8S_DIR, "overlays/production")),
      path.join(K8S_DIR, "../Dockerfile"),
    ];
    assert.ok(production.length > 5);
    // The services would refuse to start with one (loadConfig); the manifests never ship one.
    const setting = production.flatMap((f) => {
      const text = readFileSync(f, "utf8");
      return Object.keys(testSwitches)
        .filter((name) => text.includes(name))
        .map((name) => `${path.relative(K8S_DIR, f)}: ${name}`);
    });
    assert.deepEqual(setting, []);
  });
});

describe("Kubernetes manifests, rendered", { skip: noKubectl }, () => {
  const rendered = new Map<string, K8sObject[]>();
  let copy: ReturnType<typeof copyOfManifests>;
  before(async () => {
    copy = copyOfManifests();
    const objects = await Promise.all(TARGETS.map((target) => render(kubectl!, path.join(copy.dir, target))));
    for (const [i, target] of TARGETS.entries()) rendered.set(target, objects[i]!);
  });
  after(() => copy?.remove());
  const get = (target: string) => rendered.get(target) ?? assert.fail(`${target} was not rendered`);

  for (const target of TARGETS) {
    it(`${target} renders and every object matches its Kubernetes schema`, async () => {
      assert.ok(get(target).length > 0);
      assert.deepEqual(await allSchemaProblems(get(target)), []);
    });
  }

  it("kustomize refuses a kustomization that names a missing file", async () => {
    const broken = copyOfManifests();
    try {
      const file = path.join(broken.dir, "base/kustomization.yaml");
      writeFileSync(file, readFileSync(file, "utf8").replace("- billing.yaml", "- biling.yaml"));
      await assert.rejects(render(kubectl!, path.join(broken.dir, "overlays/production")), /biling\.yaml/);
    } finally {
      broken.remove();
    }
  });

  it("each service has a Deployment, Service, ServiceAccount, PodDisruptionBudget and NetworkPolicy", () => {
    for (const target of ["overlays/development", "overlays/production"]) {
      for (const service of SERVICES) {
        for (const kind of [
          "Deployment",
          "Service",
          "ServiceAccount",
          "PodDisruptionBudget",
          "NetworkPolicy",
        ]) {
          assert.ok(named(get(target), kind, service), `${target}: ${kind}/${service} is missing`);
        }
        assert.equal(podSpec(named(get(target), "Deployment", service)!).serviceAccountName, service);
      }
    }
  });

  it("only the gateway is reachable from outside", () => {
    const objects = get("overlays/production");
    for (const service of ofKind(objects, "Service")) {
      assert.ok(
        !["LoadBalancer", "NodePort"].includes(service.spec.type),
        `Service/${service.metadata.name} is exposed`,
      );
    }
    const ingresses = ofKind(objects, "Ingress");
    const backends = ingresses.flatMap((i) =>
      i.spec.rules.flatMap((r: { http: { paths: Array<{ backend: { service: { name: string } } }> } }) =>
        r.http.paths.map((p) => p.backend.service.name),
      ),
    );
    assert.deepEqual([...new Set(backends)], ["gateway"]);
    for (const service of SERVICES.filter((s) => s !== "gateway")) {
      const policy = named(objects, "NetworkPolicy", service)!;
      assert.deepEqual(policy.spec.podSelector.matchLabels, { app: service });
      assert.deepEqual(policy.spec.policyTypes, ["Ingress"]);
      for (const rule of policy.spec.ingress) {
        assert.ok(rule.from?.length > 0, `NetworkPolicy/${service} admits any source`);
        for (const peer of rule.from) {
          assert.deepEqual(peer, {
            podSelector: { matchLabels: { "app.kubernetes.io/part-of": "hosting-platform" } },
          });
        }
      }
    }
    // The platform's own pods carry the label the backends admit; a pod from elsewhere does not.
    for (const workload of workloads(objects)) {
      assert.equal(workload.spec.template.metadata.labels["app.kubernetes.io/part-of"], "hosting-platform");
    }
  });

  it("every container runs a pinned image as non-root on a read-only root, with requests and limits", () => {
    for (const target of ["overlays/development", "overlays/production"]) {
      for (const workload of workloads(get(target))) {
        const where = `${target}: ${workload.kind}/${workload.metadata.name}`;
        const pod = podSpec(workload);
        assert.equal(pod.securityContext.runAsNonRoot, true, where);
        assert.equal(pod.automountServiceAccountToken, false, where);
        for (const c of pod.containers) {
          assert.match(
            c.image,
            /^[^:@]+(:[\w.-]+|@sha256:[0-9a-f]{64})$/,
            `${where}: image ${c.image} has no tag`,
          );
          assert.doesNotMatch(c.image, /:latest$/, `${where}: a moving tag`);
          assert.equal(c.securityContext.readOnlyRootFilesystem, true, where);
          assert.equal(c.securityContext.allowPrivilegeEscalation, false, where);
          assert.deepEqual(c.securityContext.capabilities.drop, ["ALL"], where);
          for (const bound of ["requests", "limits"]) {
            assert.ok(c.resources[bound]?.cpu && c.resources[bound]?.memory, `${where}: no ${bound}`);
          }
        }
      }
    }
    assert.match(
      named(get("overlays/production"), "Deployment", "gateway")!.spec.template.spec.containers[0].image,
      /^registry\.example\.com\/hosting-platform:/,
    );
  });

  it("every Deployment has startup, readiness and liveness probes", () => {
    for (const deployment of ofKind(get("overlays/production"), "Deployment")) {
      const [container] = podSpec(deployment).containers;
      for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) {
        assert.ok(container[probe], `Deployment/${deployment.metadata.name} has no ${probe}`);
      }
    }
  });

  it("configuration comes from the ConfigMap and secrets from Secrets that base and production do not contain", () => {
    for (const target of ["base", "overlays/production", "dependencies"]) {
      assert.deepEqual(ofKind(get(target), "Secret"), [], `${target} ships a Secret`);
    }
    for (const target of ["overlays/development", "overlays/production"]) {
      const objects = get(target);
      const [config] = ofKind(objects, "ConfigMap");
      assert.ok(config);
      for (const workload of workloads(objects)) {
        const [first, second] = podSpec(workload).containers[0].envFrom;
        assert.deepEqual(first, { configMapRef: { name: config.metadata.name } });
        assert.match(second.secretRef.name, /^platform-secrets(-[a-z0-9]{10})?$/);
      }
    }
    assert.equal(ofKind(get("overlays/production"), "ConfigMap")[0]?.data.NODE_ENV, "production");
  });

  it("the key pepper's Secret reaches the auth service alone", () => {
    for (const target of ["overlays/development", "overlays/production"]) {
      const readers = workloads(get(target)).filter((w) =>
        podSpec(w).containers[0].envFrom.some((s: { secretRef?: { name: string } }) =>
          s.secretRef?.name.startsWith("auth-secrets"),
        ),
      );
      assert.deepEqual(
        readers.map((w) => w.metadata.name),
        ["auth"],
        target,
      );
    }
  });

  it("each identity has a certificate from the internal CA, mounted by its own workload alone", () => {
    for (const target of ["overlays/development", "overlays/production"]) {
      const objects = get(target);
      const certs = ofKind(objects, "Certificate");
      const identities = [...SERVICES, "admin-panel", "portal", "admin"];
      for (const name of identities) {
        const cert = certs.find((c) => c.spec.commonName === name);
        assert.ok(cert, `${target}: no Certificate for ${name}`);
        assert.equal(cert.spec.secretName, `${name}-tls`);
        assert.equal(cert.spec.issuerRef.name, "internal-ca");
      }
      for (const workload of workloads(objects)) {
        const mounted = (podSpec(workload).volumes ?? [])
          .map((v: { secret?: { secretName: string } }) => v.secret?.secretName)
          .filter(Boolean)
          .sort();
        const own = workload.metadata.name;
        // compute also mounts the lxd driver's client certificate (an optional Secret).
        const expected =
          own === "gateway"
            ? ["admin-panel-tls", "gateway-tls", "portal-tls"]
            : own === "migrate"
              ? []
              : own === "compute"
                ? ["compute-lxd", "compute-tls"]
                : [`${own}-tls`];
        assert.deepEqual(mounted, expected, `${target}: ${workload.kind}/${own}`);
      }
    }
  });

  it("probes reach a plaintext health-only port the NetworkPolicies keep closed to pods", () => {
    const objects = get("overlays/production");
    for (const service of SERVICES.filter((s) => s !== "gateway")) {
      const [container] = podSpec(named(objects, "Deployment", service)!).containers;
      const health = container.env.find((e: { name: string }) => e.name === "HEALTH_PORT")?.value;
      assert.ok(health, `${service} sets no HEALTH_PORT`);
      for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) {
        assert.equal(container[probe].grpc?.port, Number(health), `${service} ${probe}`);
      }
      const policy = named(objects, "NetworkPolicy", service)!;
      const open = policy.spec.ingress.flatMap((r: { ports: { port: number }[] }) =>
        r.ports.map((p) => p.port),
      );
      assert.ok(!open.includes(Number(health)), `${service}'s NetworkPolicy opens the health port`);
    }
  });

  it("each backend reads its own database role's URL, the gateway none", () => {
    for (const target of ["overlays/development", "overlays/production"]) {
      for (const workload of workloads(get(target))) {
        const [container] = podSpec(workload).containers;
        const db = (container.env ?? []).find((e: { name: string }) => e.name === "DATABASE_URL");
        const name = workload.metadata.name;
        if (name === "gateway") {
          assert.equal(db, undefined, target);
          continue;
        }
        assert.match(db?.valueFrom?.secretKeyRef?.name ?? "", /^database-urls(-[a-z0-9]{10})?$/, name);
        assert.equal(db.valueFrom.secretKeyRef.key, name, `${target}: ${name}`);
      }
    }
  });

  it("the development Secrets are generated from git-ignored files", () => {
    const names = ofKind(get("overlays/development"), "Secret").map((s) => s.metadata.name);
    assert.equal(names.length, 3);
    assert.ok(
      names.some((n) => /^platform-secrets-[a-z0-9]{10}$/.test(n)),
      names.join(),
    );
    assert.ok(
      names.some((n) => /^auth-secrets-[a-z0-9]{10}$/.test(n)),
      names.join(),
    );
    assert.ok(
      names.some((n) => /^database-urls-[a-z0-9]{10}$/.test(n)),
      names.join(),
    );
    for (const file of ["secrets.env", "auth-secrets.env", "database-urls.env"]) {
      const ignored = spawnSync("git", [
        "check-ignore",
        "-q",
        path.join(K8S_DIR, "overlays/development", file),
      ]);
      assert.equal(ignored.status, 0, `overlays/development/${file} is not git-ignored`);
    }
  });

  it("the example secrets are refused by the production check", () => {
    const settings: Record<string, string> = {};
    for (const file of ["secrets.env.example", "auth-secrets.env.example"]) {
      for (const line of readFileSync(path.join(K8S_DIR, "overlays/development", file), "utf8").split("\n")) {
        const m = /^([A-Z_]+)=(.*)$/.exec(line);
        if (m) settings[m[1]!] = m[2]!;
      }
    }
    const refused = productionSecretProblems(settings).map((p) => p.split(":")[0]);
    assert.deepEqual(refused.sort(), ["KEY_PEPPER", "REDIS_URL"]);
    // Each line of database-urls.env becomes a workload's DATABASE_URL.
    const urls = readFileSync(path.join(K8S_DIR, "overlays/development/database-urls.env.example"), "utf8")
      .split("\n")
      .map((line) => /^([a-z]+)=(.*)$/.exec(line))
      .filter((m) => m !== null);
    assert.deepEqual(urls.map((m) => m[1]).sort(), ["auth", "billing", "compute", "migrate", "webhooks"]);
    for (const m of urls) {
      assert.deepEqual(
        productionSecretProblems({ DATABASE_URL: m[2]! }).map((p) => p.split(":")[0]),
        ["DATABASE_URL"],
        m[1],
      );
    }
  });

  it("the gateway and webhooks scale with HorizontalPodAutoscalers and a Job applies the migrations", () => {
    const objects = get("overlays/production");
    const targets = ofKind(objects, "HorizontalPodAutoscaler").map((h) => h.spec.scaleTargetRef.name);
    assert.deepEqual(targets.sort(), ["gateway", "webhooks"]);
    for (const name of targets) {
      assert.equal(
        named(objects, "Deployment", name)!.spec.replicas,
        undefined,
        `Deployment/${name} fights its HPA`,
      );
    }
    const job = named(objects, "Job", "migrate")!;
    assert.deepEqual(podSpec(job).containers[0].command, ["node", "scripts/migrate.ts"]);
  });

  it("PostgreSQL and Redis are their operators' resources, not hand-written StatefulSets", () => {
    const objects = get("dependencies");
    assert.ok(named(objects, "Cluster", "postgres"));
    assert.ok(named(objects, "Redis", "redis"));
    for (const target of TARGETS) assert.deepEqual(ofKind(get(target), "StatefulSet"), [], target);
  });
});
