// The workload's own split status outlives the last QueueSplit: when the app is not consuming its
// application shadow as the last route leaves, the QueueSplit is gone at once but the handback
// cannot finish — the workload says so (annotation + a Warning Event with the reason and the
// safe action, what `kubectl describe` shows) instead of nothing, and says "handed back" once the
// app consumes again and the handback completes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AdmissionregistrationV1Api, AppsV1Api, CoreV1Api, type CoreV1Event } from '@kubernetes/client-node';
import { WORKLOAD_STATUS_ANNOTATION } from '../../core/workloadStatus';
import { parseWorkloadStatus } from '../../core/workloadStatusParse';
import { mergePatch } from '../../agent/kube/client';
import { clusterFixture } from '../support/clusterFixture';
import { scale, waitForNoPods } from '../support/kube';
import { pollUntil, sleep } from '../support/poll';
import { ids, publishTo, rabbitApp, waitForAppReceived, waitForRabbitHandback } from '../support/rabbitSplit';
import { activeSplit, removeSplit } from '../support/splits';
import { readWorkloadStatus } from '../support/handback';

const fx = clusterFixture('qs-wstatus', { rabbitmq: true });
fx.defer(() => allowHandedBackStatus());

const workloadStatus = (name: string) => readWorkloadStatus(fx.kc, 'Deployment', fx.namespace, name);

/** Cluster-scoped, so named after this run's namespace: parallel runs never share it. */
let denyPolicy: string | undefined;

/**
 * Makes the API server refuse, for a while, every update of `name` that sets its status to
 * HandedBack — as an API timeout under load would make that one write fail. Returns once the
 * refusal is in force (an admin's dry-run of that write is refused).
 */
async function denyHandedBackStatus(name: string): Promise<void> {
  const { kc, namespace } = fx;
  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
  denyPolicy = `qs-test-deny-handedback-${namespace}`;
  const annotation = JSON.stringify(WORKLOAD_STATUS_ANNOTATION);
  const match = {
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
    resourceRules: [
      {
        apiGroups: ['apps'],
        apiVersions: ['*'],
        operations: ['UPDATE'],
        resources: ['deployments'],
        resourceNames: [name],
      },
    ],
  };
  await admission.createValidatingAdmissionPolicy({
    body: {
      metadata: { name: denyPolicy },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: match,
        validations: [
          {
            expression: `!(${annotation} in object.metadata.?annotations.orValue({})) || !object.metadata.annotations[${annotation}].contains('"phase":"HandedBack"')`,
            message: 'test: the HandedBack workload status cannot be written for now',
          },
        ],
      },
    },
  });
  await admission.createValidatingAdmissionPolicyBinding({
    body: {
      metadata: { name: denyPolicy },
      spec: { policyName: denyPolicy, validationActions: ['Deny'], matchResources: match },
    },
  });
  const apps = kc.makeApiClient(AppsV1Api);
  await pollUntil(
    'the API server refuses a HandedBack status (an admin dry-run of it)',
    async () => {
      try {
        await apps.patchNamespacedDeployment(
          {
            name,
            namespace,
            dryRun: 'All',
            body: { metadata: { annotations: { [WORKLOAD_STATUS_ANNOTATION]: '{"phase":"HandedBack"}' } } },
          },
          mergePatch,
        );
        return 'accepted';
      } catch (err) {
        return String(err);
      }
    },
    (result) => result.includes('cannot be written for now'),
    30_000,
  );
}

async function allowHandedBackStatus(): Promise<void> {
  if (denyPolicy === undefined) return;
  const admission = fx.kc.makeApiClient(AdmissionregistrationV1Api);
  const gone = (p: Promise<unknown>) => p.catch(() => undefined);
  await gone(admission.deleteValidatingAdmissionPolicyBinding({ name: denyPolicy }));
  await gone(admission.deleteValidatingAdmissionPolicy({ name: denyPolicy }));
  denyPolicy = undefined;
}

