// Certificates and keys for the local control plane, made with the machine's openssl once per
// run directory: a CA, the API server's serving cert (loopback and in-cluster names), an admin
// client cert in system:masters, and the service-account signing key pair.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  adminCert: string;
  adminKey: string;
  saKey: string;
  saPub: string;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

function clientCert(dir: string, name: string, subject: string): void {
  openssl(dir, ['genrsa', '-out', `${name}.key`, '2048']);
  openssl(dir, ['req', '-new', '-key', `${name}.key`, '-subj', subject, '-out', `${name}.csr`]);
  fs.writeFileSync(
    path.join(dir, `${name}.ext`),
    'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n',
  );
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '3650',
    '-sha256',
    '-extfile',
    `${name}.ext`,
    '-out',
    `${name}.crt`,
  ]);
}

export function ensurePki(dir: string): Pki {
  const pki: Pki = {
    dir,
    caCert: path.join(dir, 'ca.crt'),
    caKey: path.join(dir, 'ca.key'),
    serverCert: path.join(dir, 'apiserver.crt'),
    serverKey: path.join(dir, 'apiserver.key'),
    adminCert: path.join(dir, 'admin.crt'),
    adminKey: path.join(dir, 'admin.key'),
    saKey: path.join(dir, 'sa.key'),
    saPub: path.join(dir, 'sa.pub'),
  };
  if (Object.values(pki).every((f) => fs.existsSync(f))) return pki;

  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  openssl(dir, ['genrsa', '-out', 'ca.key', '2048']);
  openssl(dir, [
    'req',
    '-x509',
    '-new',
    '-key',
    'ca.key',
    '-subj',
    '/CN=queuesplit-test-ca',
    '-days',
    '3650',
    '-sha256',
    '-out',
    'ca.crt',
  ]);

  openssl(dir, ['genrsa', '-out', 'apiserver.key', '2048']);
  openssl(dir, [
    'req',
    '-new',
    '-key',
    'apiserver.key',
    '-subj',
    '/CN=kube-apiserver',
    '-out',
    'apiserver.csr',
  ]);
  fs.writeFileSync(
    path.join(dir, 'apiserver.ext'),
    [
      'extendedKeyUsage=serverAuth',
      'keyUsage=digitalSignature,keyEncipherment',
      'subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,' +
        'DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local',
      '',
    ].join('\n'),
  );
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    'apiserver.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '3650',
    '-sha256',
    '-extfile',
    'apiserver.ext',
    '-out',
    'apiserver.crt',
  ]);
  clientCert(dir, 'admin', '/O=system:masters/CN=queuesplit-admin');
  openssl(dir, ['genrsa', '-out', 'sa.key', '2048']);
  openssl(dir, ['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub']);
  return pki;
}
