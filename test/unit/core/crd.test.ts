// The QueueSplit CRD and the generated schemas: committed files are current, the CRD schema is
// structural (what apiextensions.k8s.io/v1 requires), and specs validate with useful errors.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { generatedArtifacts } from '../../../core/artifacts';
import { queueSplitCrd } from '../../../core/crd/crdManifest';
import {
  QUEUE_SPLIT_API_VERSION,
  QUEUE_SPLIT_PHASES,
  type QueueSplit,
} from '../../../core/crd/queueSplitSchema';
import { filterSpecFields, leaseExpiry, validateQueueSplitSpec } from '../../../core/crd/validateQueueSplit';
import { routePhaseForStatus } from '../../../core/state/routeStatus';
import { at } from './splitFixtures';

const root = path.resolve(__dirname, '../../..');

describe('generated files', () => {
  for (const artifact of generatedArtifacts()) {
    test(`${artifact.path} is up to date (regenerate with: npx tsx core/generate.ts)`, () => {
      const file = path.join(root, artifact.path);
      assert.ok(fs.existsSync(file), `${artifact.path} is missing`);
      const committed = fs.readFileSync(file, 'utf8');
      // Compared as data: prettier may lay the JSON out differently from JSON.stringify.
      const load = (text: string): unknown =>
        artifact.path.endsWith('.json') ? JSON.parse(text) : parse(text);
      assert.deepEqual(load(committed), load(artifact.content));
      if (artifact.path.endsWith('.yaml')) assert.equal(committed, artifact.content);
    });
  }
});

type Schema = { [key: string]: unknown };

/** Walks a schema, calling `visit` on every node with its path. */
function walk(node: Schema, visit: (node: Schema, where: string) => void, where = '$'): void {
  visit(node, where);
  const children: [string, unknown][] = [
    ...Object.entries((node.properties as Schema | undefined) ?? {}).map(
      ([k, v]) => [`${where}.${k}`, v] as [string, unknown],
    ),
    [`${where}[]`, node.items],
    [`${where}{}`, typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined],
  ];
  for (const [childWhere, child] of children) {
    if (child && typeof child === 'object') walk(child as Schema, visit, childWhere);
  }
}

describe('QueueSplit CRD', () => {
  const crd = queueSplitCrd() as {
    spec: {
      versions: { schema: { openAPIV3Schema: Schema }; additionalPrinterColumns: { name: string }[] }[];
    };
  };
  const version = crd.spec.versions[0]!;

  test('the schema is structural: typed everywhere, no unsupported keywords', () => {
    const forbidden = ['$schema', '$ref', 'const', 'propertyNames', 'oneOf', 'anyOf', 'allOf', 'not'];
    walk(version.schema.openAPIV3Schema, (node, where) => {
      assert.equal(typeof node.type, 'string', `${where} has no type`);
      for (const key of forbidden) assert.ok(!(key in node), `${where} uses ${key}`);
      assert.ok(
        !(node.properties && 'additionalProperties' in node),
        `${where} mixes properties and additionalProperties`,
      );
    });
  });

  test('has the agreed printer columns, short name and status subresource', () => {
    assert.deepEqual(
      version.additionalPrinterColumns.map((c) => c.name),
      ['Workload', 'Queues', 'Filter', 'Match', 'Owner', 'Phase', 'Age'],
    );
    assert.match(JSON.stringify(crd), /"shortNames":\["qsplit"\]/);
    assert.match(JSON.stringify(crd), /"subresources":\{"status":\{\}\}/);
    assert.match(JSON.stringify(crd), /"scope":"Namespaced"/);
  });

  test('status phases match the TypeScript type', () => {
    const status = version.schema.openAPIV3Schema.properties as Record<string, Schema>;
    const phase = (status.status!.properties as Record<string, Schema>).phase!;
    assert.deepEqual(phase.enum, [...QUEUE_SPLIT_PHASES]);
  });
});

describe('QueueSplit spec validation', () => {
  const spec = {
    workload: { kind: 'Deployment', name: 'shop' },
    queues: ['orders'],
    filter: { 'x-queue-split-user': 'alice' },
    owner: 'alice',
    routeId: 'abcdefghijklmnop',
    lease: { renewTime: '2030-01-01T00:00:00Z', durationSeconds: 60 },
  };

  test('a valid spec passes and types as QueueSplit', () => {
    const result = validateQueueSplitSpec(spec);
    assert.ok(result.ok, JSON.stringify(result));
    const object: QueueSplit = {
      apiVersion: QUEUE_SPLIT_API_VERSION,
      kind: 'QueueSplit',
      metadata: { name: 'alice-shop' },
      spec: (({ filter, ...rest }) => ({ ...rest, ...filterSpecFields(filter) }))(result.value),
      status: {
        phase: 'Active',
        queues: [{ name: 'orders', phase: 'Active', envOverrides: { ORDERS_TOPIC: 'qs-kses-orders-x' } }],
      },
    };
    assert.equal(object.spec.filter?.['x-queue-split-user'], 'alice');
    assert.equal(leaseExpiry(spec), Date.parse('2030-01-01T00:01:00Z'));
  });

  test('errors are paths under spec with fixes; filter rules come from core/filter', () => {
    const result = validateQueueSplitSpec({
      ...spec,
      workload: { kind: 'DaemonSet', name: 'x' },
      routeId: 'SHORT',
    });
    assert.ok(!result.ok);
    assert.deepEqual(result.errors.map((e) => e.path).sort(), ['spec.routeId', 'spec.workload.kind']);
    const filter = validateQueueSplitSpec({ ...spec, filter: JSON.parse('{"__proto__": "x", "user": "a"}') });
    assert.ok(!filter.ok);
    assert.equal(filter.errors[0]!.path, 'spec.filter.__proto__');
  });
});

describe('route status', () => {
  test('reads the route phase a developer sees from the workload state', () => {
    assert.equal(routePhaseForStatus(at('PREPARING'), 'r1'), 'Preparing');
    assert.equal(routePhaseForStatus(at('ACTIVE'), 'r1'), 'Active');
    assert.equal(routePhaseForStatus(at('ACTIVE_ROUTE_DRAINING'), 'r1'), 'Draining');
    assert.equal(routePhaseForStatus(at('STOPPING_SOURCE'), 'r1'), 'Stopped');
  });
});
