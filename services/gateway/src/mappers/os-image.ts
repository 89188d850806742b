import type { OsImage } from "@hb/contracts/hb/compute/v1/machines_pb";
import type { z } from "zod";
import type { osImages } from "../wire/machine.ts";

type OsImageWire = z.infer<typeof osImages>["images"][number];

const osImageJson = (i: OsImage): OsImageWire => ({ id: i.id, name: i.name });

/** GET /vps/{id}/os-images and /dedicated/{id}/os-images. */
export const osImageListJson = (images: OsImage[]): z.infer<typeof osImages> => ({
  images: images.map(osImageJson),
});
