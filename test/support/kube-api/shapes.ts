// Merge shapes: which lists are associative (and by which keys) or sets, and which maps are
// atomic. Custom resources take them from the CRD schema (x-kubernetes-list-type,
// x-kubernetes-list-map-keys, x-kubernetes-map-type); built-in kinds from a table of the
// well-known list fields (containers by name, env by name, ports by port, ...).
import { type Shape, UNKNOWN_SHAPE } from "./fieldpath.js";
import { isRecord } from "./types.js";

type Schema = Record<string, unknown>;

const ATOMIC_LIST = { listType: "atomic" as const, listKeys: [] as string[] };

class SchemaShape implements Shape {
  readonly listType: Shape["listType"];
  readonly listKeys: readonly string[];
  readonly atomicMap: boolean;

  constructor(private readonly schema: Schema) {
    const type = schema["x-kubernetes-list-type"];
    this.listType = type === "map" || type === "set" ? type : "atomic";
    const keys = schema["x-kubernetes-list-map-keys"];
    this.listKeys = Array.isArray(keys) ? (keys as string[]) : [];
    this.atomicMap = schema["x-kubernetes-map-type"] === "atomic";
  }

  field(name: string): Shape {
    const properties = this.schema.properties;
    if (isRecord(properties) && isRecord(properties[name])) return schemaShape(properties[name]);
    const additional = this.schema.additionalProperties;
    if (isRecord(additional)) return schemaShape(additional);
    return UNKNOWN_SHAPE;
  }

  items(): Shape {
    const items = this.schema.items;
    return isRecord(items) ? schemaShape(items) : UNKNOWN_SHAPE;
  }
}

const schemaShapes = new WeakMap<Schema, Shape>();
function schemaShape(schema: Schema): Shape {
  let shape = schemaShapes.get(schema);
  if (shape === undefined) {
    shape = new SchemaShape(schema);
    schemaShapes.set(schema, shape);
  }
  return shape;
}

/** A shape with fixed children, for the parts every object shares. */
class FixedShape implements Shape {
  constructor(
    readonly listType: Shape["listType"],
    readonly listKeys: readonly string[],
    readonly atomicMap: boolean,
    private readonly fields: Record<string, Shape> = {},
    private readonly fallback: Shape = UNKNOWN_SHAPE,
    private readonly itemShape: Shape = UNKNOWN_SHAPE,
  ) {}
  field(name: string): Shape {
    return this.fields[name] ?? this.fallback;
  }
  items(): Shape {
    return this.itemShape;
  }
}

export const METADATA_SHAPE: Shape = new FixedShape("atomic", [], false, {
  ownerReferences: new FixedShape("map", ["uid"], false),
  finalizers: new FixedShape("set", [], false),
  managedFields: new FixedShape("atomic", [], false),
});

// Built-in kinds: the associative lists of the core, apps and rbac types by field name.
const BUILTIN_LISTS: Record<string, { listType: "map" | "set"; listKeys: string[] }> = {
  containers: { listType: "map", listKeys: ["name"] },
  initContainers: { listType: "map", listKeys: ["name"] },
  ephemeralContainers: { listType: "map", listKeys: ["name"] },
  env: { listType: "map", listKeys: ["name"] },
  volumes: { listType: "map", listKeys: ["name"] },
  imagePullSecrets: { listType: "map", listKeys: ["name"] },
  volumeMounts: { listType: "map", listKeys: ["mountPath"] },
  volumeDevices: { listType: "map", listKeys: ["devicePath"] },
  conditions: { listType: "map", listKeys: ["type"] },
  hostAliases: { listType: "map", listKeys: ["ip"] },
  topologySpreadConstraints: { listType: "map", listKeys: ["topologyKey", "whenUnsatisfiable"] },
  resourceClaims: { listType: "map", listKeys: ["name"] },
  schedulingGates: { listType: "map", listKeys: ["name"] },
};
const ATOMIC_MAPS = new Set([
  "selector",
  "nodeSelector",
  "labelSelector",
  "namespaceSelector",
  "podSelector",
]);

class BuiltinShape implements Shape {
  readonly listType: Shape["listType"];
  readonly listKeys: readonly string[];
  readonly atomicMap: boolean;

  /** `name` is this node's field name; `inContainer` whether it sits in a container. */
  constructor(
    private readonly name: string,
    private readonly inContainer: boolean,
  ) {
    let list: { listType: Shape["listType"]; listKeys: readonly string[] } =
      BUILTIN_LISTS[name] ?? ATOMIC_LIST;
    if (name === "ports") {
      list = { listType: "map", listKeys: [inContainer ? "containerPort" : "port"] };
    }
    this.listType = list.listType;
    this.listKeys = list.listKeys;
    this.atomicMap = ATOMIC_MAPS.has(name);
  }

  field(name: string): Shape {
    return new BuiltinShape(name, this.inContainer);
  }

  items(): Shape {
    const container = /^(containers|initContainers|ephemeralContainers)$/.test(this.name);
    return new BuiltinShape(`${this.name}[]`, container || this.inContainer);
  }
}

function rootShape(rest: (name: string) => Shape): Shape {
  return {
    listType: "atomic",
    listKeys: [],
    atomicMap: false,
    field: (name) => (name === "metadata" ? METADATA_SHAPE : rest(name)),
    items: () => UNKNOWN_SHAPE,
  };
}

export const BUILTIN_SHAPE: Shape = rootShape((name) => new BuiltinShape(name, false));

/** The shape of a custom resource from its version's openAPIV3Schema. */
export function customResourceShape(schema: Schema | undefined): Shape {
  if (schema === undefined) return rootShape(() => UNKNOWN_SHAPE);
  const shape = schemaShape(schema);
  return rootShape((name) => shape.field(name));
}
