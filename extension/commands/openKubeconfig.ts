// Queue Split: Open Kubeconfig — the first existing file of the kubeconfig in use (the
// queueSplit.kubeconfig setting, the Kubernetes extension's, $KUBECONFIG or ~/.kube/config; see
// core/kubeconfig.ts), where a certificate authority, a server address or a credential plugin is
// fixed.
import * as vscode from 'vscode';
import { UserError } from '../notifications';
import { fix } from '../model/fixes';
import type { Services } from '../services';

export async function openKubeconfig(services: Services): Promise<void> {
  const kube = await services.cluster.kube();
  const file = kube.kubeconfigFile(await services.cluster.kubeconfigFiles());
  if (file === undefined)
    throw new UserError(
      vscode.l10n.t(
        'There is no kubeconfig file to open: neither the queueSplit.kubeconfig setting nor $KUBECONFIG names one, and ~/.kube/config does not exist.',
      ),
      vscode.l10n.t(
        'Get a kubeconfig from your cluster provider (its CLI writes ~/.kube/config), or point the queueSplit.kubeconfig setting at one.',
      ),
      [],
      [fix.setting('queueSplit.kubeconfig')],
    );
  await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: false });
}
