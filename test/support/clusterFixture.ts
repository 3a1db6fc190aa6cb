// The set-up every cluster test file shares, registered as the file's own node:test hooks: the
// admin client of the test environment, the suite's controller installed, a namespace of the
// file's own (deleted after, kept first for the leak scan) and the broker clients it asks for.
// A file calls it once at the top and reads what it made in its tests:
//
//   const fx = clusterFixture('qs-drift', { rabbitmq: true });
//   fx.setup(async () => { … fx.kc … });   // the file's own set-up, never a before() of its own
//   test('…', async () => { const { kc, namespace, ch } = fx; … });
//
// Node 20 runs a file's top-level before (and after) hooks side by side, not one after another:
// a file's own before() would read the fixture before it is made. So the fixture owns the
// file's only hooks and runs the file's set-up (`setup`) and repairs (`defer`) inside them
// (test/unit/test-hooks.test.ts keeps it so).
import { after, before } from 'node:test';
import * as amqp from 'amqplib';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Kafka, Producer } from 'kafkajs';
import { installController } from '../../deploy/install';
import { connectProducer, kafkaClient } from './kafkaSplit';
import { adminConfig, createNamespace, deleteNamespace } from './kube';
import { madeInBefore } from './madeInBefore';
import { loadServices, type Services } from './services';

export interface ClusterFixtureOptions {
  /** Install the suite's controller (deploy/install.ts `testInstall`) first; default true. */
  controller?: boolean;
  /** A RabbitMQ connection and a confirm channel on it. */
  rabbitmq?: boolean;
  /** A Kafka client and a connected producer. */
  kafka?: boolean;
}

/** What `before` makes (the brokers' clients only when asked for). */
interface Made {
  kc: KubeConfig;
  namespace: string;
  conn: amqp.ChannelModel;
  ch: amqp.ConfirmChannel;
  kafka: Kafka;
  producer: Producer;
}
const MADE = [
  'kc',
  'namespace',
  'conn',
  'ch',
  'kafka',
  'producer',
] as const satisfies readonly (keyof Made)[];

export interface ClusterFixture extends Readonly<Made> {
  readonly services: Services;
  /** Runs `fn` in the fixture's `before`, once all it makes is made (in the order added). */
  setup(fn: () => unknown): void;
  /** Settles when the fixture's `before` has: for a file with two fixtures, whose set-up needs both. */
  ready(): Promise<void>;
  /**
   * Runs `fn` in `after` before the fixture lets go of what it made (the last added runs first):
   * a file's own repairs, such as the suite's controller installed again after a file changed it.
   */
  defer(fn: () => unknown): void;
  /** Deletes the namespace now (kept for the leak scan first); `after` does not again. */
  deleteNamespace(): Promise<void>;
}

/** Registers the file's `before` and `after` hooks; the returned object is filled in by `before`. */
export function clusterFixture(namespacePrefix: string, options: ClusterFixtureOptions = {}): ClusterFixture {
  const services = loadServices();
  const deferred: (() => unknown)[] = [];
  const setups: (() => unknown)[] = [];
  const made: Partial<Made> = {};
  let namespaceDeleted = false;

  let settle!: { resolve: () => void; reject: (err: unknown) => void };
  const readiness = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  readiness.catch(() => undefined); // the failure is the hook's; a waiting file sees it too

  before(async () => {
    try {
      await make();
      settle.resolve();
    } catch (err) {
      settle.reject(err);
      throw err;
    }
  });
  async function make(): Promise<void> {
    const kc = (made.kc = adminConfig(services.kubeconfig));
    if (options.controller ?? true) await installController(kc);
    made.namespace = await createNamespace(kc, namespacePrefix);
    if (options.rabbitmq) {
      made.conn = await amqp.connect(services.amqpUrl);
      made.ch = await made.conn.createConfirmChannel();
    }
    if (options.kafka) {
      made.kafka = kafkaClient(services, `${namespacePrefix}-test`);
      made.producer = await connectProducer(made.kafka);
    }
    for (const fn of setups) await fn();
  }
  after(async () => {
    // A failed repair still fails the file, but only once the namespace is gone too.
    let failed: unknown;
    for (const fn of deferred.reverse())
      await Promise.resolve()
        .then(fn)
        .catch((err: unknown) => (failed ??= err));
    const { kc, namespace } = made;
    await made.producer?.disconnect().catch(() => undefined);
    await made.conn?.close().catch(() => undefined);
    if (kc && namespace && !namespaceDeleted) await deleteNamespace(kc, namespace);
    if (failed !== undefined) throw failed;
  });

  const fixture = {
    services,
    setup: (fn: () => unknown) => {
      setups.push(fn);
    },
    ready: () => readiness,
    defer: (fn: () => unknown) => {
      deferred.push(fn);
    },
    deleteNamespace: async () => {
      namespaceDeleted = true;
      await deleteNamespace(built.kc, built.namespace);
    },
  };
  const built: ClusterFixture = madeInBefore(fixture, made, MADE, 'cluster fixture');
  return built;
}
