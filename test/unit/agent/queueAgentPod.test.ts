// The queue-agent pod spec the controller creates: env copied as references, and exactly the CA
// Secret keys the declaration names mounted read-only where the agent reads them — never other
// keys of those Secrets, never the workload's other volumes, never a Secret value.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1KeyToPath } from '@kubernetes/client-node';
import { QUEUE_AGENT_NODE_OPTIONS, queueAgentDeployment } from '../../../agent/controller/agentDeployment';
import { kubernetesObjectNames } from '../../../core/names';
import type { WorkloadLike } from '../../../core/queueConfig/podTemplate';
import { resolveWorkload } from '../../../core/queueConfig/resolveWorkload';
import type { ResolvedQueue } from '../../../core/queueConfig/resolveQueues';
import { caFilePath } from '../../../core/tlsMount';
import { defaultTiming, statisticsTiming } from '../../../agent/rabbitmq/config';

const TLS_DECLARATION = `
queues:
  - name: orders
    container: app
    kafka:
      brokersEnv: KAFKA_BROKERS
      sourceEnv: ORDERS_TOPIC
      groupEnv: KAFKA_GROUP
      offsetReset: earliest
      tls: {caSecret: kafka-tls, caKey: ca.crt}
  - name: invoices
    container: app
    rabbitmq:
      urlEnv: AMQP_URL
      managementUrlEnv: RABBITMQ_MANAGEMENT_URL
      sourceEnv: INVOICE_QUEUE
      tls: {caSecret: rabbit-ca, caKey: ca.pem}
`;

function resolved(annotation: string, withTlsEnv = true): ResolvedQueue[] {
  const workload: WorkloadLike = {
    kind: 'Deployment',
    metadata: {
      name: 'shop',
      namespace: 'team-a',
      uid: 'uid-1',
      annotations: { 'telepresence.io/queue-config': annotation },
    },
    spec: {
      template: {
        spec: {
          containers: [
            {
              name: 'app',
              env: [
                { name: 'KAFKA_BROKERS', value: 'kafka:9093' },
                { name: 'ORDERS_TOPIC', value: 'orders' },
                { name: 'KAFKA_GROUP', value: 'order-service' },
                { name: 'AMQP_URL', valueFrom: { secretKeyRef: { name: 'rabbit', key: 'url' } } },
                { name: 'RABBITMQ_MANAGEMENT_URL', value: 'https://rabbit:15671' },
                { name: 'INVOICE_QUEUE', value: 'invoices' },
                ...(withTlsEnv
                  ? [{ name: 'RABBIT_CA', valueFrom: { secretKeyRef: { name: 'rabbit-ca', key: 'ca.pem' } } }]
                  : []),
              ],
              volumeMounts: [
                { name: 'kafka-tls', mountPath: '/etc/kafka-tls' },
                { name: 'config', mountPath: '/etc/app' },
              ],
            },
          ],
          volumes: [
            { name: 'kafka-tls', secret: { secretName: 'kafka-tls' } },
            { name: 'config', secret: { secretName: 'app-config' } },
          ],
        },
      },
    },
  };
  const result = resolveWorkload(workload);
  assert.ok(result.ok, JSON.stringify(result));
  return result.value.queues;
}

const names = kubernetesObjectNames({ installId: 'install', workloadUid: 'uid-1', workloadName: 'shop' });

function podSpec(queues: readonly ResolvedQueue[]) {
  const d = queueAgentDeployment(
    { image: 'queuesplit/agent:1', controllerNamespace: 'qs-system', metricsPort: 9090 },
    'team-a',
    names,
    {},
    queues,
  );
  const spec = d.spec!.template.spec!;
  return { spec, container: spec.containers[0]! };
}

