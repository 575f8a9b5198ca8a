// node:http and node:https as their CommonJS modules. An ESM import of node:http builds the
// module's namespace, whose WebSocket getters load all of Node's fetch implementation (undici,
// about 1 MB of source) into the process, whether it ever sends a request or not.
import type * as Http from "node:http";
import type * as Https from "node:https";

export const nodeHttp = (): typeof Http => process.getBuiltinModule("node:http");
export const nodeHttps = (): typeof Https => process.getBuiltinModule("node:https");
