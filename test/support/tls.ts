// A self-signed certificate for servers tests start with TLS (an HTTPS provider, PostgreSQL with
// ssl on): an EC P-256 key and a certificate for 127.0.0.1, made by openssl.
import { execFileSync } from "node:child_process";
import { join } from "node:path";

export interface SelfSigned {
  key: string;
  cert: string;
}

/** Writes key.pem and cert.pem into `dir` and returns their paths. */
export function selfSignedCertificate(dir: string): SelfSigned {
  const key = join(dir, "key.pem");
  const cert = join(dir, "cert.pem");
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      "2",
      "-subj",
      "/CN=127.0.0.1",
      "-addext",
      "subjectAltName=IP:127.0.0.1",
    ],
    { stdio: "pipe" },
  );
  return { key, cert };
}
