// What the sidecar files that run the sidecar with its own broker consumers (--transport broker)
// share: a fixture of their own (namespace, workload, developer credentials; fixture.ts) and the
// tests' stand-ins for the controller's and the queue-agent's parts. Two files use it so that
// their tests, minutes in all, run side by side.
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import * as amqp from 'amqplib';
import type { IHeaders } from 'kafkajs';
import { matches } from '../../core/filter';
import { kafkaHeaders } from '../../core/providers/kafka/message';
import { amqpHeaders } from '../../core/providers/rabbitmq/message';
import { loadServices, uniqueName } from '../support/services';
import { createTopic, kafkaClient } from '../support/kafkaSplit';
import { sidecarFixture } from './fixture';
import { IN_CLUSTER_KAFKA, SidecarProcess, getSplit } from './support';

/** The filter every test's split carries. */
export const FILTER = { 'x-queue-split-user': 'alice' };

export interface KafkaRecord {
  partition: number;
  key?: string;
  value: string;
  headers?: IHeaders;
}

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  status: number;
}

/** A fixture named `name` and the helpers bound to it. */
export function brokerSidecarSuite(name: string) {
  const fx = sidecarFixture({
    name,
    clientId: `qs-${name}-test`,
    developers: { developer: true, 'no-secrets': false },
  });
  const services = fx.services;

  /** The flags every test's sidecar gets (developer credentials, short lease, private state). */
  function sidecarArgs(
    args: readonly string[],
    options: { kubeconfig?: string; stateFile?: string } = {},
  ): string[] {
    const stateFile = options.stateFile ?? path.join(fx.stateDir, `${uniqueName('state')}.json`);
    return [
      ...[
        '--kubeconfig',
        options.kubeconfig ?? fx.kubeconfig('developer'),
        '-n',
        fx.namespace,
        '-w',
        `deployment/${fx.workload.name}`,
        '--owner',
        'alice',
      ],
      ...[
        '--lease-seconds',
        '10',
        '--poll-interval',
        '250',
        '--state-file',
        stateFile,
        '--detach-timeout',
        '30',
      ],
      ...['--map-address', `${IN_CLUSTER_KAFKA}=${services.kafkaBrokers[0]}`],
      // This file proves the sidecar's own broker consumers; agent-stream.test.ts the default,
      // where the queue-agent streams the session to the sidecar.
      ...['--transport', 'broker'],
      ...args,
    ];
  }

  function startSidecar(
    args: readonly string[],
    options: { kubeconfig?: string; stateFile?: string } = {},
  ): SidecarProcess {
    const sidecar = new SidecarProcess(fx.bundle, sidecarArgs(args, options), {
      ...process.env,
      XDG_STATE_HOME: fx.stateDir,
    });
    fx.running.push(sidecar);
    return sidecar;
  }

  async function stopAndDetach(sidecar: SidecarProcess): Promise<void> {
    sidecar.kill('SIGTERM');
    const detached = await sidecar.waitFor('detached');
    assert.equal(detached.drained, true);
    assert.deepEqual(await sidecar.exited, { code: 0, signal: null });
    assert.equal(
      await getSplit(fx.admin, fx.namespace, detached.split.name),
      undefined,
      'the QueueSplit is gone',
    );
  }

  /** No line the sidecar printed may carry a header value, a body or a credential. */
  function assertNothingLeaked(sidecar: SidecarProcess, secrets: readonly string[]): void {
    const everything = `${sidecar.rawStdout.join('\n')}\n${sidecar.stderr}`;
    for (const secret of [...secrets, ':guest@'])
      assert.ok(!everything.includes(secret), `the sidecar printed ${JSON.stringify(secret)}`);
  }

  async function kafkaTopic(prefix: string, partitions: number): Promise<string> {
    const topic = uniqueName(prefix);
    await createTopic(kafkaClient(loadServices(), 'qs-sidecar-topics'), topic, partitions);
    return topic;
  }

  async function rabbitQueue(prefix: string): Promise<string> {
    const queue = uniqueName(prefix);
    await fx.channel.assertQueue(queue, { durable: true });
    return queue;
  }

  /** The queue-agent's routing, as the tests play it: matching → session shadow, the rest → app shadow. */
  async function routeKafka(records: readonly KafkaRecord[], session: string, app: string): Promise<void> {
    for (const r of records) {
      const topic = matches(FILTER, kafkaHeaders(r.headers)) ? session : app;
      await fx.producer.send({
        topic,
        acks: -1,
        messages: [
          {
            partition: topic === session ? r.partition : 0,
            key: r.key ?? null,
            value: r.value,
            headers: r.headers ?? {},
          },
        ],
      });
    }
  }

  async function routeAmqp(
    messages: readonly { body: string; options: amqp.Options.Publish }[],
    session: string,
    app: string,
  ): Promise<void> {
    for (const m of messages) {
      const queue = matches(FILTER, amqpHeaders(m.options.headers as Record<string, unknown> | undefined))
        ? session
        : app;
      fx.channel.sendToQueue(queue, Buffer.from(m.body), { persistent: true, ...m.options });
    }
    await fx.channel.waitForConfirms();
  }

  /** A local service that records each POST and answers with `status(n)` (n counts from 1). */
  async function httpTarget(
    status: (n: number) => number = () => 200,
    delayMs = 0,
  ): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
    const received: Received[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const code = status(received.length + 1);
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status: code });
        setTimeout(() => res.writeHead(code).end(), delayMs);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}/events`,
      received,
      close: () => new Promise((resolve) => server.close(() => resolve())),
    };
  }

  async function committed(group: string, topic: string): Promise<Record<number, string>> {
    const offsets = await fx.kadmin.fetchOffsets({ groupId: group, topics: [topic] });
    return Object.fromEntries(offsets[0]!.partitions.map((p) => [p.partition, p.offset]));
  }

  return {
    fx,
    sidecarArgs,
    startSidecar,
    stopAndDetach,
    assertNothingLeaked,
    kafkaTopic,
    rabbitQueue,
    routeKafka,
    routeAmqp,
    httpTarget,
    committed,
  };
}
