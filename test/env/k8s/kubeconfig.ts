// Kubeconfig files for the local control plane: the admin one that tests and the demo use,
// restricted ones for a named service account, and ones for a named user (a client certificate),
// so tests can prove least-privilege RBAC and per-user admission.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CertificatesV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { keepConnections } from '../../../core/kubeKeepAlive';

export const apiServerUrl = 'https://127.0.0.1:6443';

const b64 = (file: string) => fs.readFileSync(file).toString('base64');

function kubeconfigYaml(
  caFile: string,
  user: Record<string, string>,
  userName: string,
  namespace = 'default',
  server = apiServerUrl,
): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'queuesplit-test',
        cluster: { server, 'certificate-authority-data': b64(caFile) },
      },
    ],
    users: [{ name: userName, user }],
    contexts: [{ name: userName, context: { cluster: 'queuesplit-test', user: userName, namespace } }],
    'current-context': userName,
  });
}

/** `server`: another API server than the shared one (a test's private pair). */
export function writeAdminKubeconfig(
  file: string,
  pki: { caCert: string; adminCert: string; adminKey: string },
  server = apiServerUrl,
): void {
  const yaml = kubeconfigYaml(
    pki.caCert,
    { 'client-certificate-data': b64(pki.adminCert), 'client-key-data': b64(pki.adminKey) },
    'queuesplit-admin',
    'default',
    server,
  );
  fs.writeFileSync(file, yaml, { mode: 0o600 });
}

export function writeTokenKubeconfig(
  file: string,
  caFile: string,
  token: string,
  userName: string,
  namespace: string,
): void {
  fs.writeFileSync(file, kubeconfigYaml(caFile, { token }, userName, namespace), { mode: 0o600 });
}

/**
 * Creates (if needed) service account `name` in `namespace` and returns a kubeconfig for it,
 * authenticated with a short-lived token from the TokenRequest API. Whatever RBAC grants
 * that account is all the kubeconfig can do.
 */
export async function restrictedKubeconfig(
  admin: KubeConfig,
  namespace: string,
  name: string,
  caFile: string,
  file: string,
): Promise<KubeConfig> {
  const core = admin.makeApiClient(CoreV1Api);
  try {
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
  } catch (err) {
    if ((err as { code?: number }).code !== 409) throw err;
  }
  const tokenRequest = await core.createNamespacedServiceAccountToken({
    namespace,
    name,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const token = tokenRequest.status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${name} returned no token`);
  writeTokenKubeconfig(file, caFile, token, `${namespace}-${name}`, namespace);
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  return keepConnections(kc);
}

/**
 * A kubeconfig for the Kubernetes *user* `user` (no groups beyond system:authenticated): a
 * client certificate issued through the CertificateSigningRequest API (signer
 * kubernetes.io/kube-apiserver-client, approved by the admin, signed by the controller-manager),
 * so the identity is a person as a real cluster has them, not a service account. Whatever RBAC
 * grants `user` is all the kubeconfig can do.
 */
export async function userKubeconfig(
  admin: KubeConfig,
  user: string,
  namespace: string,
  caFile: string,
  file: string,
): Promise<KubeConfig> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-user-'));
  try {
    const key = path.join(dir, 'user.key');
    const csr = path.join(dir, 'user.csr');
    execFileSync('openssl', ['genrsa', '-out', key, '2048'], { stdio: ['ignore', 'ignore', 'pipe'] });
    execFileSync('openssl', ['req', '-new', '-key', key, '-subj', `/CN=${user}`, '-out', csr], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const certificates = admin.makeApiClient(CertificatesV1Api);
    const name = `qs-user-${user}`.slice(0, 253);
    await certificates.createCertificateSigningRequest({
      body: {
        metadata: { name },
        spec: {
          request: fs.readFileSync(csr).toString('base64'),
          signerName: 'kubernetes.io/kube-apiserver-client',
          expirationSeconds: 3600,
          usages: ['client auth'],
        },
      },
    });
    const pending = await certificates.readCertificateSigningRequest({ name });
    await certificates.replaceCertificateSigningRequestApproval({
      name,
      body: {
        ...pending,
        status: {
          conditions: [
            {
              type: 'Approved',
              status: 'True',
              reason: 'QueueSplitTest',
              message: 'a test identity',
              lastUpdateTime: new Date(),
            },
          ],
        },
      },
    });
    const deadline = Date.now() + 60_000;
    let certificate: string | undefined;
    while (certificate === undefined) {
      certificate = (await certificates.readCertificateSigningRequest({ name })).status?.certificate;
      if (certificate !== undefined) break;
      if (Date.now() > deadline) throw new Error(`CSR ${name} was approved but not signed within 60s`);
      await new Promise((r) => setTimeout(r, 250));
    }
    await certificates.deleteCertificateSigningRequest({ name }).catch(() => undefined);
    fs.writeFileSync(
      file,
      kubeconfigYaml(
        caFile,
        { 'client-certificate-data': certificate, 'client-key-data': b64(key) },
        user,
        namespace,
      ),
      { mode: 0o600 },
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  return keepConnections(kc);
}
