// TLS for the test brokers: a private CA and one server certificate, made with the machine's
// openssl once per run directory, valid for the brokers' loopback and pod-gateway addresses
// (test/env/k8s/node/podNetwork.ts). Workloads that declare `tls: {caSecret, caKey}` get the CA
// from a Secret; the queue-agent mounts exactly that key (core/tlsMount.ts).
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { podGateway } from './k8s/node/podNetwork';
import { runDir } from './paths';

export interface BrokerTls {
  caCert: string;
  cert: string;
  key: string;
}

export const brokerTlsDir = path.join(runDir, 'broker-tls');

export function ensureBrokerTls(dir = brokerTlsDir): BrokerTls {
  const tls = {
    caCert: path.join(dir, 'ca.crt'),
    cert: path.join(dir, 'server.crt'),
    key: path.join(dir, 'server.key'),
  };
  if (Object.values(tls).every((f) => fs.existsSync(f))) return tls;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const openssl = (...args: string[]) =>
    execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  openssl('genrsa', '-out', 'ca.key', '2048');
  openssl(
    'req',
    '-x509',
    '-new',
    '-key',
    'ca.key',
    '-subj',
    '/CN=queuesplit-test-broker-ca',
    '-days',
    '3650',
    '-sha256',
    '-out',
    'ca.crt',
  );
  openssl('genrsa', '-out', 'server.key', '2048');
  openssl('req', '-new', '-key', 'server.key', '-subj', '/CN=queuesplit-test-broker', '-out', 'server.csr');
  fs.writeFileSync(
    path.join(dir, 'server.ext'),
    [
      'extendedKeyUsage=serverAuth',
      'keyUsage=digitalSignature,keyEncipherment',
      `subjectAltName=IP:127.0.0.1,IP:${podGateway},DNS:localhost`,
      '',
    ].join('\n'),
  );
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '3650',
    '-sha256',
    '-extfile',
    'server.ext',
    '-out',
    'server.crt',
  );
  // The broker runs as this user and reads the key; nobody else needs to.
  fs.chmodSync(tls.key, 0o600);
  return tls;
}
