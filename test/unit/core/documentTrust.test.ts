// Documents nobody can forge (core/agentDocuments.ts): the desired document is refused when a broker
// name differs from what core/names derives or a filter breaks the filter rules; the observed
// document is read strictly; every QueueSplit goes through the full validator; an empty filter
// needs the workload owner's opt-in.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classifySplits } from '../../../agent/controller/splitObjects';
import { desiredState } from '../../../agent/controller/desired';
import { parseDesired, parseObserved } from '../../../core/agentDocuments';
import { OBSERVED_API_VERSION } from '../../../core/agentProtocol';
import { WHOLE_QUEUE_ANNOTATION, wholeQueueRefusal } from '../../../core/crd/admission';
import { queueSplitCrd } from '../../../core/crd/crdManifest';
import { QUEUE_SPLIT_API_VERSION, type QueueSplit } from '../../../core/crd/queueSplitSchema';
import type { ResolvedQueue } from '../../../core/queueConfig/resolveQueues';
import { at } from './splitFixtures';

const resolved: ResolvedQueue[] = [
  {
    provider: 'kafka',
    name: 'orders',
    container: 'app',
    sourceAt: { kind: 'env', name: 'SOURCE_TOPIC' },
    source: 'orders',
    groupAt: { kind: 'env', name: 'GROUP_ID' },
    group: 'orders-app',
    offsetReset: 'earliest',
    env: [{ name: 'KAFKA_BROKERS', role: 'brokers', source: { kind: 'value', value: 'kafka:9092' } }],
  },
  {
    provider: 'rabbitmq',
    name: 'invoices',
    container: 'app',
    sourceAt: { kind: 'env', name: 'SOURCE_QUEUE' },
    source: 'invoices',
    env: [{ name: 'AMQP_URL', role: 'url', source: { kind: 'value', value: 'amqp://rabbit' } }],
  },
];

/** The desired document the controller writes for an ACTIVE workload with one route. */
function written(): Record<string, unknown> {
  return JSON.parse(JSON.stringify(desiredState(at('ACTIVE'), resolved, true))) as Record<string, unknown>;
}

type Doc = { queues: { names: Record<string, string> }[]; routes: Record<string, unknown>[] };

