// Files generated from core/'s schemas, with their repository paths. The generator writes them;
// a unit test fails when the committed copies are stale.
import { renderQueueSplitCrdYaml } from './crd/crdManifest';
import { queueConfigJsonSchema } from './queueConfig/jsonSchema';

export interface Artifact {
  path: string;
  content: string;
}

export function generatedArtifacts(): Artifact[] {
  return [
    { path: 'deploy/crd/queuesplit.crd.yaml', content: renderQueueSplitCrdYaml() },
    {
      path: 'deploy/schema/queue-config.schema.json',
      content: `${JSON.stringify(queueConfigJsonSchema(), null, 2)}\n`,
    },
  ];
}
