import { type DescField, type DescMessage, type DescMethod, ScalarType } from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import {
  ComputeService,
  ListMachineRecordsResponseBytesSchema,
} from "@hb/contracts/hb/compute/v1/compute_pb";

type MethodsOf<S> = S extends GenService<infer M> ? M : never;

/** `service` with the answer of method `name` read as `output`, a message with the same wire. */
type WithOutput<S, K extends keyof MethodsOf<S>, O extends DescMessage> = GenService<
  Omit<MethodsOf<S>, K> & Record<K, Omit<MethodsOf<S>[K], "output"> & { output: O }> & GenServiceMethods
>;

/** Whether `view` reads what `actual` writes: the same fields by number, a message read as its bytes. */
function sameWire(view: DescMessage, actual: DescMessage): string | undefined {
  for (const v of view.fields) {
    const a: DescField | undefined = actual.fields.find((f) => f.number === v.number);
    if (!a || a.name !== v.name) return `${actual.typeName} has no field ${v.number} ${v.name}`;
    const isList = (f: DescField) => f.fieldKind === "list";
    const isMessage = (f: DescField) =>
      f.fieldKind === "message" || (f.fieldKind === "list" && f.listKind === "message");
    const isBytes = (f: DescField) =>
      (f.fieldKind === "scalar" || (f.fieldKind === "list" && f.listKind === "scalar")) &&
      f.scalar === ScalarType.BYTES;
    const messageAsBytes = isMessage(a) && isBytes(v) && isList(a) === isList(v);
    const same =
      a.fieldKind === v.fieldKind &&
      (a.fieldKind !== "scalar" || (v.fieldKind === "scalar" && a.scalar === v.scalar)) &&
      (a.fieldKind !== "list" || (v.fieldKind === "list" && a.listKind === v.listKind));
    if (!messageAsBytes && !same)
      return `${view.typeName}.${v.name} does not read ${actual.typeName}.${a.name}`;
  }
  return undefined;
}

/**
 * The service with one method's answer read as another message of the same wire: the call is the
 * same (path, request, what the server sends), only how this end decodes the answer differs.
 */
function withOutput<
  S extends GenService<GenServiceMethods>,
  K extends keyof MethodsOf<S> & string,
  O extends DescMessage,
>(service: S, name: K, output: O): WithOutput<S, K, O> {
  const method = service.method[name] as DescMethod;
  const wrong = sameWire(output, method.output);
  if (wrong) throw new Error(wrong);
  const read: DescMethod = { ...method, output } as DescMethod;
  return {
    ...service,
    methods: service.methods.map((m) => (m === method ? read : m)),
    method: { ...service.method, [name]: read },
  } as unknown as WithOutput<S, K, O>;
}

/**
 * ComputeService as the customer API calls it: ListMachineRecords' answer is read with each record
 * left as its bytes, which the VPS and dedicated lists write to JSON themselves
 * (mappers/machine-page.ts); every other method as generated.
 */
export const ComputeApi = withOutput(
  ComputeService,
  "listMachineRecords",
  ListMachineRecordsResponseBytesSchema,
);
