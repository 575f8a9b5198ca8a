// Route schemas compiled once per server, not once per route. The consumer and publish routes
// are mounted under up to six prefixes, each mount with schema objects of its own: Fastify would
// generate a serializer for every response schema of every mount (hundreds of functions for a
// few dozen distinct schemas) and ajv a validator for every distinct object. Here each distinct
// schema (by its JSON) is compiled once and the function shared: the same code Fastify's default
// compilers generate, with a fraction of the start-up time and memory. And each is compiled on
// the first request that needs it, not at start: a server is ready sooner, and the schemas of
// routes nobody calls (the admin API on a read replica, most of the hidden mounts) cost nothing.
import { createRequire } from "node:module";
import type { ValidateFunction } from "ajv";
import type { FastifyServerOptions } from "fastify";
import type fastJsonStringifyModule from "fast-json-stringify";

// fast-json-stringify (and the ajv it loads, some 70 modules) is loaded when the first serializer
// is built, on the first request that needs one, not as the server starts. It is CommonJS.
const require = createRequire(import.meta.url);
const fastJsonStringify = (
  ...args: Parameters<typeof fastJsonStringifyModule>
): ReturnType<typeof fastJsonStringifyModule> =>
  (require("fast-json-stringify") as typeof fastJsonStringifyModule)(...args);

type SerializerFactory = NonNullable<
  NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]
>["buildSerializer"];
type AjvOptions = NonNullable<FastifyServerOptions["ajv"]>;
type Ajv = Parameters<NonNullable<AjvOptions["onCreate"]>>[0];
type Serializer = (doc: unknown) => string;

/** Route schemas' compiled functions, each built on its first call. */
export class DeferredCompiles {
  private readonly pending = new Set<() => unknown>();

  /** A function that builds `build()` on its first call and then calls it. */
  private deferred<F>(build: () => F): () => F {
    let built: F | undefined;
    const get = (): F => {
      if (built === undefined) {
        built = build();
        this.pending.delete(get);
      }
      return built;
    };
    this.pending.add(get);
    return get;
  }

  serializer(build: () => Serializer): Serializer {
    const get = this.deferred(build);
    return (doc) => get()(doc);
  }

  /**
   * An ajv validator. Fastify reads `errors` after a failed call, and `schemaEnv` to know it may
   * hand the validator the request as the value's parent (so a coerced root value is kept).
   */
  validator(build: () => ValidateFunction): ValidateFunction {
    const get = this.deferred(build);
    const validate = function (this: unknown, ...args: Parameters<ValidateFunction>) {
      const fn = get();
      const valid = fn.apply(this, args);
      validate.errors = fn.errors;
      return valid;
    } as ValidateFunction;
    Object.defineProperty(validate, "schemaEnv", { get: () => get().schemaEnv });
    return validate;
  }

  /** Compiles every schema not yet compiled (a test's check that all of them compile). */
  compileAll(): number {
    const pending = [...this.pending];
    for (const get of pending) get();
    return pending.length;
  }
}

/**
 * A serializer factory for `schemaController.compilersFactory.buildSerializer`: fast-json-stringify
 * with the options Fastify's default passes (the server's serializerOpts and the shared schemas),
 * one function per distinct schema and shared schemas. Which schemas are the same is decided on
 * a route's first response too: writing every route's schemas out as JSON was a tenth of start.
 */
export function sharedSerializers(deferred: DeferredCompiles): NonNullable<SerializerFactory> {
  const compiled = new Map<string, Serializer>();
  return (externalSchemas, serializerOpts) => {
    const shared = (externalSchemas ?? {}) as Record<string, fastJsonStringifyModule.Schema>;
    let context: string | undefined;
    return ({ schema }) =>
      deferred.serializer(() => {
        context ??= JSON.stringify([serializerOpts, shared]);
        const key = `${context}${JSON.stringify(schema)}`;
        let fn = compiled.get(key);
        if (fn === undefined) {
          // As Fastify's default: a schema is never among its own shared schemas.
          const id = (schema as { $id?: unknown }).$id;
          const own = typeof id === "string" && id in shared;
          const schemas = own
            ? Object.fromEntries(Object.entries(shared).filter(([k]) => k !== id))
            : shared;
          fn = fastJsonStringify(schema as fastJsonStringifyModule.Schema, {
            ...serializerOpts,
            schema: schemas,
          });
          compiled.set(key, fn);
        }
        return fn;
      });
  };
}

/**
 * For the `ajv.onCreate` server option: the ajv instance Fastify validates with compiles each
 * distinct schema once (ajv itself only recognises the same object again). The instance stays
 * Fastify's own, so its options and the header names' lower-casing are unchanged.
 */
export function compileEachSchemaOnce(ajv: Ajv): void {
  const compile = ajv.compile.bind(ajv);
  const compiled = new Map<string, ReturnType<Ajv["compile"]>>();
  ajv.compile = ((schema: Parameters<Ajv["compile"]>[0], meta?: boolean) => {
    const key = `${String(meta)}${JSON.stringify(schema)}`;
    let fn = compiled.get(key);
    if (fn === undefined) {
      fn = compile(schema, meta);
      compiled.set(key, fn);
    }
    return fn;
  }) as Ajv["compile"];
}