/** The handback's queue-agent objects are gone: its next step writes the HandedBack status. */
async function agentReaped(): Promise<boolean> {
  const { kc, namespace } = fx;
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const names = [
    ...(await apps.listNamespacedDeployment({ namespace })).items,
    ...(await core.listNamespacedServiceAccount({ namespace })).items,
    ...(await core.listNamespacedConfigMap({ namespace })).items,
  ].map((o) => o.metadata?.name ?? '');
  return !names.some(
    (n) => n.startsWith('qs-agent-') || n.startsWith('qs-sa-') || n.startsWith('qs-status-'),
  );
}

async function eventsOf(name: string): Promise<CoreV1Event[]> {
  const list = await fx.kc.makeApiClient(CoreV1Api).listNamespacedEvent({
    namespace: fx.namespace,
    fieldSelector: `involvedObject.kind=Deployment,involvedObject.name=${name}`,
  });
  return list.items;
}

test('the app not consuming its app shadow when the last route leaves: the workload says the handback waits, why and what to do, then that it is handed back, also when that last status write is refused for a while', async () => {
  const { kc, namespace, ch } = fx;
  const source = await rabbitApp(fx, 'idle-app');
  const split = await activeSplit(kc, namespace, { workload: 'idle-app', user: 'lee' });
  await pollUntil(
    'the workload says it is split',
    () => workloadStatus('idle-app'),
    (s) => s?.phase === 'Split',
  );

  // The app stops consuming (as an app that hangs or was scaled away would); its messages wait
  // in the application shadow.
  await scale(kc, namespace, 'idle-app', 0);
  await waitForNoPods(kc, namespace, 'idle-app');
  const plain = ids(source, 'plain', 10);
  await publishTo(ch, source, plain);

  await removeSplit(kc, namespace, split.metadata.name);
  const waiting = await pollUntil(
    'the workload says its handback waits (the QueueSplit is already gone)',
    () => workloadStatus('idle-app'),
    (s) => s?.phase === 'HandingBack' && s.message.includes('Waiting:'),
    90_000,
  );
  assert.match(waiting!.message, /app is getting its sources back/);
  assert.match(waiting!.nextAction ?? '', /Nothing is lost/, 'the safe action is named');
  assert.match(waiting!.nextAction ?? '', /pods running and consuming/);
  const warning = await pollUntil(
    'a Warning Event on the workload (kubectl describe shows it)',
    () => eventsOf('idle-app'),
    (events) => events.some((e) => e.reason === 'HandbackWaiting' && e.type === 'Warning'),
  );
  const text = warning.find((e) => e.reason === 'HandbackWaiting')!.message ?? '';
  assert.match(text, /Waiting: /);
  assert.ok(!text.includes('lee'), 'no header value in the Event');

  // The app consumes again, but the HandedBack status cannot be written for a while: the
  // handback must keep what it needs to retry (its state, the finalizer) instead of finishing
  // silently with the workload stuck saying HandingBack.
  await denyHandedBackStatus('idle-app');
  await scale(kc, namespace, 'idle-app', 1);
  await pollUntil('the handback at its last step (queue-agent reaped)', agentReaped, Boolean, 240_000);
  // A bounded watch, not a wait for a condition: the controller passes every 300 ms and must
  // keep refusing to finish the whole time.
  for (const until = Date.now() + 3_000; Date.now() < until; await sleep(250)) {
    const d = await kc.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: 'idle-app', namespace });
    const said = parseWorkloadStatus(d.metadata?.annotations?.[WORKLOAD_STATUS_ANNOTATION]);
    assert.ok(
      d.metadata?.finalizers?.includes('queuesplit.dev/handback'),
      `the handback finished although the workload could not be told (it says ${said?.phase})`,
    );
  }
  await allowHandedBackStatus();

  // The write goes through again: the handback finishes by itself and the workload says so.
  await waitForRabbitHandback(kc, namespace, 'idle-app', source, { timeoutMs: 240_000 });
  const done = await pollUntil(
    'the workload says it is handed back',
    () => workloadStatus('idle-app'),
    (s) => s?.phase === 'HandedBack',
    60_000,
  );
  assert.equal(done!.routes, 0);
  await pollUntil(
    'a HandedBack Event',
    () => eventsOf('idle-app'),
    (events) => events.some((e) => e.reason === 'HandedBack' && e.type === 'Normal'),
  );
  await waitForAppReceived('every message reached the app', plain, 90_000, source);
});
