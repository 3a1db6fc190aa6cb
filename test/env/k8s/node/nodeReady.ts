// Prints the Ready condition's status of one node ("True", "False", "Unknown") or nothing if
// the node is not registered yet: node.sh polls it while the kubelet starts. A Ready node still
// cordoned by an earlier teardown (drain.ts cordons it; deleting the Node object afterwards
// failed) is uncordoned here, or no pod would ever be scheduled on it.
//   KUBECONFIG=... node --import tsx test/env/k8s/node/nodeReady.ts <node-name>
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';

async function main(): Promise<void> {
  const name = process.argv[2];
  if (!name) throw new Error('usage: nodeReady.ts <node-name>');
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const core = kc.makeApiClient(CoreV1Api);
  const node = await core.readNode({ name });
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status === 'True' && node.spec?.unschedulable) {
    await core.patchNode(
      { name, body: { spec: { unschedulable: false } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    console.error(`${name}: uncordoned (left cordoned by an earlier teardown)`);
  }
  if (ready) console.log(ready.status);
}

main().catch(() => process.exit(1));