describe('desired document', () => {
  test('the document the controller writes is accepted as it is', () => {
    const doc = written();
    const parsed = parseDesired(JSON.stringify(doc));
    assert.ok(parsed.ok, JSON.stringify(parsed));
    assert.deepEqual(parsed.value, doc);
    assert.ok((doc as unknown as Doc).routes.length > 0, 'the fixture has a route to check');
  });

  test('a forged cleanup name (the app shadow pointed at a production topic) refuses the whole document', () => {
    const doc = written() as unknown as Doc;
    doc.queues[0]!.names.appShadow = 'orders-production';
    const parsed = parseDesired(JSON.stringify(doc));
    assert.ok(!parsed.ok, 'a forged name was accepted');
    assert.equal(parsed.errors[0]!.path, 'queues[0].names.appShadow');
    assert.match(parsed.errors[0]!.problem, /"orders-production", but core\/names derives "qs-kapp-orders-/);
    assert.match(parsed.errors[0]!.fix, /Only the Queue Split controller writes this document/);
  });

  test('a forged session shadow, or a route shadow on a queue the route does not name, is refused', () => {
    const doc = written() as unknown as Doc;
    const shadows = doc.routes[0]!.shadows as Record<string, { shadow: string }>;
    shadows[Object.keys(shadows)[0]!]!.shadow = 'payments';
    assert.ok(!parseDesired(JSON.stringify(doc)).ok, 'forged session shadow accepted');
    const extra = written() as unknown as Doc;
    (extra.routes[0]!.shadows as Record<string, unknown>).invoices = { shadow: 'invoices' };
    const parsed = parseDesired(JSON.stringify(extra));
    assert.ok(!parsed.ok, 'extra shadow accepted');
    assert.match(parsed.errors.map((e) => e.problem).join(), /not the route's/);
  });

  test('a "__proto__" filter key in the desired document is refused (zod alone would read it as {})', () => {
    const text = JSON.stringify(written()).replace(/"filter":\{[^}]*\}/, '"filter":{"__proto__":"x"}');
    assert.match(text, /__proto__/);
    const parsed = parseDesired(text);
    assert.ok(!parsed.ok, 'a widened filter was accepted');
    assert.match(parsed.errors[0]!.problem, /reserved key "__proto__"/);
  });

  test('a document without its version, or of another version, is refused naming apiVersion', () => {
    for (const apiVersion of [undefined, 'queuesplit.dev/desired/v2']) {
      const parsed = parseDesired(JSON.stringify({ ...written(), apiVersion }));
      assert.ok(!parsed.ok);
      assert.equal(parsed.errors[0]!.path, 'apiVersion');
    }
    for (const text of ['{', '[]', 'null', '{"apiVersion":"queuesplit.dev/desired/v1"}']) {
      assert.ok(!parseDesired(text).ok, text);
    }
  });
});

describe('observed document', () => {
  const observed = {
    apiVersion: OBSERVED_API_VERSION,
    activationId: 'install-1/uid-1',
    observedGeneration: 3,
    updatedAt: '2030-01-01T00:00:00.000Z',
    queues: {
      orders: {
        step: 'PREPARING',
        generation: 3,
        outcome: { kind: 'done', evidence: 'declared' },
        health: 'ok',
        published: {},
      },
    },
    routes: { r1: { ackedGeneration: -1 } },
  };

  test('a well-formed document is read', () => {
    const parsed = parseObserved(JSON.stringify(observed));
    assert.ok(parsed.ok, JSON.stringify(parsed));
  });

  test('malformed documents are refused with the field, never thrown', () => {
    const broken = [
      '{"not json',
      JSON.stringify({ ...observed, apiVersion: undefined }),
      JSON.stringify({
        ...observed,
        queues: { orders: { ...observed.queues.orders, outcome: { kind: 'maybe' } } },
      }),
      JSON.stringify({ ...observed, routes: 'all' }),
    ];
    for (const text of broken) {
      const parsed = parseObserved(text);
      assert.ok(!parsed.ok, text);
      assert.ok(parsed.errors[0]!.problem.length > 0);
    }
  });
});

function split(filter: Record<string, string> | string): QueueSplit {
  const spec = {
    workload: { kind: 'Deployment', name: 'shop' },
    queues: ['orders'],
    filter: typeof filter === 'string' ? JSON.parse(filter) : filter,
    owner: 'lee',
    routeId: 'abcdefghijklmnop',
    lease: { renewTime: '2030-01-01T00:00:00Z', durationSeconds: 60 },
  };
  return {
    apiVersion: QUEUE_SPLIT_API_VERSION,
    kind: 'QueueSplit',
    metadata: { name: 's', namespace: 'n' },
    spec,
  } as QueueSplit;
}

describe('QueueSplit intake', () => {
  test('a "__proto__" filter key is refused by the full validator, not read as {} (the whole queue)', () => {
    const { valid, invalid } = classifySplits([split('{"__proto__":"x"}')]);
    assert.equal(valid.length, 0, `accepted with filter ${JSON.stringify(valid[0]?.spec.filter)}`);
    assert.match(invalid[0]!.problem, /spec\.filter\.__proto__: uses the reserved key "__proto__"/);
  });

  test('a filter key over 255 bytes (which the CRD counts in characters) is refused naming the field and the fix', () => {
    const { valid, invalid } = classifySplits([split({ ['é'.repeat(200)]: 'v' })]);
    assert.equal(valid.length, 0);
    assert.match(invalid[0]!.problem, /longer than 255 bytes.*Fix: Use a shorter header name/);
  });

  test('a valid split passes with its filter normalised', () => {
    const { valid, invalid } = classifySplits([split({ b: '2', a: '1' })]);
    assert.equal(invalid.length, 0);
    assert.deepEqual(Object.keys(valid[0]!.spec.filter ?? {}), ['a', 'b']);
  });

  test(`an empty filter is refused unless the workload carries ${WHOLE_QUEUE_ANNOTATION}=true`, () => {
    const workload = { kind: 'Deployment', namespace: 'team-a', name: 'shop' };
    const refused = wholeQueueRefusal({}, workload);
    assert.equal(refused?.reason, 'WholeQueueNotAllowed');
    assert.match(refused.message, /takes every message from Deployment team-a\/shop/);
    assert.match(
      refused.message,
      /kubectl -n team-a annotate deployment\/shop queuesplit\.dev\/allow-whole-queue=true/,
    );
    assert.equal(
      wholeQueueRefusal({}, { ...workload, annotations: { [WHOLE_QUEUE_ANNOTATION]: 'true' } }),
      undefined,
    );
    assert.ok(wholeQueueRefusal({}, { ...workload, annotations: { [WHOLE_QUEUE_ANNOTATION]: 'yes' } }));
    assert.equal(wholeQueueRefusal({ user: 'lee' }, workload), undefined);
  });

  test('the CRD carries the CEL rules for the filter keys CEL can check', () => {
    const text = JSON.stringify(queueSplitCrd());
    assert.match(text, /!\('__proto__' in self\)/);
    assert.match(text, /self\.all\(k, k != ''/);
  });
});
