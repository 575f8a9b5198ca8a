// RDS IAM authentication for the PostgreSQL store (`database.dynamicAuth.awsRdsIam`): instead of
// a stored password each new connection presents an authentication token, a SigV4-presigned
// `connect` request for `host:port` and the user, valid for 15 minutes. Tokens are signed with
// the standard AWS credential chain (environment, shared config and credentials files with
// AWS_PROFILE, web identity as with IRSA on EKS, container and instance metadata). `pg` asks for
// the password only when it opens a connection, so every connection gets a fresh token and a
// long-running pool never holds an expired one (a token only has to be valid at login).
import { Signer } from "@aws-sdk/rds-signer";
import {
  loadConfig,
  NODE_REGION_CONFIG_FILE_OPTIONS,
  NODE_REGION_CONFIG_OPTIONS,
} from "@smithy/core/config";
import { McpfleetError } from "../../errors.js";

/** The configuration key named in region errors. */
export const RDS_IAM_REGION_KEY = "database.dynamicAuth.awsRdsIam.region";

/** Environment variables that name the region, in the order they are read. */
const REGION_ENV = ["AWS_REGION", "AWS_DEFAULT_REGION"] as const;

/**
 * The region tokens are signed for: the configured one, or with `detect` AWS_REGION, then
 * AWS_DEFAULT_REGION (from `env`), then the SDK's region chain (the profile's `region` in the
 * shared config files, then instance metadata unless AWS_EC2_METADATA_DISABLED is set).
 * Throws ERR_REGISTRY_CONFIG naming the key when none is found.
 */
export async function resolveRdsIamRegion(
  configured: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  if (configured !== "detect") return configured;
  for (const name of REGION_ENV) {
    const v = env[name]?.trim();
    if (v !== undefined && v !== "") return v;
  }
  let found: string;
  try {
    found = await loadConfig(NODE_REGION_CONFIG_OPTIONS, NODE_REGION_CONFIG_FILE_OPTIONS)();
  } catch (err) {
    throw new McpfleetError(
      "ERR_REGISTRY_CONFIG",
      `${RDS_IAM_REGION_KEY} is "detect" but no AWS region was found (${(err as Error).message}): ` +
        `set AWS_REGION or AWS_DEFAULT_REGION, a region in the shared config file's profile, ` +
        `or the region itself in ${RDS_IAM_REGION_KEY}`,
      { cause: err },
    );
  }
  return found;
}

/** Where and as whom tokens are used. */
export interface RdsIamTarget {
  host: string;
  port: number;
  user: string;
  region: string;
}

/**
 * A password function for `pg` that returns a new token on each call. Failures (no credentials,
 * an unreachable credential endpoint) reject with ERR_STORE_UNAVAILABLE naming the user and host,
 * so the connection attempt fails and the store reports itself unreachable until they succeed.
 */
export function rdsIamPassword(target: RdsIamTarget): () => Promise<string> {
  // One signer (and so one memoized credential chain) per user: credentials are fetched once
  // and refreshed by the SDK before they expire, tokens are signed locally on each call.
  const signer = new Signer({
    hostname: target.host,
    port: target.port,
    username: target.user,
    region: target.region,
  });
  return async () => {
    try {
      return await signer.getAuthToken();
    } catch (err) {
      throw new McpfleetError(
        "ERR_STORE_UNAVAILABLE",
        `cannot create an RDS IAM auth token for user "${target.user}" at ` +
          `${target.host}:${target.port} (region ${target.region}): ${(err as Error).message}`,
        { cause: err },
      );
    }
  };
}
