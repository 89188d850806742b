/** A Lua script run by name (EVALSHA), defined on a client with ioredis's defineCommand. */
export interface LuaScript {
  numberOfKeys: number;
  lua: string;
}
