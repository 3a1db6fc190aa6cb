// The real cluster side of the e2e suites: the controller installed (idempotently, as the cluster
// suites do), a throwaway namespace with an annotated RabbitMQ consumer (test/support/rabbitSplit),
// and the helpers to publish to its source and read where messages went. Used by the UI tests
// (node) and bundled into the extension-host tests.
import * as amqp from 'amqplib';
import type { KubeConfig } from '@kubernetes/client-node';
import { installController } from '../../../deploy/install';
import { adminConfig, createNamespace, deleteNamespace } from '../../support/kube';
import { pollUntil } from '../../support/poll';
import { appReceived, deployRabbitApp, publishTo, rabbitDeclaration } from '../../support/rabbitSplit';
import { loadServices, uniqueName, type Services } from '../../support/services';
import { getSplit } from '../../support/splits';

export interface SplitFixture {
  services: Services;
  admin: KubeConfig;
  namespace: string;
  /** The annotated Deployment. */
  workload: string;
  /** The RabbitMQ queue it consumes (its source). */
  source: string;
  /** A unique owner for this run, so routes of other runs never overlap. */
  owner: string;
  /** Publishes with message ids; `user` sets x-queue-split-user. */
  publish(ids: readonly string[], user?: string): Promise<void>;
  /** Ids the cluster app processed, of those starting with `prefix`. */
  appReceived(prefix: string): Set<string>;
  /** Names of the QueueSplits in the namespace. */
  splits(): Promise<string[]>;
  waitForNoSplits(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** The workload manifest as a repository would carry it (the extension infers the workload from it). */
export function workloadManifest(name: string): string {
  return [
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    `  name: ${name}`,
    '  annotations:',
    '    telepresence.io/queue-config: |',
    ...rabbitDeclaration.split('\n').map((line) => `      ${line}`),
    'spec:',
    '  template:',
    '    spec:',
    '      containers:',
    '        - name: app',
    '          image: queuesplit/fixture-rabbitmq-consumer',
    '',
  ].join('\n');
}

/**
 * Installs (or updates) the controller on the test cluster, as the cluster suites do. It reads
 * the repository's files, so it runs in the test process (run.ts, the UI tests), never inside
 * the extension host, where the bundled tests live elsewhere.
 */
export async function ensureController(): Promise<void> {
  await installController(adminConfig(loadServices().kubeconfig));
}

/** Names of the QueueSplits in `namespace`. */
export async function splitNamesIn(admin: KubeConfig, namespace: string): Promise<string[]> {
  const { CustomObjectsApi } = await import('@kubernetes/client-node');
  const list = (await admin.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
    group: 'queuesplit.dev',
    version: 'v1alpha1',
    namespace,
    plural: 'queuesplits',
  })) as { items: { metadata: { name: string } }[] };
  return list.items.map((i) => i.metadata.name);
}

/** `install: false` inside the extension host: run.ts installed the controller before. */
export async function prepareSplitFixture(
  prefix: string,
  options: { install: boolean } = { install: true },
): Promise<SplitFixture> {
  const services = loadServices();
  const admin = adminConfig(services.kubeconfig);
  if (options.install) await installController(admin);
  const namespace = await createNamespace(admin, prefix);
  const workload = 'orders-app';
  const source = uniqueName(`${prefix}-orders`);
  const owner = uniqueName('e2e').replace(/[^a-z0-9-]/g, '');
  let connection: amqp.ChannelModel | undefined;
  try {
    connection = await amqp.connect(services.amqpUrl);
    const channel = await connection.createConfirmChannel();
    await channel.assertQueue(source, { durable: true });
    await deployRabbitApp(admin, services, namespace, workload, source, 1);
    const splitNames = () => splitNamesIn(admin, namespace);
    const opened = connection;
    return {
      services,
      admin,
      namespace,
      workload,
      source,
      owner,
      publish: (ids, user) => publishTo(channel, source, ids, user),
      appReceived,
      splits: splitNames,
      waitForNoSplits: async (timeoutMs = 240_000) => {
        await pollUntil(
          `no QueueSplits left in ${namespace}`,
          splitNames,
          (names) => names.length === 0,
          timeoutMs,
        );
      },
      close: async () => {
        await opened.close().catch(() => undefined);
        await deleteNamespace(admin, namespace);
      },
    };
  } catch (err) {
    await connection?.close().catch(() => undefined);
    await deleteNamespace(admin, namespace);
    throw err;
  }
}

export { getSplit, pollUntil };
