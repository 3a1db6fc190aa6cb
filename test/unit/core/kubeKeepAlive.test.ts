// core/kubeKeepAlive.ts against a local HTTPS server that checks client certificates, as the API
// server does: client-node as it comes opens a TLS connection per call; keepConnections reuses
// one, and never shares a connection between two different credentials.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { keepConnections } from '../../../core/kubeKeepAlive';
import { ensurePki, type Pki } from '../../env/k8s/pki';

let pki: Pki;
/** Another CA and admin pair: a second identity the server accepts. */
let otherPki: Pki;
let server: https.Server;
let url = '';
/** TLS connections the server accepted, by the client certificate's fingerprint. */
const handshakes = new Map<string, number>();

before(async () => {
  pki = ensurePki(fs.mkdtempSync(path.join(os.tmpdir(), 'qs-keepalive-')));
  otherPki = ensurePki(fs.mkdtempSync(path.join(os.tmpdir(), 'qs-keepalive-')));
  server = https.createServer(
    {
      cert: fs.readFileSync(pki.serverCert),
      key: fs.readFileSync(pki.serverKey),
      ca: [fs.readFileSync(pki.caCert), fs.readFileSync(otherPki.caCert)],
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } }));
    },
  );
  server.on('secureConnection', (socket) => {
    const who = socket.getPeerCertificate().fingerprint256;
    handshakes.set(who, (handshakes.get(who) ?? 0) + 1);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  for (const p of [pki, otherPki]) fs.rmSync(p.dir, { recursive: true, force: true });
});

function kubeConfig(user: { name: string; cert: string; key: string }): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'local', server: url, caFile: pki.caCert, skipTLSVerify: false }],
    users: [{ name: user.name, certFile: user.cert, keyFile: user.key }],
    contexts: [{ name: 'local', cluster: 'local', user: user.name }],
    currentContext: 'local',
  });
  return kc;
}

async function calls(kc: KubeConfig, n: number): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  for (let i = 0; i < n; i++)
    assert.equal((await core.readNamespace({ name: 'default' })).metadata?.name, 'default');
}

describe('API calls over kept-alive connections', () => {
  test('client-node as it comes makes a TLS handshake per call (why core/kubeKeepAlive.ts exists)', async () => {
    handshakes.clear();
    await calls(kubeConfig({ name: 'admin', cert: pki.adminCert, key: pki.adminKey }), 5);
    assert.equal(
      [...handshakes.values()].reduce((a, b) => a + b, 0),
      5,
    );
  });

  test('keepConnections: twenty calls, one after another and five at once, over one TLS connection', async () => {
    handshakes.clear();
    const kc = keepConnections(kubeConfig({ name: 'admin', cert: pki.adminCert, key: pki.adminKey }));
    await calls(kc, 20);
    assert.equal(
      [...handshakes.values()].reduce((a, b) => a + b, 0),
      1,
    );
    // Calls at once need connections at once; they stay open for the next ones.
    await Promise.all(Array.from({ length: 5 }, () => calls(kc, 4)));
    const afterBurst = [...handshakes.values()].reduce((a, b) => a + b, 0);
    assert.ok(afterBurst <= 5, `${afterBurst} handshakes for 5 concurrent callers`);
    await Promise.all(Array.from({ length: 5 }, () => calls(kc, 4)));
    assert.equal(
      [...handshakes.values()].reduce((a, b) => a + b, 0),
      afterBurst,
      'the burst reuses them',
    );
  });

  test('keepConnections: another client certificate gets a connection of its own', async () => {
    handshakes.clear();
    const other = { name: 'other', cert: otherPki.adminCert, key: otherPki.adminKey };
    const admin = keepConnections(kubeConfig({ name: 'admin', cert: pki.adminCert, key: pki.adminKey }));
    const second = keepConnections(kubeConfig(other));
    await calls(admin, 3);
    await calls(second, 3);
    await calls(admin, 3);
    assert.deepEqual([...handshakes.values()], [1, 1], 'one connection per certificate');
  });
});
