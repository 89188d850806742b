/**
 * Request validation declared in the contract: the buf.validate rules on a request message are
 * checked by protovalidate before its handler runs, and a request that breaks them is refused
 * with BAD_REQUEST naming each field, as a hand-written check would.
 */
import { type DescMessage, hasOption, type Message } from "@bufbuild/protobuf";
import { pathToString } from "@bufbuild/protobuf/reflect";
import { createValidator, type Violation } from "@bufbuild/protovalidate";
import {
  field as fieldRules,
  message as messageRules,
  oneof as oneofRules,
} from "@bufbuild/protovalidate/gen/buf/validate/validate_pb.js";
import { apiError, type FieldViolation } from "./errors.ts";

const validator = createValidator();

/** Whether a message, or one it contains, declares any rule (decided once per method). */
function declaresRules(desc: DescMessage, seen = new Set<DescMessage>()): boolean {
  if (seen.has(desc)) return false;
  seen.add(desc);
  if (hasOption(desc, messageRules) || desc.oneofs.some((o) => hasOption(o, oneofRules))) return true;
  return desc.fields.some(
    (f) => hasOption(f, fieldRules) || (f.message !== undefined && declaresRules(f.message, seen)),
  );
}

/** A violation as the error model reports it: the proto field path, and a sentence naming it. */
function fieldViolation(v: Violation): FieldViolation {
  const field = pathToString(v.field);
  // protovalidate says "value is required"; the field's name stands in for "value".
  return { field, message: `${field} ${v.message.replace(/^value /, "")}` };
}

/**
 * The check for one method's requests, or undefined when its request declares no rule (so a
 * method without rules, such as auth's Verify on the hot path, pays nothing).
 */
export function requestCheck(desc: DescMessage): ((req: Message) => void) | undefined {
  if (!declaresRules(desc)) return undefined;
  // protovalidate plans a message's rules (compiling their CEL) on its first validation, so a
  // method's first request waits for its plan: about 1 ms for most, 20-90 ms for the admin
  // catalogue's largest. Planning every method when the server started cost a stack 1.7 CPU-s of
  // its 8.8 and 3 s of its start on a slow host (docs/benchmarks.md), for methods most processes
  // never serve.
  return (req) => {
    const result = validator.validate(desc, req);
    if (result.kind === "valid") return;
    // A rule protovalidate cannot evaluate is a defect of the contract: it fails as an internal error.
    if (result.kind === "error") throw result.error;
    const violations = result.violations.map(fieldViolation);
    throw apiError("BAD_REQUEST", violations.map((v) => v.message).join("; "), { violations });
  };
}
