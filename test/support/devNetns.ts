// A developer's laptop that cannot reach the brokers (session delivery needs only the Kubernetes
// API, docs/design.md §8): a network namespace the run creates, joined to the host by a veth pair,
// whose only way out is the Kubernetes API server — reached at its Service address 10.96.0.1:443
// (in the API server certificate), DNATed to the loopback API server — plus the local ports a test
// opens on purpose (the debugged process's http target). Everything else from the namespace to the
// host is refused; nothing is routed off the machine (no default route in the namespace, no
// forwarding).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';

const API_SERVICE = '10.96.0.1';
const API_PORT = 6443;

export interface DevNetns {
  name: string;
  /** The host's address as the namespace sees it (where allowed local ports listen). */
  hostAddress: string;
  /** The command prefix that runs a process inside the namespace. */
  wrap: string[];
  /** Opens a host port to the namespace (a local service of the developer's). */
  allow(port: number): void;
  /** Resets every TCP connection from the namespace for `ms` (a dropped port-forward). */
  cut(ms: number): Promise<void>;
  /** A copy of `kubeconfig` whose server is the API server as the namespace reaches it. */
  kubeconfig(source: string, target: string): string;
  /** Can the namespace open a TCP connection to host:port (within 3 s)? */
  reaches(host: string, port: number): boolean;
  close(): void;
}

const run = (cmd: string, ...args: string[]) =>
  execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
const quiet = (cmd: string, ...args: string[]) => {
  try {
    run(cmd, ...args);
  } catch {
    // teardown of something already gone
  }
};

export function createDevNetns(index: number): DevNetns {
  if (index < 1 || index > 60) throw new Error('devNetns index must be 1..60');
  const name = `qs-dev-${index}-${process.pid}`.slice(0, 15);
  const hostIf = `qsdv${index}h`;
  const nsIf = `qsdv${index}n`;
  const hostAddress = `10.214.${index}.1`;
  const nsAddress = `10.214.${index}.2`;
  const chain = `QS-DEV-${index}`;
  run('ip', 'netns', 'add', name);
  run('ip', 'link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf);
  run('ip', 'link', 'set', nsIf, 'netns', name);
  run('ip', 'addr', 'add', `${hostAddress}/30`, 'dev', hostIf);
  run('ip', 'link', 'set', hostIf, 'up');
  const inNs = (...args: string[]) => run('ip', 'netns', 'exec', name, ...args);
  inNs('ip', 'link', 'set', 'lo', 'up');
  inNs('ip', 'addr', 'add', `${nsAddress}/30`, 'dev', nsIf);
  inNs('ip', 'link', 'set', nsIf, 'up');
  // The only route besides the link: the API server's Service address.
  inNs('ip', 'route', 'add', `${API_SERVICE}/32`, 'via', hostAddress);
  run('sysctl', '-q', '-w', `net.ipv4.conf.${hostIf}.route_localnet=1`);
  run(
    'iptables',
    '-t',
    'nat',
    '-A',
    'PREROUTING',
    '-i',
    hostIf,
    '-p',
    'tcp',
    '-d',
    API_SERVICE,
    '--dport',
    '443',
    '-j',
    'DNAT',
    '--to-destination',
    `127.0.0.1:${API_PORT}`,
  );
  run('iptables', '-N', chain);
  run('iptables', '-A', chain, '-m', 'conntrack', '--ctstate', 'ESTABLISHED,RELATED,DNAT', '-j', 'ACCEPT');
  run('iptables', '-A', chain, '-j', 'REJECT');
  run('iptables', '-I', 'INPUT', '-i', hostIf, '-j', chain);
  return {
    name,
    hostAddress,
    wrap: ['ip', 'netns', 'exec', name],
    allow(port) {
      run(
        'iptables',
        '-I',
        chain,
        '1',
        '-p',
        'tcp',
        '-d',
        hostAddress,
        '--dport',
        String(port),
        '-j',
        'ACCEPT',
      );
    },
    async cut(ms) {
      run('iptables', '-I', chain, '1', '-p', 'tcp', '-j', 'REJECT', '--reject-with', 'tcp-reset');
      await new Promise((r) => setTimeout(r, ms));
      run('iptables', '-D', chain, '-p', 'tcp', '-j', 'REJECT', '--reject-with', 'tcp-reset');
    },
    kubeconfig(source, target) {
      const kc = new KubeConfig();
      kc.loadFromFile(source);
      const yaml = fs
        .readFileSync(source, 'utf8')
        .replace(kc.getCurrentCluster()!.server, `https://${API_SERVICE}:443`);
      fs.writeFileSync(target, yaml, { mode: 0o600 });
      return target;
    },
    reaches(host, port) {
      try {
        inNs(
          process.execPath,
          '-e',
          `const s=require('net').connect(${port},'${host}');s.on('connect',()=>process.exit(0));s.on('error',()=>process.exit(1));setTimeout(()=>process.exit(1),3000)`,
        );
        return true;
      } catch {
        return false;
      }
    },
    close() {
      quiet('iptables', '-D', 'INPUT', '-i', hostIf, '-j', chain);
      quiet('iptables', '-F', chain);
      quiet('iptables', '-X', chain);
      quiet(
        'iptables',
        '-t',
        'nat',
        '-D',
        'PREROUTING',
        '-i',
        hostIf,
        '-p',
        'tcp',
        '-d',
        API_SERVICE,
        '--dport',
        '443',
        '-j',
        'DNAT',
        '--to-destination',
        `127.0.0.1:${API_PORT}`,
      );
      quiet('ip', 'link', 'del', hostIf);
      quiet('ip', 'netns', 'del', name);
    },
  };
}
