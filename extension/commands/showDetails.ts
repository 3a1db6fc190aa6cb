// Queue Split: Show Split Details — one split as a person reads it, live (details.ts): the tree
// row's split, the one split this window runs, or one of mine to pick.
import type { TreeNode } from '../model/tree';
import type { Services } from '../services';
import { chooseMySplit } from './pickers';

export async function showSplitDetails(services: Services, arg?: TreeNode | string): Promise<void> {
  const api = await services.cluster.api();
  let name: string | undefined;
  let namespace = api.target.namespace;
  let context = api.target.context;
  if (typeof arg === 'string') name = arg;
  else if (arg?.kind === 'route') {
    name = arg.split.metadata.name;
    namespace = arg.split.metadata.namespace ?? namespace;
  } else {
    const live = services.sessions.list().filter((s) => s.live);
    if (live.length === 1 && live[0] !== undefined) {
      name = live[0].name;
      namespace = live[0].request.target.namespace;
      context = live[0].request.target.context;
    } else {
      const choice = await chooseMySplit(services, api, 'Show Split Details');
      if (choice === undefined) return;
      name = choice.name;
    }
  }
  services.details.show({ context, namespace, name });
}
