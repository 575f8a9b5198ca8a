// The form in which a resource is stored in the cluster. The API server serves every version of
// our CRDs from one stored object without conversion (no webhook), and the runtime programs read
// these objects through the v1beta1 Go types, where `groupRef` is an object: a VirtualMCPServer
// stored with `groupRef: engineering` (the v1alpha1 spelling) cannot be read by its own vmcp,
// whose status reports then fail. Both spellings validate in both versions, so the controller
// stores the one every reader decodes. tools/runtime/resource-check proves it in the tests.

/** `spec.groupRef: "<name>"` becomes `spec.groupRef: {name: "<name>"}`; nothing else changes. */
export function storedSpec(spec: unknown): unknown {
  if (typeof spec !== "object" || spec === null || Array.isArray(spec)) return spec;
  const s = spec as Record<string, unknown>;
  if (typeof s.groupRef !== "string") return spec;
  return { ...s, groupRef: { name: s.groupRef } };
}
