// Entry-name and version rules of the MCP registry (server.json): `namespace/name`, the
// namespace in reverse-DNS form, 3 to 200 characters.

const NAME = /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/;

/** Why `name` is not a valid server name, or undefined when it is. */
export function nameProblem(name: unknown): string | undefined {
  if (typeof name !== "string") return "name must be a string";
  if (name.length < 3 || name.length > 200) return "name must be 3 to 200 characters long";
  if (!NAME.test(name)) {
    return `name "${name}" must be namespace/name: letters, digits, '.' and '-' in the namespace, one '/', letters, digits, '.', '_' and '-' after it`;
  }
  return undefined;
}

/** Why `version` is not acceptable, or undefined when it is. */
export function versionProblem(version: unknown): string | undefined {
  if (typeof version !== "string" || version.trim() === "") {
    return "version must be a non-empty string";
  }
  if (version.length > 255) return "version must be at most 255 characters long";
  if (version === "latest") return `"latest" is reserved and cannot be a version`;
  if (/[\s/]/.test(version)) return "version must not contain spaces or '/'";
  if (/^[\^~<>=*]|\|\||\s-\s|\.x$/i.test(version)) {
    return `version "${version}" looks like a range; give one exact version`;
  }
  return undefined;
}
