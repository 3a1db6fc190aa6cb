// Prints the Ready condition's status of one node ("True", "False", "Unknown") or nothing if
// the node is not registered yet: node.sh polls it while the kubelet starts.
//   KUBECONFIG=... node --import tsx test/env/k8s/node/nodeReady.ts <node-name>
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';

async function main(): Promise<void> {
  const name = process.argv[2];
  if (!name) throw new Error('usage: nodeReady.ts <node-name>');
  const kc = new KubeConfig();
  kc.loadFromDefault();
  const node = await kc.makeApiClient(CoreV1Api).readNode({ name });
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready) console.log(ready.status);
}

main().catch(() => process.exit(1));
