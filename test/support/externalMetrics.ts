// A metrics source the test drives, for the real HPA controller: a minimal `external.metrics.k8s.io`
// server (the API that prometheus-adapter and KEDA's metrics server serve), registered with the
// real kube-apiserver as an aggregated APIService. The HPA controller asks the API server for an
// External metric; the API server proxies to this process, which answers what the test set.
//
// It listens on the pod network's gateway (the node's address): the aggregator dials a Service's
// endpoint, and an endpoint may not be a loopback address.
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import { ApiregistrationV1Api, CoreV1Api, DiscoveryV1Api, type KubeConfig } from '@kubernetes/client-node';
import { podGateway } from '../env/k8s/node/podNetwork';
import { runDir } from '../env/paths';
import { isNotFound } from '../../agent/kube/client';
import { pollUntil } from './poll';

const GROUP = 'external.metrics.k8s.io';
const VERSION = 'v1beta1';
const API_SERVICE = `${VERSION}.${GROUP}`;

export interface ExternalMetrics {
  /** Sets what every later read of `metric` answers. */
  set(metric: string, value: number): void;
  /** How many reads of `metric` the HPA controller has made so far. */
  reads(metric: string): number;
  close(): Promise<void>;
}

/** Serves external metrics for `namespace` and registers them; `close` unregisters. */
export async function serveExternalMetrics(kc: KubeConfig, namespace: string): Promise<ExternalMetrics> {
  const values = new Map<string, number>();
  const counts = new Map<string, number>();
  const pki = path.join(runDir, 'k8s', 'pki');
  const server = https.createServer(
    {
      cert: fs.readFileSync(path.join(pki, 'apiserver.crt')),
      key: fs.readFileSync(path.join(pki, 'apiserver.key')),
    },
    (req, res) => {
      const url = new URL(req.url ?? '/', 'https://x');
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (url.pathname === `/apis/${GROUP}/${VERSION}`) {
        return json(200, {
          kind: 'APIResourceList',
          apiVersion: 'v1',
          groupVersion: `${GROUP}/${VERSION}`,
          resources: [
            {
              name: '*',
              singularName: '',
              namespaced: true,
              kind: 'ExternalMetricValueList',
              verbs: ['get'],
            },
          ],
        });
      }
      const m = new RegExp(`^/apis/${GROUP}/${VERSION}/namespaces/([^/]+)/([^/]+)$`).exec(url.pathname);
      const metric = m?.[2];
      if (!m || m[1] !== namespace || metric === undefined || !values.has(metric)) {
        return json(404, {
          kind: 'Status',
          apiVersion: 'v1',
          status: 'Failure',
          reason: 'NotFound',
          code: 404,
        });
      }
      counts.set(metric, (counts.get(metric) ?? 0) + 1);
      return json(200, {
        kind: 'ExternalMetricValueList',
        apiVersion: `${GROUP}/${VERSION}`,
        metadata: {},
        items: [
          {
            metricName: metric,
            metricLabels: {},
            timestamp: new Date().toISOString(),
            value: String(values.get(metric)),
          },
        ],
      });
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, podGateway, resolve);
  });
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('the metrics server has no port');
  const port = address.port;

  const core = kc.makeApiClient(CoreV1Api);
  const name = 'queuesplit-test-metrics';
  await core.createNamespacedService({
    namespace,
    body: { metadata: { name }, spec: { ports: [{ name: 'https', port: 443, targetPort: port }] } },
  });
  await kc.makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({
    namespace,
    body: {
      metadata: {
        name,
        labels: {
          'kubernetes.io/service-name': name,
          'endpointslice.kubernetes.io/managed-by': 'queuesplit-test',
        },
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: [podGateway], conditions: { ready: true } }],
      ports: [{ name: 'https', port, protocol: 'TCP' }],
    },
  });
  const registration = kc.makeApiClient(ApiregistrationV1Api);
  await registration.createAPIService({
    body: {
      metadata: { name: API_SERVICE },
      spec: {
        group: GROUP,
        version: VERSION,
        service: { namespace, name, port: 443 },
        insecureSkipTLSVerify: true,
        groupPriorityMinimum: 100,
        versionPriority: 100,
      },
    },
  });
  await pollUntil(
    `the API server reports ${API_SERVICE} Available`,
    () => registration.readAPIService({ name: API_SERVICE }),
    (s) => s.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') === true,
    60_000,
  );

  return {
    set: (metric, value) => void values.set(metric, value),
    reads: (metric) => counts.get(metric) ?? 0,
    close: async () => {
      try {
        await registration.deleteAPIService({ name: API_SERVICE });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
