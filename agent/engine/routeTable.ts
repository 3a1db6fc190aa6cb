// The route table in force at one generation: which destination a message goes to. Matching
// is the core RouteIndex (O(1)-ish in the number of routes); this adds the generation, the
// application shadow for unmatched messages, and the checks a table must pass before it
// replaces the running one.
import { filterIdentity, type MessageView } from '../../core/filter';
import type { FieldError, Result } from '../../core/result';
import { RouteIndex } from '../../core/routeIndex';
import type { RouteSpec } from './contract';

export interface Selection {
  /** undefined: no route matched, the message goes to the application shadow. */
  readonly routeId: string | undefined;
  readonly destination: string;
}

export class RouteTable {
  private constructor(
    readonly generation: number,
    readonly routes: readonly RouteSpec[],
    readonly appDestination: string,
    private readonly index: RouteIndex,
    private readonly byId: ReadonlyMap<string, RouteSpec>,
  ) {}

  /** Builds a table or says why not. `reserved` are names no route shadow may take (the
   * source, the application shadow, the lock). */
  static build(
    generation: number,
    routes: readonly RouteSpec[],
    appDestination: string,
    reserved: readonly string[] = [],
  ): Result<RouteTable> {
    const errors: FieldError[] = [];
    const byId = new Map<string, RouteSpec>();
    const shadows = new Map<string, string>();
    routes.forEach((route, i) => {
      byId.set(route.routeId, route); // duplicate ids are reported by RouteIndex.build
      const other = shadows.get(route.shadow);
      if (other !== undefined || reserved.includes(route.shadow) || route.shadow === appDestination) {
        errors.push({
          path: `routes[${i}].shadow`,
          problem: `shadow ${route.shadow} is already used by ${other ? `route ${other}` : 'the split itself'}`,
          fix: 'give every route its own session shadow',
        });
      }
      shadows.set(route.shadow, route.routeId);
    });
    if (!Number.isSafeInteger(generation) || generation < 0) {
      errors.push({
        path: 'generation',
        problem: `${generation} is not a generation`,
        fix: 'pass a non-negative integer',
      });
    }
    const index = RouteIndex.build(routes.map((r) => ({ routeId: r.routeId, filter: r.filter })));
    if (!index.ok) errors.push(...index.errors);
    if (errors.length > 0 || !index.ok) return { ok: false, errors };
    return { ok: true, value: new RouteTable(generation, [...routes], appDestination, index.value, byId) };
  }

  static empty(appDestination: string): RouteTable {
    const table = RouteTable.build(0, [], appDestination);
    if (!table.ok) throw new Error('an empty route table is always valid');
    return table.value;
  }

  select(message: MessageView): Selection {
    const routeId = this.index.match(message);
    const route = routeId === undefined ? undefined : this.byId.get(routeId);
    return route
      ? { routeId: route.routeId, destination: route.shadow }
      : { routeId: undefined, destination: this.appDestination };
  }

  route(routeId: string): RouteSpec | undefined {
    return this.byId.get(routeId);
  }

  /** The same routes (id, shadow and filter), in any order. */
  sameRoutes(routes: readonly RouteSpec[]): boolean {
    return this.routes.length === routes.length && routesKey(this.routes) === routesKey(routes);
  }
}

function routesKey(routes: readonly RouteSpec[]): string {
  return routes
    .map((r) => `${r.routeId}\u0000${r.shadow}\u0000${filterIdentity(r.filter)}`)
    .sort()
    .join('\u0001');
}
