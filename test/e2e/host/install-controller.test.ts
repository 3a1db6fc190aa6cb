// "Install Controller into Cluster…" for real (not a dry run), through the real `vscode` API.
//
// Why it re-applies the test install instead of a fresh one: the cluster has ONE Queue Split
// installation (a cluster-scoped CRD, ClusterRoles and bindings named after the product, the
// controller in queuesplit-system) that the cluster suites running at the same time depend on,
// and no second, throwaway kube-apiserver exists here. Installing the product defaults (another
// image, two replicas, no test flags) or into another namespace would re-point the shared
// ClusterRoleBindings and replace the controller under them. So the test first proves that the
// objects the command will apply are exactly the test install's (same CRD as deploy/crd, same
// deploy/manifests.ts output for deploy/install.ts's `testInstall` options with the live pod
// template's bundle annotation and the live replica count), then runs the command non-dry-run with those options: every
// object goes through the command's create-or-replace path and its CRD wait, and the cluster
// ends up identical — the same pod template (no rollout), the CRD unchanged, the controller ready.
// The confirmation dialog's text and its Cancel path (nothing applied) are checked in the UI test
// test/e2e/ui/split-lifecycle.test.ts, where the modal can be clicked.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'mocha';
import * as vscode from 'vscode';
import { parse } from 'yaml';
import { ApiextensionsV1Api, AppsV1Api } from '@kubernetes/client-node';
import { queueSplitCrd } from '../../../core/crd/crdManifest';
import { testInstall } from '../../../deploy/install';
import { controllerManifests, type InstallOptions } from '../../../deploy/manifests';
import { adminConfig } from '../../support/kube';
import { loadServices } from '../../support/services';

// This bundle lives in <repo>/dist-test/e2e-host/.
const repoRoot = path.resolve(__dirname, '..', '..');
const BUNDLE_ANNOTATION = 'queuesplit.dev/bundle';

describe('Install Controller into Cluster (real apply of the test install)', function () {
  this.timeout(180_000);

  it('applies every object with the user credentials and leaves the shared install as it was', async () => {
    const services = loadServices();
    const admin = adminConfig(services.kubeconfig);
    const apps = admin.makeApiClient(AppsV1Api);
    const crds = admin.makeApiClient(ApiextensionsV1Api);
    const shippedCrd = parse(
      fs.readFileSync(path.join(repoRoot, 'deploy', 'crd', 'queuesplit.crd.yaml'), 'utf8'),
    ) as unknown;
    assert.deepEqual(
      JSON.parse(JSON.stringify(queueSplitCrd())),
      shippedCrd,
      'the command would apply a CRD other than deploy/crd/queuesplit.crd.yaml: not applying it',
    );

    const where = { name: 'queuesplit-controller', namespace: testInstall.namespace };
    const before = await apps.readNamespacedDeployment(where);
    const bundle = before.spec?.template.metadata?.annotations?.[BUNDLE_ANNOTATION];
    assert.ok(bundle, 'the test install (run.ts ensureController) put the bundle digest on the pod template');
    // The live replica count too: a suite running now may have scaled the shared controller.
    const options: InstallOptions = {
      ...testInstall,
      replicas: before.spec?.replicas ?? testInstall.replicas,
      podAnnotations: { [BUNDLE_ANNOTATION]: bundle },
    };
    const crdBefore = await crds.readCustomResourceDefinition({ name: 'queuesplits.queuesplit.dev' });

    const config = vscode.workspace.getConfiguration('queueSplit');
    await config.update('kubeconfig', services.kubeconfig, vscode.ConfigurationTarget.Global);
    try {
      const applied = await vscode.commands.executeCommand<string[] | undefined>(
        'queueSplit.installController',
        { confirmed: true, options },
      );
      const expected = [queueSplitCrd(), ...controllerManifests(options)] as {
        kind: string;
        metadata: { name: string };
      }[];
      // Applied server-side over the test install of the same settings: nothing changes. The
      // controller's Deployment only may read as updated: a suite running now may scale it.
      assert.deepEqual(
        applied?.map((line) => line.replace(/^updated (Deployment queuesplit-controller)$/, 'unchanged $1')),
        expected.map((o) => `unchanged ${o.kind} ${o.metadata.name}`),
        'every object applied for real over the same settings: unchanged, not created',
      );
    } finally {
      await config.update('kubeconfig', undefined, vscode.ConfigurationTarget.Global);
    }

    // Not compared: the generation and replica count. Suites running at the same time re-install
    // and scale the shared controller; only a changed pod template would roll its pods.
    const after = await apps.readNamespacedDeployment(where);
    assert.deepEqual(after.spec?.template, before.spec?.template, 'the same pod template: no rollout');
    assert.equal(after.spec?.template.spec?.containers[0]?.image, testInstall.image);
    assert.ok((after.status?.readyReplicas ?? 0) >= 1, 'the controller is still ready');
    const crdAfter = await crds.readCustomResourceDefinition({ name: 'queuesplits.queuesplit.dev' });
    assert.equal(crdAfter.metadata?.generation, crdBefore.metadata?.generation, 'the CRD is unchanged');
  });
});
