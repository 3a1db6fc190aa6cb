// The agent image in the rendered install (README "The agent image"): fully qualified under the project's
// registry path, overridable at install, a digest installed as given and recorded; a Docker Hub
// short name or an unpinned image refused with the field and the fix.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { AGENT_IMAGE_REPOSITORY, defaultAgentImage, parseImageReference } from '../../core/image';
import { productVersion } from '../../core/version';
import { installObjects } from '../../extension/kube/install';
import {
  AGENT_IMAGE_ANNOTATION,
  AGENT_IMAGE_DIGEST_ANNOTATION,
  controllerManifests,
  defaultInstall,
  type Manifest,
} from '../../deploy/manifests';
import { renderInstallYaml } from '../../deploy/render';

const repoRoot = path.resolve(__dirname, '..', '..');
const digest = `sha256:${'0123456789abcdef'.repeat(4)}`;

interface ControllerDeployment {
  metadata: { annotations?: Record<string, string> };
  spec: { template: { spec: { containers: Array<{ image: string; args: string[] }> } } };
}

function controllerOf(manifests: readonly Manifest[]) {
  const deployment = manifests.find((m) => m.kind === 'Deployment') as unknown as ControllerDeployment;
  const container = deployment.spec.template.spec.containers[0]!;
  return {
    image: container.image,
    agentImage: container.args.find((a) => a.startsWith('--agent-image='))?.slice('--agent-image='.length),
    annotations: deployment.metadata.annotations ?? {},
  };
}

test('the default image is the project’s fully qualified registry path at this version, for the controller and its queue-agents', () => {
  assert.equal(defaultAgentImage, `ghcr.io/queuesplit/queue-split-agent:${productVersion}`);
  const parsed = parseImageReference(defaultAgentImage, 'default');
  assert.deepEqual(
    [parsed.registry, parsed.path, parsed.tag],
    ['ghcr.io', 'queuesplit/queue-split-agent', productVersion],
  );
  const c = controllerOf(controllerManifests(defaultInstall));
  assert.deepEqual([c.image, c.agentImage], [defaultAgentImage, defaultAgentImage]);
  assert.equal(c.annotations[AGENT_IMAGE_ANNOTATION], defaultAgentImage);
  assert.equal(c.annotations[AGENT_IMAGE_DIGEST_ANNOTATION], undefined, 'no digest given, none recorded');
});

test('the committed deploy/install/controller.yaml is what `npm run deploy:manifests` renders (no short name in it)', () => {
  const committed = fs.readFileSync(path.join(repoRoot, 'deploy', 'install', 'controller.yaml'), 'utf8');
  assert.equal(committed, renderInstallYaml(), 'rerun `npm run deploy:manifests`');
  assert.doesNotMatch(committed, /image: queuesplit\//);
});

test('an image given with a digest is installed exactly as given and its digest recorded on the controller Deployment', () => {
  const pinned = `registry.example.com:5000/team/queue-split-agent@${digest}`;
  const { manifests, install } = installObjects({ image: pinned });
  assert.equal(install.image, pinned);
  const c = controllerOf(manifests as unknown as Manifest[]);
  assert.deepEqual([c.image, c.agentImage], [pinned, pinned]);
  assert.equal(c.annotations[AGENT_IMAGE_DIGEST_ANNOTATION], digest);
  const tagged = `${AGENT_IMAGE_REPOSITORY}:${productVersion}@${digest}`;
  assert.equal(controllerOf(controllerManifests({ ...defaultInstall, image: tagged })).image, tagged);
  assert.deepEqual(parseImageReference(tagged, 'x').digest, digest);
});

test('`npm run deploy:manifests -- --image` renders the release manifests with the pinned image and refuses a short name', () => {
  const pinned = `${AGENT_IMAGE_REPOSITORY}@${digest}`;
  const rendered = parse(renderInstallYaml(pinned).split('\n---\n').at(-1)!) as ControllerDeployment;
  assert.equal(rendered.spec.template.spec.containers[0]!.image, pinned);
  assert.equal(rendered.metadata.annotations?.[AGENT_IMAGE_DIGEST_ANNOTATION], digest);
  // The script refuses before it writes: the committed file stays as it is.
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(repoRoot, 'deploy', 'render.ts'), '--image', 'queuesplit/agent:1'],
    { cwd: repoRoot, encoding: 'utf8' },
  );
  assert.equal(result.status, 2, result.stderr);
  assert.match(result.stderr, /--image: "queuesplit\/agent:1" names no registry/);
});

test('a Docker Hub short name, an unpinned image or a malformed digest is refused naming the field and the fix', () => {
  const cases: Array<[string, RegExp]> = [
    ['queuesplit/agent:0.1.0', /names no registry, so it would be pulled from Docker Hub/],
    ['node:24', /names no registry/],
    ['ghcr.io/queuesplit/queue-split-agent', /neither a tag nor a digest/],
    ['ghcr.io/queuesplit/queue-split-agent@sha256:abc', /not sha256: followed by 64 lowercase hex digits/],
    ['ghcr.io/QueueSplit/agent:1', /is not a repository path/],
    ['ghcr.io/queuesplit/agent:bad tag', /contains whitespace/],
    ['', /the image is empty/],
  ];
  for (const [image, problem] of cases) {
    assert.throws(
      () => parseImageReference(image, 'queueSplit.install.image'),
      (e: Error) => {
        assert.match(e.message, /^queueSplit\.install\.image: /, image);
        assert.match(e.message, problem, image);
        assert.match(
          e.message,
          /Give a fully qualified image with a tag or digest, e\.g\. ghcr\.io\//,
          image,
        );
        return true;
      },
    );
  }
  assert.throws(
    () => installObjects({ image: 'queuesplit/agent:0.1.0' }),
    /^Error: queueSplit\.install\.image: /,
  );
  assert.equal(parseImageReference('localhost:5000/agent:dev', 'x').registry, 'localhost:5000');
  assert.equal(parseImageReference('localhost/agent:dev', 'x').registry, 'localhost');
});
