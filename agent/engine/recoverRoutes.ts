// What a recovering engine installs before its pump classifies anything (docs/design.md §7): the
// controller's published table when it is newer than the checkpoint's. A table that
// `reconcileRoutes` would reject leaves the checkpoint's in force, as it would there.
import type { Outcome, PublishedRoutes, RouteSpec } from './contract';
import type { Logger } from '../log';

export async function installPublished(
  published: PublishedRoutes | undefined,
  installedGeneration: number,
  install: (generation: number, routes: readonly RouteSpec[]) => Promise<Outcome<never> | undefined>,
  log: Logger,
): Promise<Outcome<never> | undefined> {
  if (!published || published.generation <= installedGeneration) return undefined;
  const failed = await install(published.generation, published.routes);
  if (failed?.kind !== 'rejected') return failed;
  log.warn('engine.recover_routes_rejected', {
    generation: published.generation,
    reason: failed.errors.map((e) => `${e.path}: ${e.problem}`).join('; '),
  });
  return undefined;
}
