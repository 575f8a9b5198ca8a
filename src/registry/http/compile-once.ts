// Route schemas compiled once per server, not once per route. The consumer and publish routes
// are mounted under up to six prefixes, each mount with schema objects of its own: Fastify would
// generate a serializer for every response schema of every mount (hundreds of functions for a
// few dozen distinct schemas) and ajv a validator for every distinct object. Here each distinct
// schema (by its JSON) is compiled once and the function shared: the same code Fastify's default
// compilers generate, with a fraction of the start-up time and memory.
import type { FastifyServerOptions } from "fastify";
import fastJsonStringify from "fast-json-stringify";

type SerializerFactory = NonNullable<
  NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]
>["buildSerializer"];
type AjvOptions = NonNullable<FastifyServerOptions["ajv"]>;
type Ajv = Parameters<NonNullable<AjvOptions["onCreate"]>>[0];
type Serializer = (doc: unknown) => string;

/**
 * A serializer factory for `schemaController.compilersFactory.buildSerializer`: fast-json-stringify
 * with the options Fastify's default passes (the server's serializerOpts and the shared schemas),
 * one function per distinct schema and shared schemas.
 */
export function sharedSerializers(): NonNullable<SerializerFactory> {
  const compiled = new Map<string, Serializer>();
  return (externalSchemas, serializerOpts) => {
    const shared = (externalSchemas ?? {}) as Record<string, fastJsonStringify.Schema>;
    const context = JSON.stringify([serializerOpts, shared]);
    return ({ schema }) => {
      const key = `${context}${JSON.stringify(schema)}`;
      let fn = compiled.get(key);
      if (fn === undefined) {
        // As Fastify's default: a schema is never among its own shared schemas.
        const id = (schema as { $id?: unknown }).$id;
        const own = typeof id === "string" && id in shared;
        const schemas = own
          ? Object.fromEntries(Object.entries(shared).filter(([k]) => k !== id))
          : shared;
        fn = fastJsonStringify(schema as fastJsonStringify.Schema, {
          ...serializerOpts,
          schema: schemas,
        });
        compiled.set(key, fn);
      }
      return fn;
    };
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
