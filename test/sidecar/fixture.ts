// The set-up the sidecar suite's files share, registered as the file's own node:test hooks: the
// shipped sidecar bundle, the suite's private QueueSplit CRD and group proxy (groupProxy.ts), a
// namespace with the `orders` workload and the developers' kubeconfigs, a state directory, and
// Kafka and RabbitMQ clients. `after` kills the sidecars the tests started, runs the file's own
// clean-ups, releases any finalizer a failed test left (it would hold the namespace forever) and
// lets go of the rest.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import * as amqp from 'amqplib';
import { Kafka, logLevel, Partitioners, type Admin, type Producer } from 'kafkajs';
import { QUEUE_SPLIT_GROUP } from '../../core/crd/queueSplitSchema';
import { runDir } from '../env/paths';
import { adminConfig, createNamespace, deleteNamespace } from '../support/kube';
import { madeInBefore } from '../support/madeInBefore';
import { loadServices, uniqueName, type Services } from '../support/services';
import { startGroupProxy, type GroupProxy } from './groupProxy';
import {
  PRIVATE_GROUP,
  createWorkload,
  developerKubeconfig,
  ensureCrd,
  listSplits,
  patchMetadata,
  sidecarBundle,
  type SidecarProcess,
  type WorkloadSetup,
} from './support';

export interface SidecarFixtureOptions {
  /** The namespace's prefix; the state directory's is `qs-<name>-state-`. */
  name: string;
  /** The Kafka client's id. */
  clientId: string;
  /** The developers' service accounts, in order: name → whether their Role may read Secrets. */
  developers: Record<string, boolean>;
}

/** What `before` makes. */
interface Made {
  admin: KubeConfig;
  bundle: string;
  proxy: GroupProxy;
  namespace: string;
  kubeconfigs: Map<string, string>;
  workload: WorkloadSetup;
  stateDir: string;
  kadmin: Admin;
  producer: Producer;
  amqpModel: amqp.ChannelModel;
  channel: amqp.ConfirmChannel;
}

const MADE = [
  'admin',
  'bundle',
  'proxy',
  'namespace',
  'kubeconfigs',
  'workload',
  'stateDir',
  'kadmin',
  'producer',
  'amqpModel',
  'channel',
] as const satisfies readonly (keyof Made)[];

export interface SidecarFixture extends Readonly<Made> {
  readonly services: Services;
  readonly kafka: Kafka;
  /** The kubeconfig file of developer `name` (through the group proxy). */
  kubeconfig(name: string): string;
  /** Sidecars the tests start: `after` makes sure each is dead before anything else. */
  readonly running: SidecarProcess[];
  /**
   * Runs `fn` in the fixture's `before`, once all it makes is made (in the order added): Node 20
   * runs a file's top-level hooks side by side, so a file's own before() would run too early.
   */
  setup(fn: () => Promise<void> | void): void;
  /** Runs `fn` in `after` once the sidecars are dead (the last added first). */
  defer(fn: () => Promise<void> | void): void;
}

export function sidecarFixture(options: SidecarFixtureOptions): SidecarFixture {
  const services = loadServices();
  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: services.kafkaBrokers,
    logLevel: logLevel.NOTHING,
  });
  const made: Partial<Made> = {};
  const running: SidecarProcess[] = [];
  const deferred: (() => Promise<void> | void)[] = [];
  const setups: (() => Promise<void> | void)[] = [];

  before(async () => {
    const admin = (made.admin = adminConfig(services.kubeconfig));
    [made.bundle] = await Promise.all([sidecarBundle(), ensureCrd(admin)]);
    const proxy = (made.proxy = await startGroupProxy(
      admin.getCurrentCluster()!.server,
      path.join(runDir, 'k8s', 'pki', 'ca.crt'),
      QUEUE_SPLIT_GROUP,
      PRIVATE_GROUP,
    ));
    const namespace = (made.namespace = await createNamespace(admin, `${options.name}-suite`));
    made.kubeconfigs = new Map();
    for (const [name, readsSecrets] of Object.entries(options.developers))
      made.kubeconfigs.set(name, await developerKubeconfig(admin, namespace, name, readsSecrets, proxy.url));
    made.workload = await createWorkload(admin, namespace, 'orders', services.amqpUrl, uniqueName('w'));
    made.stateDir = fs.mkdtempSync(path.join(os.tmpdir(), `qs-${options.name}-state-`));
    made.kadmin = kafka.admin();
    await made.kadmin.connect();
    made.producer = kafka.producer({
      createPartitioner: Partitioners.DefaultPartitioner,
      allowAutoTopicCreation: false,
    });
    await made.producer.connect();
    made.amqpModel = await amqp.connect(services.amqpUrl);
    made.channel = await made.amqpModel.createConfirmChannel();
    for (const fn of setups) await fn();
  });

  after(async () => {
    const { admin, namespace, bundle } = made;
    await Promise.all(running.map((s) => s.ensureDead()));
    for (const fn of deferred.reverse()) await fn();
    if (admin && namespace) {
      for (const split of await listSplits(admin, namespace).catch(() => [])) {
        if (split.metadata.finalizers?.length)
          await patchMetadata(admin, namespace, split.metadata.name, { finalizers: null }).catch(
            () => undefined,
          );
      }
      await deleteNamespace(admin, namespace);
    }
    await made.producer?.disconnect();
    await made.kadmin?.disconnect();
    await made.amqpModel?.close().catch(() => undefined);
    await made.proxy?.close();
    if (made.stateDir) fs.rmSync(made.stateDir, { recursive: true, force: true });
    if (bundle && !process.env.QS_SIDECAR_BUNDLE)
      fs.rmSync(path.dirname(bundle), { recursive: true, force: true });
    for (const file of made.kubeconfigs?.values() ?? []) fs.rmSync(file, { force: true });
  });

  const fixture = {
    services,
    kafka,
    running,
    kubeconfig: (name: string) => {
      const file = made.kubeconfigs?.get(name);
      if (!file) throw new Error(`the sidecar fixture has no developer ${name}`);
      return file;
    },
    setup: (fn: () => Promise<void> | void) => {
      setups.push(fn);
    },
    defer: (fn: () => Promise<void> | void) => {
      deferred.push(fn);
    },
  };
  return madeInBefore(fixture, made, MADE, 'sidecar fixture');
}
