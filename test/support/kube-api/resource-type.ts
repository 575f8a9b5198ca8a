// What the double knows about one resource: names, scope, subresources, and the per-kind rules
// built-in kinds have (defaults, immutable fields) or the CRD schema custom resources have.
import type { ResourceRef, StatusCause } from "./errors.js";
import type { Shape } from "./fieldpath.js";
import type { NameRule } from "./metadata.js";
import type { KObject } from "./types.js";
import type { CustomResourceSchema } from "./validation.js";

export interface BuiltinRules {
  /** Server-filled fields and defaults; `old` is undefined on create. */
  prepare?(obj: KObject, old: KObject | undefined): void;
  /** Kind-specific validation; `old` is undefined on create. */
  validate?(obj: KObject, old: KObject | undefined): StatusCause[];
}

export interface ResourceType extends ResourceRef {
  /** Served versions, preferred (storage) first. */
  versions: string[];
  singular: string;
  listKind: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  /** Has a status subresource. */
  status: boolean;
  /** Tracks metadata.generation (bumped when anything but metadata and status changes). */
  generation: boolean;
  nameRule: NameRule;
  /** Selectable fields besides metadata.name and metadata.namespace. */
  fieldSelectors: string[];
  /** Built-in kinds omit apiVersion/kind in list items, custom resources keep them. */
  builtin: boolean;
  rules?: BuiltinRules;
  /** Custom resources: the CRD's name and each served version's schema. */
  crd?: { name: string; schemas: Map<string, CustomResourceSchema | undefined> };
  shape(version: string): Shape;
}

export const VERBS = [
  "create",
  "delete",
  "deletecollection",
  "get",
  "list",
  "patch",
  "update",
  "watch",
];

export function storageKey(type: { group: string; plural: string }): string {
  return `${type.group}/${type.plural}`;
}

export function groupVersion(group: string, version: string): string {
  return group === "" ? version : `${group}/${version}`;
}
