// The Helm chart deploy/helm/queue-split is generated from deploy/manifests.ts (deploy/helmChart.ts):
// the committed files are what the generator writes now, nothing stale lies beside them, and the
// image pattern of values.schema.json accepts exactly what the install command accepts. That the
// chart renders the same objects as the plain manifests is shown with a real helm in
// test/cluster/helm.test.ts.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { imageReferencePattern, parseImageReference } from '../../../core/image';
import { CHART_DIR, CHART_GENERATED_DIRS, helmChartFiles } from '../../../deploy/helmChart';

const root = path.resolve(__dirname, '../../..');
const regenerate = 'regenerate with: npm run deploy:manifests';

describe('the committed Helm chart', () => {
  const files = helmChartFiles();

  for (const artifact of files) {
    test(`${artifact.path} is up to date (${regenerate})`, () => {
      const file = path.join(root, artifact.path);
      assert.ok(fs.existsSync(file), `${artifact.path} is missing (${regenerate})`);
      const committed = fs.readFileSync(file, 'utf8');
      // JSON goes through prettier when written: compared as data.
      if (artifact.path.endsWith('.json'))
        assert.deepEqual(JSON.parse(committed), JSON.parse(artifact.content));
      else assert.equal(committed, artifact.content);
    });
  }

  test(`${CHART_GENERATED_DIRS.join('/ and ')}/ hold only generated files (${regenerate})`, () => {
    const expected = files
      .map((f) => f.path)
      .filter((p) => CHART_GENERATED_DIRS.some((d) => p.startsWith(`${CHART_DIR}/${d}/`)));
    const present = CHART_GENERATED_DIRS.flatMap((d) => {
      const dir = path.join(root, CHART_DIR, d);
      return fs.existsSync(dir) ? fs.readdirSync(dir).map((f) => `${CHART_DIR}/${d}/${f}`) : [];
    });
    assert.deepEqual(present.sort(), expected.sort());
  });

  test('the chart CRD is the generated one (deploy/crd)', () => {
    const crd = files.find((f) => f.path.endsWith('crds/queuesplit.crd.yaml'))!;
    assert.deepEqual(
      parse(crd.content),
      parse(fs.readFileSync(path.join(root, 'deploy/crd/queuesplit.crd.yaml'), 'utf8')),
    );
  });
});

describe('values.schema.json image pattern', () => {
  const digest = `sha256:${'0123456789abcdef'.repeat(4)}`;
  const samples = [
    'ghcr.io/queuesplit/queue-split-agent:0.1.0',
    `ghcr.io/queuesplit/queue-split-agent@${digest}`,
    `ghcr.io/queuesplit/queue-split-agent:0.1.0@${digest}`,
    'localhost/agent:dev',
    'localhost:5000/a/b/c:v1',
    'registry:5000/agent:1',
    'my-registry.example.com:443/team/queue__split-agent:1.0_rc-1',
    // refused
    'queuesplit/agent:test',
    'agent:1',
    'ghcr.io/queuesplit/queue-split-agent',
    'ghcr.io/QueueSplit/agent:1',
    'ghcr.io/queuesplit/agent:1 ',
    'ghcr.io/queuesplit/agent@sha256:abc',
    `ghcr.io/queuesplit/agent@sha512:${'0'.repeat(128)}`,
    'ghcr.io//agent:1',
    '-bad.io/agent:1',
    'ghcr.io/agent:.tag',
    '',
  ];
  for (const sample of samples) {
    test(`"${sample}": the schema and parseImageReference agree`, () => {
      let accepted = true;
      try {
        parseImageReference(sample, 'image');
      } catch {
        accepted = false;
      }
      assert.equal(new RegExp(imageReferencePattern).test(sample), accepted);
    });
  }
});
