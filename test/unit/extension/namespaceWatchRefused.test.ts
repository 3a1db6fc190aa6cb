// A namespace whose watch the API server keeps refusing (403) must not redraw the tree on every
// retry of its three informers. Each redraw makes VS Code forget the rows' handles until their
// children are fetched again, and a row's inline action clicked in that moment runs without its
// row: the e2e ui/namespaces test's "Start Split… from the other namespace's row" then acted in
// the selected, refused namespace (twice in four runs). The server here refuses every list as the
// API server does; the watch is the extension's own.
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import type { KubeConnection } from '../../../extension/kube/connection';
import { NamespaceWatch } from '../../../extension/kube/watch';

let server: http.Server;
let url = '';

before(async () => {
  server = http.createServer((req, res) => {
    res.writeHead(403, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'Forbidden',
        code: 403,
        message: `deployments.apps is forbidden: User "dev" cannot list resource in namespace "team-x"`,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

test('a namespace whose watch is refused again and again reports its error once, not on every retry', async () => {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
    users: [{ name: 'dev', token: 'x' }],
    contexts: [{ name: 'dev', cluster: 'c', user: 'dev', namespace: 'team-x' }],
    currentContext: 'dev',
  });
  const connection = {
    kc,
    target: { context: 'dev', namespace: 'team-x' },
    kubeconfig: { files: [], explicit: false },
  } as unknown as KubeConnection;
  const watch = new NamespaceWatch(connection, () => undefined);
  const states: string[] = [];
  watch.onChange((s) => states.push(s.error?.message ?? 'no error'));
  await watch.start();
  // The informers retry after 1 s, then 2 s: three rounds of three refusals.
  await sleep(3_500);
  await watch.stop();
  const withError = states.filter((m) => m !== 'no error');
  assert.ok(withError.length >= 1, 'the refusal is reported');
  assert.ok(
    states.length <= 2,
    `${states.length} redraws for one refusal repeated: ${JSON.stringify(states)}`,
  );
});
