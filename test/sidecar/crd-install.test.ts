// The sidecar suite's files run side by side and each installs the suite's private QueueSplit CRD
// when it starts (fixture.ts). A CI run on a fresh cluster failed 16 tests at once: one file
// created the CRD, another found it, read it and replaced it while the API server was still
// writing the new CRD's status (409 Conflict). Installing must hold while others write the CRD.
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiextensionsV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { QUEUE_SPLIT_PLURAL } from '../../core/crd/queueSplitSchema';
import { adminConfig } from '../support/kube';
import { loadServices, uniqueName } from '../support/services';
import { ensureCrd } from './support';

const admin = adminConfig(loadServices().kubeconfig);
const crds = admin.makeApiClient(ApiextensionsV1Api);
// A group of its own, new on every run, so nothing else's CRD is touched.
const group = `${uniqueName('crd-race')}.queuesplit.test`;
const name = `${QUEUE_SPLIT_PLURAL}.${group}`;

after(async () => {
  await crds.deleteCustomResourceDefinition({ name }).catch(() => undefined);
});

test('sidecar files starting side by side install the suite CRD while the API server still writes it: none fails on a conflict', async () => {
  await ensureCrd(admin, group);
  // Another writer changes the CRD all the while, as the API server does when it writes a new
  // CRD's status: an install that replaces what it read a moment before meets a newer version.
  let writing = true;
  const writer = (async () => {
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    for (let n = 0; writing; n++)
      await crds.patchCustomResourceDefinition(
        { name, body: { metadata: { labels: { touched: String(n) } } } },
        merge,
      );
  })();
  try {
    await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        await sleep(i * 15);
        await ensureCrd(admin, group);
      }),
    );
  } finally {
    writing = false;
    await writer;
  }
});
