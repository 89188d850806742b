import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { type PowerActionResult, PowerActionResultSchema } from "@hb/contracts/hb/compute/v1/actions_pb";
import { apiError, type Sql, type TxSql } from "@hb/platform";
import { type ComputeDeps, callerId, type Handlers } from "./context.ts";
import type { JobOutcome, JobRow } from "./driver.ts";
import { instanceStates, kindFilter, powerActions } from "./enums.ts";
import { statsOf } from "./machine-info.ts";
import { assertControllable, hasInstance, lostMachine, type MachineRow, ownMachine } from "./machines.ts";
import { DISPATCH, dispatchedPowerAction, powerTable } from "./power.ts";

/** Machine control: power actions, the generic dispatcher, reinstall and password reset. */
export function createActions(sql: Sql, { jobs, drivers }: ComputeDeps): Handlers {
  /**
   * Accepts a job on the caller's machine under its row lock, then (lock released) hands it to
   * the driver. `prepare` runs the rules and any state change in the accepting transaction. A
   * provider's immediate refusal fails the call (424); the job is already recorded failed.
   */
  async function acceptAndLaunch(
    customerId: string,
    serviceId: string,
    kind: string,
    prepare: (m: MachineRow, tx: TxSql) => Promise<{ action: string; target: string }>,
    secret?: string,
  ): Promise<{ job: JobRow; outcome: JobOutcome | undefined }> {
    const { job, m } = await sql.begin(async (tx) => {
      const m = await ownMachine(tx, customerId, serviceId, kind, true);
      const { action, target } = await prepare(m, tx);
      return { job: await jobs.accept(tx, m, action, target), m };
    });
    // The password reaches the driver in memory only (JobRow.secret); the job row never holds it.
    const outcome = await jobs.launch(secret ? { ...job, secret } : job, m);
    if (outcome && !outcome.ok)
      throw outcome.lost ? lostMachine() : apiError("PROVIDER_ERROR", outcome.message);
    return { job, outcome };
  }

  /** A power action the machine's kind takes, accepted as a job. */
  async function power(customerId: string, m: MachineRow, kind: string, action: string) {
    const target = powerTable(m.kind)[action];
    const { job, outcome } = await acceptAndLaunch(customerId, m.service_id, kind, async (locked) => {
      assertControllable(locked, "power");
      return { action, target };
    });
    const result: PowerActionResult = create(PowerActionResultSchema, { jobId: job.id });
    if (outcome?.ok) result.reachedState = instanceStates.of(target);
    return result;
  }

  return {
    async runPowerAction(req) {
      const customerId = callerId(req.caller);
      const kind = kindFilter(req.kind);
      const m = await ownMachine(sql, customerId, req.serviceId, kind);
      const allowed = Object.keys(powerTable(m.kind));
      const action = powerActions.name(req.action);
      if (!action || !allowed.includes(action)) {
        const message = `must be one of ${allowed.join(", ")}`;
        throw apiError("BAD_REQUEST", `action ${message}`, { violations: [{ field: "action", message }] });
      }
      return { result: await power(customerId, m, kind, action) };
    },

    // Staff act on the customer's machine with the customer's own rules (the same power table and
    // controls); who asked is recorded by the admin panel's audit log.
    async deskRunPowerAction(req) {
      const m = await ownMachine(sql, req.customerId, req.serviceId, "");
      const allowed = Object.keys(powerTable(m.kind));
      const action = powerActions.name(req.action);
      if (!action || !allowed.includes(action)) {
        const message = `must be one of ${allowed.join(", ")}`;
        throw apiError("BAD_REQUEST", `action ${message}`, { violations: [{ field: "action", message }] });
      }
      return { result: await power(req.customerId, m, "", action) };
    },

    async dispatchAction(req) {
      const customerId = callerId(req.caller);
      const m = await ownMachine(sql, customerId, req.serviceId, "");
      if (!DISPATCH.includes(req.action)) {
        throw apiError(
          "ACTION_NOT_ALLOWED",
          `The ${m.provider} provider does not expose "${req.action}" to customers`,
        );
      }
      if (req.action === "stats") return { result: { case: "stats", value: await statsOf(drivers, m) } };
      if (req.action === "status") {
        if (!hasInstance(m)) throw apiError("NOT_FOUND", "The machine does not exist or its build failed");
        return { result: { case: "state", value: instanceStates.of(m.state) } };
      }
      const action = dispatchedPowerAction(m.kind, req.action);
      return { result: { case: "power", value: await power(customerId, m, "", action) } };
    },

    async reinstall(req) {
      const customerId = callerId(req.caller);
      const { job } = await acceptAndLaunch(
        customerId,
        req.serviceId,
        kindFilter(req.kind),
        async (m, tx) => {
          assertControllable(m, "reinstall");
          if (!m.os_images.includes(req.imageId)) {
            throw apiError("BAD_REQUEST", `"${req.imageId}" is not one of this machine's OS images`, {
              violations: [{ field: "image_id", message: "must be one of this machine's OS images" }],
            });
          }
          await tx`update machines set state = 'creating', os = ${req.imageId} where service_id = ${m.service_id}`;
          return { action: "reinstall", target: "running" };
        },
        req.password || undefined,
      );
      return { jobId: job.id };
    },

    async resetPassword(req) {
      const customerId = callerId(req.caller);
      let rebuild = false;
      const { job } = await acceptAndLaunch(
        customerId,
        req.serviceId,
        kindFilter(req.kind),
        async (m, tx) => {
          assertControllable(m, "password");
          if (m.kind === "dedicated") {
            // Platform-provisioned servers are rebuilt with a generated password.
            rebuild = true;
            await tx`update machines set state = 'creating' where service_id = ${m.service_id}`;
            return { action: "reinstall", target: "running" };
          }
          if (m.state !== "running")
            throw apiError("CONFLICT", "The machine must be running to reset its password");
          // The job's machine row carries the choice: the driver writes it into the machine's sshd.
          m.ssh_password_login = req.sshPasswordLogin ?? m.ssh_password_login;
          await tx`update machines set root_password_set_at = clock_timestamp(),
            ssh_password_login = ${m.ssh_password_login} where service_id = ${m.service_id}`;
          return { action: "password", target: m.state };
        },
        req.password || undefined,
      );
      return {
        jobId: job.id,
        generatedPassword: rebuild ? randomBytes(12).toString("base64url") : undefined,
      };
    },
  };
}
