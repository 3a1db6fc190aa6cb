// Queue Split: Open Kubeconfig — the file the selected context comes from (the queueSplit.kubeconfig
// setting, else the first file of $KUBECONFIG, else ~/.kube/config), where a certificate
// authority, a server address or a credential plugin is fixed.
import * as vscode from 'vscode';
import { UserError } from '../notifications';
import { fix } from '../model/fixes';
import type { Services } from '../services';
import { settings } from '../settings';

export async function openKubeconfig(services: Services): Promise<void> {
  const kube = await services.cluster.kube();
  const file = kube.kubeconfigFile(settings.kubeconfig());
  if (file === undefined)
    throw new UserError(
      'There is no kubeconfig file to open: neither the queueSplit.kubeconfig setting nor $KUBECONFIG names one, and ~/.kube/config does not exist.',
      'Get a kubeconfig from your cluster provider (its CLI writes ~/.kube/config), or point the queueSplit.kubeconfig setting at one.',
      [],
      [fix.setting('queueSplit.kubeconfig')],
    );
  await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: false });
}
