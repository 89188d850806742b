import { z } from "zod";

export const sshKey = z.object({
  id: z.uuid(),
  name: z.string(),
  public_key: z.string().describe("The stored public key line"),
  fingerprint: z.string().describe("SHA256:<base64>"),
  created_at: z.iso.datetime(),
});

export const sshKeyList = z.object({ ssh_keys: z.array(sshKey) });

/** The answer of a DELETE that removed one record (SSH key, snapshot). */
export const deleted = z.object({ id: z.uuid(), deleted: z.literal(true) });

const key = {
  id: "0193a5e1-4b2c-7d3e-9f4a-5b6c7d8e9f0a",
  name: "laptop",
  public_key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGv3e0Zf0xJ7bY8m2L4s5r6t7u8v9w0x1y2z3A4B5C6D laptop",
  fingerprint: "SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
  created_at: "2026-11-23T10:00:00.000Z",
};
export const examples = {
  sshKey: key,
  sshKeyList: { ssh_keys: [key] },
  deleted: { id: key.id, deleted: true as const },
};
