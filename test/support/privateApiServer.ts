// A private etcd + kube-apiserver for tests that must pause or stop the API server: started from
// the same cached binaries and the same code as the shared one (test/env/k8s/controlPlane.ts), on
// free ports, with its own PKI and data, so pausing it never touches anybody else's cluster.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import {
  apiServerName,
  binaries,
  startEtcdAndApiServer,
  stopEtcdAndApiServer,
  type ApiServerLayout,
} from '../env/k8s/controlPlane';
import { writeAdminKubeconfig } from '../env/k8s/kubeconfig';
import { ensurePki } from '../env/k8s/pki';
import { runningPid } from '../env/processes';
import { uniqueName } from './services';
import { freePort } from './freePort';

export interface PrivateApiServer {
  kubeconfig: string;
  kc: KubeConfig;
  /** SIGSTOP: the process stays, its sockets accept but nothing answers (a hung API server). */
  pause(): void;
  resume(): void;
  /** Resumes it if paused, stops both processes and removes its data. */
  stop(): Promise<void>;
}

export async function startPrivateApiServer(prefix: string): Promise<PrivateApiServer> {
  const id = uniqueName(prefix);
  const home = fs.mkdtempSync(path.join(os.tmpdir(), `${id}-`));
  const layout: ApiServerLayout = {
    prefix: `${id}-`,
    home,
    ports: { etcd: await freePort(), etcdPeer: await freePort(), apiserver: await freePort() },
    pki: ensurePki(path.join(home, 'pki')),
  };
  const stop = async () => {
    const pid = runningPid(apiServerName(layout));
    if (pid !== undefined) process.kill(pid, 'SIGCONT'); // a stopped process ignores SIGTERM
    await stopEtcdAndApiServer(layout);
    fs.rmSync(home, { recursive: true, force: true });
  };
  try {
    await startEtcdAndApiServer(await binaries(), layout);
  } catch (err) {
    await stop();
    throw err;
  }
  const kubeconfig = path.join(home, 'kubeconfig');
  writeAdminKubeconfig(kubeconfig, layout.pki, `https://127.0.0.1:${layout.ports.apiserver}`);
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  // Only ever the pid this helper started: never the shared API server.
  const signal = (sig: NodeJS.Signals) => {
    const pid = runningPid(apiServerName(layout));
    if (pid === undefined) throw new Error(`the private API server ${apiServerName(layout)} is not running`);
    process.kill(pid, sig);
  };
  return { kubeconfig, kc, pause: () => signal('SIGSTOP'), resume: () => signal('SIGCONT'), stop };
}
