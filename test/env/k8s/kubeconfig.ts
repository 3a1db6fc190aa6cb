// Kubeconfig files for the local control plane: the admin one that tests and the demo use,
// and restricted ones for a named service account so tests can prove least-privilege RBAC.
import * as fs from 'node:fs';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';

export const apiServerUrl = 'https://127.0.0.1:6443';

const b64 = (file: string) => fs.readFileSync(file).toString('base64');

function kubeconfigYaml(
  caFile: string,
  user: Record<string, string>,
  userName: string,
  namespace = 'default',
): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'queuesplit-test',
        cluster: { server: apiServerUrl, 'certificate-authority-data': b64(caFile) },
      },
    ],
    users: [{ name: userName, user }],
    contexts: [{ name: userName, context: { cluster: 'queuesplit-test', user: userName, namespace } }],
    'current-context': userName,
  });
}

export function writeAdminKubeconfig(
  file: string,
  pki: { caCert: string; adminCert: string; adminKey: string },
): void {
  const yaml = kubeconfigYaml(
    pki.caCert,
    { 'client-certificate-data': b64(pki.adminCert), 'client-key-data': b64(pki.adminKey) },
    'queuesplit-admin',
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
  return kc;
}
