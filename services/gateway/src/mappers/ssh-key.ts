import type { SshKey } from "@hb/contracts/hb/compute/v1/ssh_keys_pb";
import type { z } from "zod";
import type { sshKey } from "../wire/ssh-key.ts";
import { isoTime } from "./compute-wire.ts";

export const sshKeyJson = (k: SshKey): z.infer<typeof sshKey> => ({
  id: k.id,
  name: k.name,
  public_key: k.publicKey,
  fingerprint: k.fingerprint,
  created_at: isoTime(k.createdAt, "SSH key created_at"),
});
