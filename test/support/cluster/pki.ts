// The credentials a throwaway control plane needs, made by openssl: a CA, the API server's
// serving certificate for loopback, client certificates signed by the CA (the admin is in
// system:masters, as a cluster's admin kubeconfig is) and the service-account token signing key.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export interface ClientCertificate {
  cert: string;
  key: string;
}

export interface Pki {
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  admin: ClientCertificate;
  controllerManager: ClientCertificate;
}

const openssl = (args: string[]): void => {
  execFileSync("openssl", args, { stdio: "pipe" });
};

function ecKey(path: string): void {
  openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path]);
}

/** A certificate for `subject` signed by the CA, with the extensions given. */
function signed(dir: string, name: string, subject: string, pki: Pki, ext: string[]): string {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.crt`);
  const extFile = join(dir, `${name}.ext`);
  ecKey(key);
  openssl(["req", "-new", "-key", key, "-subj", subject, "-out", csr]);
  writeFileSync(extFile, `${ext.join("\n")}\n`);
  openssl([
    "x509",
    "-req",
    "-in",
    csr,
    "-CA",
    pki.caCert,
    "-CAkey",
    pki.caKey,
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    extFile,
    "-out",
    cert,
  ]);
  return cert;
}

/** Writes every key and certificate into `dir`. */
export function makePki(dir: string): Pki {
  const pki = {
    caCert: join(dir, "ca.crt"),
    caKey: join(dir, "ca.key"),
    serviceAccountKey: join(dir, "sa.key"),
    serviceAccountPub: join(dir, "sa.pub"),
  } as Pki;
  ecKey(pki.caKey);
  openssl([
    "req",
    "-x509",
    "-new",
    "-key",
    pki.caKey,
    "-subj",
    "/CN=mcpfleet-test-ca",
    "-days",
    "2",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
    "-out",
    pki.caCert,
  ]);
  const leaf = ["basicConstraints=CA:FALSE", "keyUsage=critical,digitalSignature"];
  pki.servingCert = signed(dir, "apiserver", "/CN=kube-apiserver", pki, [
    ...leaf,
    "extendedKeyUsage=serverAuth",
    "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc,IP:10.0.0.1",
  ]);
  pki.servingKey = join(dir, "apiserver.key");
  const client = (name: string, subject: string): ClientCertificate => ({
    cert: signed(dir, name, subject, pki, [...leaf, "extendedKeyUsage=clientAuth"]),
    key: join(dir, `${name}.key`),
  });
  pki.admin = client("admin", "/O=system:masters/CN=mcpfleet-test-admin");
  pki.controllerManager = client("controller-manager", "/CN=system:kube-controller-manager");
  // Service-account tokens are signed with an RSA key (the API server accepts RSA and EC; RSA is
  // what every client library verifies).
  openssl([
    "genpkey",
    "-algorithm",
    "RSA",
    "-pkeyopt",
    "rsa_keygen_bits:2048",
    "-out",
    pki.serviceAccountKey,
  ]);
  openssl(["pkey", "-in", pki.serviceAccountKey, "-pubout", "-out", pki.serviceAccountPub]);
  return pki;
}
