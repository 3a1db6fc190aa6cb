// The small views: status bar, phase wording, owner rules, workload summaries,
// the install confirmation.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { queueSplitCrd } from '../../../core/crd/crdManifest';
import { controllerManifests, defaultInstall } from '../../../deploy/manifests';
import type { AnyOfFilter } from '../../../core/filter';
import { describeManifests, installConfirmation } from '../../../extension/model/install';
import { filterForDisplay, filterKeys } from '../../../extension/model/owner';
import { blockingReason, progressLine, queuePhase, splitPhase } from '../../../extension/model/phases';
import { statusBarLook } from '../../../extension/model/statusBar';
import { summarizeWorkload } from '../../../extension/model/workloads';
import { deploymentObject, split } from './fixtures';

describe('status bar', () => {
  test('hidden without splits', () => {
    assert.equal(statusBarLook([]).visible, false);
  });
  test('one split: workload, phase, delivered', () => {
    const look = statusBarLook([
      { name: 's', workload: 'orders-app', queues: ['orders'], phase: 'Active', delivered: 4 },
    ]);
    assert.equal(look.text, '$(pass-filled) orders-app: Active · 4');
    assert.equal(look.background, undefined);
    assert.match(look.tooltip, /orders-app \[orders\]: Active, 4 delivered/);
  });
  test('several: the most urgent icon, phases counted, background on trouble', () => {
    const look = statusBarLook([
      { name: 'a', workload: 'orders-app', queues: ['orders'], phase: 'Active', delivered: 4 },
      { name: 'b', workload: 'billing', queues: ['invoices'], phase: 'Degraded', routed: 2 },
    ]);
    assert.equal(look.text, '$(warning) 2 splits: 1 Degraded, 1 Active · 6');
    assert.equal(look.background, 'statusBarItem.warningBackground');
    assert.equal(
      statusBarLook([{ name: 'c', workload: 'x', queues: [], phase: 'Failed' }]).background,
      'statusBarItem.errorBackground',
    );
  });
});

describe('phases', () => {
  test("deleted means draining; per-queue phase falls back to the split's", () => {
    assert.equal(splitPhase(split({ phase: 'Active', deleting: true })), 'Draining');
    assert.equal(splitPhase(split()), 'Pending');
    const s = split({ phase: 'Active', queues: ['a', 'b'], queueStatus: [{ name: 'a', phase: 'Degraded' }] });
    assert.equal(queuePhase(s, 'a'), 'Degraded');
    assert.equal(queuePhase(s, 'b'), 'Active');
  });
  test('the blocking reason is the first False condition, with the next action', () => {
    const s = split({
      phase: 'Preparing',
      conditions: [
        { type: 'Attached', status: 'True', reason: 'Ok', message: 'fine' },
        { type: 'Ready', status: 'False', reason: 'Quiescing', message: 'waiting for 2 app pods to stop' },
      ],
      nextAction: 'check the pods',
    });
    assert.deepEqual(blockingReason(s), {
      phase: 'Preparing',
      reason: 'waiting for 2 app pods to stop',
      nextAction: 'check the pods',
    });
    assert.equal(progressLine(s), 'Preparing: waiting for 2 app pods to stop — next: check the pods');
    assert.equal(progressLine(split({ phase: 'Draining', lag: 5 })), 'Draining (5 left)');
  });
});

describe('owner and filters', () => {
  test('values only for the owner; keys in logs', () => {
    const filter = { 'x-queue-split-user': 'alice', team: 'red' };
    assert.equal(filterForDisplay(filter, true), 'team=red,x-queue-split-user=alice');
    assert.equal(filterForDisplay(filter, false), 'team=…,x-queue-split-user=…');
    assert.equal(filterKeys(filter), 'team=…,x-queue-split-user=…');
    assert.equal(filterForDisplay({}, false), '(all messages)');
    const anyOf: AnyOfFilter = {
      anyOf: [{ tenant: { prefix: 'alice-' } }, { 'baggage:queue-split-user': { equals: 'alice' } }],
    };
    assert.equal(filterForDisplay(anyOf, true), 'tenant^=alice- or baggage:queue-split-user=alice');
    assert.equal(filterForDisplay(anyOf, false), 'baggage:queue-split-user=…,tenant=…');
    assert.equal(filterForDisplay({ anyOf: [{}] }, false), '(all messages)');
  });
});

