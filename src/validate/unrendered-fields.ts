// Fields the reference operator added after the spec that the schemas accept (the API server
// with our CRDs admits them, as the reference's v1beta1 does) but that `mcpfleet synth` does not
// render. Accepting one and dropping it silently would deploy something other than what the
// YAML asks for, so each is reported at the run-time level: an error where dropping it would
// weaken security, a warning where what is deployed simply lacks the feature. docs/compat.md
// gives the decision per field.
import { isObject } from "../json.js";

type Add = (path: string, message: string, severity?: "error" | "warning") => void;

const AUTHZ_REF =
  "authzConfigRef names an MCPAuthzConfig, a kind mcpfleet does not serve: the server would run without the authorization it asks for; write the policies in authzConfig";

/** True when `spec` may hold one of these fields (the run-time level's cheap first test). */
export function mayHoldUnrenderedField(spec: Record<string, unknown>): boolean {
  return (
    spec.authzConfigRef !== undefined ||
    (isObject(spec.incomingAuth) && spec.incomingAuth.authzConfigRef !== undefined) ||
    spec.obo !== undefined ||
    (isObject(spec.embeddedAuthServer) && spec.embeddedAuthServer.trustedIssuers !== undefined)
  );
}

export function unrenderedFieldIssues(spec: Record<string, unknown>, add: Add): void {
  if (spec.authzConfigRef !== undefined) add("/authzConfigRef", AUTHZ_REF);
  if (isObject(spec.incomingAuth) && spec.incomingAuth.authzConfigRef !== undefined) {
    add("/incomingAuth/authzConfigRef", AUTHZ_REF);
  }
  if (spec.type === "obo" && spec.obo !== undefined) {
    add(
      "/obo",
      "obo is not rendered: the proxy runner and vmcp have no On-Behalf-Of handler, so a workload using this configuration sends no credentials to its backend",
      "warning",
    );
  }
  const server = spec.embeddedAuthServer;
  if (isObject(server) && server.trustedIssuers !== undefined) {
    add(
      "/embeddedAuthServer/trustedIssuers",
      "trustedIssuers is not rendered: the authorization server accepts no token exchange or JWT bearer grant from these issuers",
      "warning",
    );
  }
}
