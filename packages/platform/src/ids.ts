import { uuidv7 } from "uuidv7";

export const newId = (): string => uuidv7();

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => uuidPattern.test(s);