describe('workload summaries (both validation stages of core/queueConfig)', () => {
  const declaration =
    'queues:\n  - name: orders\n    rabbitmq: {urlEnv: AMQP_URL, managementUrlEnv: MGMT_URL, sourceEnv: SOURCE_QUEUE}';
  test('a valid declaration lists its queues with provider and literal source', () => {
    const info = summarizeWorkload(
      'Deployment',
      deploymentObject('orders-app', declaration, [
        { name: 'AMQP_URL', value: 'amqp://127.0.0.1' },
        { name: 'MGMT_URL', value: 'http://127.0.0.1:15672' },
        { name: 'SOURCE_QUEUE', value: 'orders-q' },
      ]),
    );
    assert.deepEqual(info.errors, []);
    assert.deepEqual(info.queues, [
      { name: 'orders', provider: 'rabbitmq', source: 'orders-q', container: 'app' },
    ]);
  });
  test('a declaration the workload cannot satisfy keeps its queue names and says why', () => {
    const info = summarizeWorkload('Deployment', deploymentObject('orders-app', declaration, []));
    assert.equal(info.queues[0]?.name, 'orders');
    assert.ok(info.errors.length > 0);
    assert.match(info.errors.join(' '), /SOURCE_QUEUE/);
  });
  test('a queue named in a mounted file is listed as declared (the tree reads no ConfigMap)', () => {
    const fromFile =
      'queues:\n  - name: orders\n    rabbitmq: {urlEnv: AMQP_URL, managementUrlEnv: MGMT_URL, sourceFile: {path: /config/application.properties, key: app.orders.queue}}';
    const object = deploymentObject('orders-app', fromFile, [
      { name: 'AMQP_URL', value: 'amqp://127.0.0.1' },
    ]);
    const spec = object.spec.template.spec as { volumes?: unknown[] };
    spec.volumes = [{ name: 'config', configMap: { name: 'orders-config' } }];
    const info = summarizeWorkload('Deployment', object);
    assert.deepEqual(info.errors, []);
    assert.deepEqual(info.queues, [
      {
        name: 'orders',
        provider: 'rabbitmq',
        source: 'app.orders.queue in /config/application.properties',
        container: '',
      },
    ]);
  });
});

describe('install', () => {
  test('the confirmation names every object and the context', () => {
    const objects = [queueSplitCrd(), ...controllerManifests(defaultInstall)] as unknown as Parameters<
      typeof describeManifests
    >[0];
    const text = installConfirmation('prod-admin', 'https://k8s:6443', objects);
    assert.match(text, /context "prod-admin" \(https:\/\/k8s:6443\)/);
    for (const object of objects)
      assert.ok(text.includes(`${object.kind} ${object.metadata.name}`), `${object.kind} missing`);
    assert.match(
      text,
      /Deployment queuesplit-controller in namespace queuesplit-system \(image ghcr\.io\/queuesplit\/queue-split-agent:[^,]+, 2 replicas\)/,
    );
    assert.match(text, /cluster-admin/);
    assert.match(
      text,
      /admission policy \(queuesplit-controller-confinement\) lets it create and change only its own qs-\* objects/,
    );
  });
  test('the CRD the extension applies is the one in deploy/crd/', () => {
    const file = path.resolve(__dirname, '../../../deploy/crd/queuesplit.crd.yaml');
    assert.deepEqual(queueSplitCrd(), parse(fs.readFileSync(file, 'utf8')));
  });
});

describe('workloads during a split', () => {
  test('the declared source is shown, not the application shadow the controller put in the env', () => {
    const declaration =
      'queues:\n  - name: orders\n    rabbitmq: {urlEnv: AMQP_URL, managementUrlEnv: MGMT_URL, sourceEnv: SOURCE_QUEUE}';
    const live = deploymentObject('orders-app', declaration, [
      { name: 'AMQP_URL', value: 'amqp://127.0.0.1' },
      { name: 'MGMT_URL', value: 'http://127.0.0.1:15672' },
      { name: 'SOURCE_QUEUE', value: 'qs-rapp-orders-123' },
    ]);
    (live.metadata as { annotations: Record<string, string> }).annotations['queuesplit.dev/original-env'] =
      JSON.stringify({
        'app/SOURCE_QUEUE': 'orders-q',
      });
    assert.equal(summarizeWorkload('Deployment', live).queues[0]?.source, 'orders-q');
  });
});