describe('queue-agent pod spec', () => {
  test('mounts exactly the CA Secret keys the declaration names, read-only, where the agent reads them', () => {
    const queues = resolved(TLS_DECLARATION);
    const { spec, container } = podSpec(queues);
    assert.deepEqual(
      spec.volumes?.map((v) => [v.secret?.secretName, v.secret?.items]),
      [
        ['kafka-tls', [{ key: 'ca.crt', path: 'ca.crt' }]],
        ['rabbit-ca', [{ key: 'ca.pem', path: 'ca.pem' }]],
      ],
      'only the named keys of the named Secrets; not the app-config volume',
    );
    assert.ok(spec.volumes?.every((v) => v.secret?.defaultMode === 0o444));
    assert.ok(
      container.volumeMounts?.every((m) => m.readOnly === true),
      'mounted read-only',
    );
    for (const q of queues) {
      const file = caFilePath(q.tls)!;
      const mount = container.volumeMounts?.find((m) => file.startsWith(`${m.mountPath}/`));
      assert.ok(mount, `${q.name}: ${file} lies under a mount`);
      const { name, mountPath } = mount;
      const item: V1KeyToPath | undefined = spec.volumes?.find((v) => v.name === name)?.secret?.items?.[0];
      assert.equal(`${mountPath}/${item?.path}`, file);
    }
    assert.equal(
      container.env?.find((e) => e.name === 'NODE_EXTRA_CA_CERTS')?.value,
      caFilePath({ caSecret: 'rabbit-ca', caKey: 'ca.pem' }),
      'RabbitMQ connections (AMQP and management) trust the mounted CA',
    );
    assert.ok(container.securityContext?.readOnlyRootFilesystem && container.securityContext.runAsNonRoot);
  });

  test('runs Node with a 1 MiB young generation (the agent holds little that lives short)', () => {
    // test/bench/queue-agent-memory.bench.ts at 1,000 routes, Node 24: RSS 256–268 → 207 MiB
    // ACTIVE, peak 293–308 → 212; the engine's throughput unchanged (README "The bench report").
    const { container } = podSpec(resolved(TLS_DECLARATION));
    assert.equal(container.env?.find((e) => e.name === 'NODE_OPTIONS')?.value, QUEUE_AGENT_NODE_OPTIONS);
    assert.equal(QUEUE_AGENT_NODE_OPTIONS, '--max-semi-space-size=1');
  });

  test('copies connection env as references only, never values of Secrets', () => {
    const { container } = podSpec(resolved(TLS_DECLARATION));
    assert.deepEqual(container.env?.find((e) => e.name === 'AMQP_URL')?.valueFrom, {
      secretKeyRef: { name: 'rabbit', key: 'url', optional: false },
    });
    assert.ok(
      !container.env?.some((e) => e.name === 'RABBIT_CA'),
      'an env the declaration does not name is not copied',
    );
    assert.ok(
      !container.env?.some((e) => e.name === 'ORDERS_TOPIC'),
      'the source env is the plan, not the pod env',
    );
  });

  test('without a CA Secret there are no volumes and no extra CA env', () => {
    const plain = TLS_DECLARATION.replace(/\n\s+tls: \{[^}]*\}/g, '').replace('https://', 'http://');
    const { spec, container } = podSpec(resolved(plain, false));
    assert.equal(spec.volumes, undefined);
    assert.equal(container.volumeMounts, undefined);
    assert.ok(!container.env?.some((e) => e.name === 'NODE_EXTRA_CA_CERTS'));
  });

  test("passes the brokers' RabbitMQ statistics interval on to the queue-agent only when it is not the default", () => {
    const queues = resolved(TLS_DECLARATION);
    const args = (seconds?: number) =>
      queueAgentDeployment(
        {
          image: 'queuesplit/agent:1',
          controllerNamespace: 'qs-system',
          metricsPort: 9090,
          ...(seconds ? { engineSettings: { 'rabbitmq-statistics-interval': seconds } } : {}),
        },
        'team-a',
        names,
        {},
        queues,
      ).spec!.template.spec!.containers[0]!.args!;
    assert.ok(args(1).includes('--rabbitmq-statistics-interval=1'), args(1).join(' '));
    assert.deepEqual(args(5), args(), 'the default changes no pod template');
    assert.ok(!args().some((a) => a.startsWith('--rabbitmq-statistics-interval')));
  });
});

describe('RabbitMQ statistics timings', () => {
  test("at RabbitMQ's default 5 s interval they are the engine's defaults", () => {
    const t = statisticsTiming(5);
    assert.equal(t.quiesceMs, defaultTiming.quiesceMs);
    assert.equal(t.statisticsLagMs, defaultTiming.statisticsLagMs);
  });

  test('a 1 s interval waits two seconds to quiesce, and never trusts statistics under 6 s old', () => {
    assert.deepEqual(statisticsTiming(1), { quiesceMs: 2_000, statisticsLagMs: 6_000 });
    assert.deepEqual(statisticsTiming(30), { quiesceMs: 60_000, statisticsLagMs: 90_000 });
  });
});
