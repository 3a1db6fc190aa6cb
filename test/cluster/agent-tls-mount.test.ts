// The queue-agent Deployment the real controller creates for a workload whose declaration names a
// CA Secret: exactly that Secret key is mounted, read-only, where the agent reads it — not the
// Secret's other keys, not the workload's other volumes — and the split still runs and hands
// back. (This checks the pod spec the controller wrote, which the real node mounts; the broker
// here is plain AMQP, so no TLS connection is made.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AppsV1Api } from '@kubernetes/client-node';
import { QUEUE_CONFIG_ANNOTATION } from '../../core/queueConfig/schema';
import { caFilePath, tlsMountDir } from '../../core/tlsMount';
import { clusterFixture } from '../support/clusterFixture';
import { fixtureDeployment, waitForReadyPods } from '../support/kube';
import { pollUntil } from '../support/poll';
import { rabbitDeclaration, waitForRabbitHandback } from '../support/rabbitSplit';
import { activeSplit, removeSplit } from '../support/splits';
import { uniqueName } from '../support/services';
import { createSecret } from '../support/secrets';
import { agentPods } from '../support/agentMetrics';

const fx = clusterFixture('qs-agent-tls', { rabbitmq: true });

test('the queue-agent pod mounts exactly the declared CA Secret key, read-only', async () => {
  const { kc, namespace, ch, services } = fx;
  const source = uniqueName('tls-orders');
  await ch.assertQueue(source, { durable: true });
  await createSecret(kc, namespace, 'amqp', { url: services.inCluster.amqpUrl });
  // A CA Secret with more than the CA in it: only ca.crt may reach the agent.
  await createSecret(kc, namespace, 'rabbit-tls', {
    'ca.crt': 'not a real CA',
    'tls.key': 'the app key',
    'tls.crt': 'the app cert',
  });
  const body = fixtureDeployment({
    name: 'tls-app',
    image: 'queuesplit/fixture-rabbitmq-consumer',
    replicas: 1,
    annotations: {
      // The test environment's management API is plain http: with tls declared, that needs the
      // explicit opt-in (README "Trust boundaries").
      [QUEUE_CONFIG_ANNOTATION]: `${rabbitDeclaration}\n      tls: {caSecret: rabbit-tls, caKey: ca.crt}\n      allowPlainHttpManagement: true`,
    },
    env: [
      { name: 'AMQP_URL', valueFrom: { secretKeyRef: { name: 'amqp', key: 'url' } } },
      { name: 'RABBITMQ_MANAGEMENT_URL', value: services.inCluster.rabbitManagementUrl },
      { name: 'SOURCE_QUEUE', value: source },
    ],
  });
  const podSpec = body.spec!.template.spec!;
  podSpec.volumes = [
    { name: 'tls', secret: { secretName: 'rabbit-tls' } },
    { name: 'app-secrets', secret: { secretName: 'amqp' } },
  ];
  podSpec.containers[0]!.volumeMounts = [
    { name: 'tls', mountPath: '/etc/rabbit-tls', readOnly: true },
    { name: 'app-secrets', mountPath: '/etc/app', readOnly: true },
  ];
  await kc.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace, body });
  await waitForReadyPods(kc, namespace, 'tls-app', 1);

  const split = await activeSplit(kc, namespace, { workload: 'tls-app', user: 'alice' }, 180_000);
  const [pod] = await pollUntil(
    'one queue-agent pod',
    () => agentPods(kc, namespace, 'tls-app'),
    (p) => p.length === 1,
  );
  const spec = pod!.spec!;
  const agent = spec.containers[0]!;
  const secretVolumes = (spec.volumes ?? []).filter((v) => v.secret);
  assert.deepEqual(
    secretVolumes.map((v) => ({
      secret: v.secret?.secretName,
      items: v.secret?.items?.map(({ key, path }) => ({ key, path })),
      mode: v.secret?.defaultMode,
    })),
    [{ secret: 'rabbit-tls', items: [{ key: 'ca.crt', path: 'ca.crt' }], mode: 0o444 }],
    'only the CA key of the CA Secret; not its other keys, not the workload’s other Secret volume',
  );
  const mount = agent.volumeMounts?.find((m) => m.name === secretVolumes[0]!.name);
  assert.deepEqual(
    { path: mount?.mountPath, readOnly: mount?.readOnly },
    { path: tlsMountDir('rabbit-tls'), readOnly: true },
  );
  assert.equal(
    agent.env?.find((e) => e.name === 'NODE_EXTRA_CA_CERTS')?.value,
    caFilePath({ caSecret: 'rabbit-tls', caKey: 'ca.crt' }),
  );
  assert.ok(
    !JSON.stringify(spec).includes('the app key') && !JSON.stringify(spec).includes('not a real CA'),
    'no Secret value in the pod spec',
  );

  await removeSplit(kc, namespace, split.metadata.name, 180_000);
  await waitForRabbitHandback(kc, namespace, 'tls-app', source);
});
