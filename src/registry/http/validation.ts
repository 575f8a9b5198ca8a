// How requests are checked against their route schemas. A query string or path parameter is
// text, so its schema's types are read from it ("10" is the integer 10, `true` the boolean), as
// Fastify's default does. A JSON body has types of its own: there a value of the wrong type is
// refused, not converted (Fastify's default would take 5 for the string "5" and ["a"] for "a",
// so the OpenAPI document could not say what a body must hold).
import { createRequire } from "node:module";
import type { Ajv, Options, ValidateFunction } from "ajv";
import type { FastifyServerOptions } from "fastify";
import type { DeferredCompiles } from "./compile-once.js";

/** The server's `ajv` option, as Fastify hands it to a validator factory. */
interface ServerAjvOptions {
  customOptions?: Options;
  onCreate?: (ajv: Ajv) => void;
}

type RouteValidator = (route: { schema: unknown; httpPart?: string }) => ValidateFunction;
type FastifyValidatorFactory = NonNullable<
  NonNullable<
    NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]
  >["buildValidator"]
>;
type ValidatorFactory = (
  externalSchemas: Record<string, unknown> | undefined,
  serverAjv: ServerAjvOptions | undefined,
) => RouteValidator;

const require = createRequire(import.meta.url);

/** Fastify's default ajv options: the URL's parts are read into their schemas' types. */
const URL_PARTS: Options = {
  coerceTypes: "array",
  useDefaults: true,
  removeAdditional: true,
  addUsedSchema: false,
  allErrors: false,
};

/**
 * A JSON body keeps its types: no coercion, and nothing removed from it. The admin bodies are
 * the configuration file's definitions, which put a length beside a `$ref` to a string type; as
 * the configuration's own check, this ajv does not ask for the type to be repeated there.
 */
const BODY: Options = {
  ...URL_PARTS,
  coerceTypes: false,
  removeAdditional: false,
  strictTypes: false,
};

/**
 * Formats the document names for its readers and schemathesis; the route checks them itself
 * (a page cursor is one this server issued: ERR_INVALID_CURSOR otherwise).
 */
export const OWN_FORMATS = ["mcpfleet-cursor"] as const;

/**
 * The validator factory for `schemaController.compilersFactory.buildValidator`: one ajv for the
 * URL's parts, one for bodies, each with the shared schemas, ajv-formats and the server's
 * `ajv.onCreate`.
 */
export function requestValidators(deferred: DeferredCompiles): FastifyValidatorFactory {
  // One compiler per set of shared schemas and options, as Fastify's default pools them: Fastify
  // asks every plugin context for a compiler, and one each would compile every schema again.
  const pool = new Map<string, RouteValidator>();
  const factory: ValidatorFactory = (externalSchemas, serverAjv) => {
    const key = JSON.stringify([externalSchemas ?? {}, serverAjv?.customOptions ?? {}]);
    const pooled = pool.get(key);
    if (pooled !== undefined) return pooled;
    const make = (options: Options): Ajv => {
      const AjvClass = (require("ajv") as { Ajv: new (o: Options) => Ajv }).Ajv;
      const ajv = new AjvClass({ ...options, ...serverAjv?.customOptions });
      (require("ajv-formats") as (a: Ajv) => Ajv)(ajv);
      for (const f of OWN_FORMATS) ajv.addFormat(f, true);
      serverAjv?.onCreate?.(ajv);
      for (const s of Object.values(externalSchemas ?? {})) ajv.addSchema(s as object);
      return ajv;
    };
    let url: Ajv | undefined;
    let body: Ajv | undefined;
    const compiler: RouteValidator = ({ schema, httpPart }) =>
      deferred.validator(() => {
        const ajv = httpPart === "body" ? (body ??= make(BODY)) : (url ??= make(URL_PARTS));
        const id = (schema as { $id?: unknown }).$id;
        const stored = typeof id === "string" ? ajv.getSchema(id) : undefined;
        return stored ?? ajv.compile(schema as object);
      });
    pool.set(key, compiler);
    return compiler;
  };
  // Fastify's type has the compiler take a schema; it is called with the route (schema, httpPart).
  return factory as unknown as FastifyValidatorFactory;
}
