import { z } from "zod";
import { asBodyFields } from "../field-names.ts";
import { sshKeyJson } from "../mappers/ssh-key.ts";
import { route } from "../route.ts";
import { displayName } from "../schemas.ts";
import { deleted, examples as sshEx, sshKey, sshKeyList } from "../wire/ssh-key.ts";
import { id, manage, required, viewServices } from "./machine-common.ts";

export const sshKeyRoutes = [
  route({
    method: "get",
    path: "/ssh-keys",
    tag: "SSH keys",
    summary: "Stored public keys",
    auth: { scope: "read", permissions: [...viewServices] },
    response: sshKeyList,
    example: sshEx.sshKeyList,
    handler: async ({ clients, caller }) => ({
      data: { ssh_keys: (await clients.compute.listSshKeys({ caller })).sshKeys.map(sshKeyJson) },
    }),
  }),
  route({
    method: "post",
    path: "/ssh-keys",
    tag: "SSH keys",
    summary: "Store a public key line; the answer has the key and its fingerprint",
    auth: { scope: "services", permissions: [...manage] },
    errors: ["CONFLICT"],
    body: z.object({
      name: displayName,
      publicKey: z.string({ error: "is required" }).min(1, { error: "is required" }).max(16_384),
    }),
    successStatus: 201,
    response: sshKey,
    example: sshEx.sshKey,
    handler: async ({ clients, caller, body }) => {
      const { sshKey } = await asBodyFields(
        clients.compute.createSshKey({ caller, name: body.name, publicKey: body.publicKey }),
        { public_key: "publicKey" },
      );
      return { data: sshKeyJson(required(sshKey, "the SSH key")) };
    },
  }),
  route({
    method: "delete",
    path: "/ssh-keys/:id",
    tag: "SSH keys",
    summary: "Remove one stored key",
    auth: { scope: "services", permissions: [...manage] },
    params: id,
    response: deleted,
    example: sshEx.deleted,
    handler: async ({ clients, caller, params }) => {
      await clients.compute.deleteSshKey({ caller, sshKeyId: params.id });
      return { data: { id: params.id, deleted: true } };
    },
  }),
];
