// ObjectMeta validation on every write: names (RFC 1123 subdomain, label or RFC 1035 label, as
// the kind requires), label keys and values, owner references.
import type { StatusCause } from "./errors.js";
import { type KObject, isRecord } from "./types.js";

export type NameRule = "subdomain" | "label" | "label1035" | "any";

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

const SUBDOMAIN_TEXT =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_TEXT =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const LABEL1035_TEXT =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const LABEL_VALUE_TEXT =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

export function nameProblem(name: string, rule: NameRule): string | undefined {
  switch (rule) {
    case "subdomain":
      if (name.length > 253) return "must be no more than 253 characters";
      return SUBDOMAIN.test(name) ? undefined : SUBDOMAIN_TEXT;
    case "label":
      if (name.length > 63) return "must be no more than 63 characters";
      return LABEL.test(name) ? undefined : LABEL_TEXT;
    case "label1035":
      if (name.length > 63) return "must be no more than 63 characters";
      return LABEL1035.test(name) ? undefined : LABEL1035_TEXT;
    case "any":
      return name.includes("/") || name === "." || name === ".."
        ? "may not contain '/'"
        : undefined;
  }
}

function qualifiedKeyProblem(key: string): string | undefined {
  const slash = key.lastIndexOf("/");
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length > 253 || !SUBDOMAIN.test(prefix))) {
    return `prefix part ${SUBDOMAIN_TEXT}`;
  }
  if (name.length > 63) return "name part must be no more than 63 characters";
  if (!QUALIFIED_NAME.test(name)) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  }
  return undefined;
}

export function metadataCauses(obj: KObject, rule: NameRule): StatusCause[] {
  const causes: StatusCause[] = [];
  const meta = obj.metadata;
  if (!isRecord(meta)) {
    return [
      {
        reason: "FieldValueRequired",
        message: "Required value: name or generateName is required",
        field: "metadata.name",
      },
    ];
  }
  const name = meta.name;
  if (typeof name !== "string" || name === "") {
    causes.push({
      reason: "FieldValueRequired",
      message: "Required value: name or generateName is required",
      field: "metadata.name",
    });
  } else {
    const problem = nameProblem(name, rule);
    if (problem)
      causes.push({
        reason: "FieldValueInvalid",
        message: `Invalid value: ${JSON.stringify(name)}: ${problem}`,
        field: "metadata.name",
      });
  }
  const labels = meta.labels;
  if (labels !== undefined && !isRecord(labels)) {
    causes.push({
      reason: "FieldValueTypeInvalid",
      message: "Invalid value: labels must be a map of strings",
      field: "metadata.labels",
    });
  } else if (labels) {
    for (const [key, value] of Object.entries(labels)) {
      const keyProblem = qualifiedKeyProblem(key);
      if (keyProblem)
        causes.push({
          reason: "FieldValueInvalid",
          message: `Invalid value: ${JSON.stringify(key)}: ${keyProblem}`,
          field: "metadata.labels",
        });
      if (typeof value !== "string" || value.length > 63 || !LABEL_VALUE.test(value)) {
        causes.push({
          reason: "FieldValueInvalid",
          message: `Invalid value: ${JSON.stringify(value)}: ${LABEL_VALUE_TEXT}`,
          field: `metadata.labels`,
        });
      }
    }
  }
  const annotations = meta.annotations;
  if (annotations) {
    for (const [key, value] of Object.entries(annotations)) {
      const keyProblem = qualifiedKeyProblem(key);
      if (keyProblem)
        causes.push({
          reason: "FieldValueInvalid",
          message: `Invalid value: ${JSON.stringify(key)}: ${keyProblem}`,
          field: "metadata.annotations",
        });
      if (typeof value !== "string")
        causes.push({
          reason: "FieldValueTypeInvalid",
          message: "Invalid value: annotation values must be strings",
          field: `metadata.annotations`,
        });
    }
  }
  const owners = meta.ownerReferences;
  if (owners !== undefined) {
    if (!Array.isArray(owners)) {
      causes.push({
        reason: "FieldValueTypeInvalid",
        message: "Invalid value: must be a list",
        field: "metadata.ownerReferences",
      });
    } else {
      let controllers = 0;
      owners.forEach((ref: unknown, i) => {
        const r = isRecord(ref) ? ref : {};
        for (const key of ["apiVersion", "kind", "name", "uid"]) {
          if (typeof r[key] !== "string" || r[key] === "") {
            causes.push({
              reason: "FieldValueInvalid",
              message: `Invalid value: "": ${key} must not be empty`,
              field: `metadata.ownerReferences[${i}].${key}`,
            });
          }
        }
        if (r.controller === true) controllers++;
      });
      if (controllers > 1) {
        causes.push({
          reason: "FieldValueInvalid",
          message:
            "Invalid value: []v1.OwnerReference: Only one reference can have Controller set to true",
          field: "metadata.ownerReferences",
        });
      }
    }
  }
  return causes;
}
