// Cordons the real test node (as `kubectl drain` does: a Deployment's replacement pods then stay
// Pending instead of landing on it again), deletes every pod bound to it and waits until the
// API no longer lists any,
// so the kubelet tears each sandbox down itself (CNI DEL frees its address and network
// namespace) before node.sh stops the kubelet and containerd. With --delete-node (after the
// kubelet has stopped, so it cannot register again) it deletes the Node object instead.
//   node --import tsx test/env/k8s/node/drain.ts <node-name> <kubeconfig> [--delete-node]
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';

const [nodeArg, kubeconfig, mode] = process.argv.slice(2);
if (!nodeArg || !kubeconfig) {
  console.error('usage: drain.ts <node-name> <kubeconfig> [--delete-node]');
  process.exit(2);
}
const nodeName: string = nodeArg;
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(CoreV1Api);
const onNode = async () =>
  (await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName}` })).items;

async function main(): Promise<void> {
  if (mode === '--delete-node') {
    await core.deleteNode({ name: nodeName }).catch((err: unknown) => {
      if ((err as { code?: number }).code !== 404) throw err;
    });
    return;
  }

  const deadline = Date.now() + 120_000;
  await core.patchNode(
    { name: nodeName, body: { spec: { unschedulable: true } } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
  let pods = await onNode();
  for (const pod of pods) {
    const { name, namespace } = pod.metadata ?? {};
    if (!name || !namespace) continue;
    // Grace 5 s: the agents stop on SIGTERM quickly; the kubelet still runs the full teardown.
    await core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 5 }).catch(() => undefined);
  }
  while (pods.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    pods = await onNode();
  }
  if (pods.length > 0) {
    console.error(
      `drain: ${pods.length} pod(s) still on ${nodeName} after 120 s: ` +
        pods.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`).join(', '),
    );
    process.exit(1);
  }
  console.error(`drain: no pods left on ${nodeName}`);
}

main().catch((err: unknown) => {
  console.error(`drain: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
