// The controller's rendered permissions are the verbs its code uses and no more (README
// "Install"): no wildcard, nothing on Secrets, no StatefulSet create/delete, Leases only in its
// own namespace, and watch only on what it caches or wakes on (its API requests stay bounded).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { controllerManifests, defaultInstall, type Manifest } from '../../../deploy/manifests';

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** Every (group, resource, verb) a ServiceAccount-bound role of the install grants, with its scope. */
function grants(manifests: Manifest[]) {
  const roles = manifests.filter((m) => m.kind === 'ClusterRole' || m.kind === 'Role');
  const bound = manifests.filter(
    (m) =>
      (m.kind === 'ClusterRoleBinding' || m.kind === 'RoleBinding') &&
      (m.subjects as { kind: string; name: string }[]).some(
        (s) => s.kind === 'ServiceAccount' && s.name === 'queuesplit-controller',
      ),
  );
  const out: { scope: string; group: string; resource: string; verb: string }[] = [];
  for (const binding of bound) {
    const ref = binding.roleRef as { kind: string; name: string };
    const role = roles.find(
      (r) =>
        r.kind === ref.kind &&
        r.metadata.name === ref.name &&
        (r.kind === 'ClusterRole' || r.metadata.namespace === binding.metadata.namespace),
    );
    assert.ok(role, `binding ${binding.metadata.name} refers to a role the install ships`);
    const scope = binding.kind === 'ClusterRoleBinding' ? '*' : binding.metadata.namespace!;
    for (const rule of role.rules as Rule[])
      for (const group of rule.apiGroups ?? [])
        for (const resource of rule.resources ?? [])
          for (const verb of rule.verbs) out.push({ scope, group, resource, verb });
  }
  return out;
}

test('the controller role has no wildcard, no Secret access, no StatefulSet create/delete, no lease outside its namespace, no watch it does not use', () => {
  const watched = ['queuesplits', 'configmaps', 'deployments', 'statefulsets'];
  const all = grants(controllerManifests(defaultInstall));
  assert.ok(all.length > 0);
  const show = (g: (typeof all)[number]) => `${g.verb} ${g.group}/${g.resource} in ${g.scope}`;
  const wild = all.filter((g) => [g.group, g.resource, g.verb].includes('*'));
  assert.deepEqual(wild.map(show), [], 'no wildcard');
  assert.deepEqual(all.filter((g) => g.resource === 'secrets').map(show), [], 'nothing on Secrets');
  assert.deepEqual(
    all
      .filter(
        (g) => g.resource === 'statefulsets' && ['create', 'delete', 'deletecollection'].includes(g.verb),
      )
      .map(show),
    [],
    'StatefulSets are only ever changed, never created or deleted',
  );
  assert.deepEqual(
    all.filter((g) => g.resource === 'leases' && g.scope !== defaultInstall.namespace).map(show),
    [],
    'Leases only in the controller namespace',
  );
  assert.deepEqual(
    all.filter((g) => g.verb === 'watch' && !watched.includes(g.resource)).map(show),
    [],
    'watch only what the controller caches (QueueSplits, its ConfigMaps) or wakes on (workloads)',
  );
  for (const escalation of ['escalate', 'bind', 'impersonate'])
    assert.deepEqual(all.filter((g) => g.verb === escalation).map(show), [], `no ${escalation}`);
});

test('the controller role grants exactly what the controller code calls', () => {
  const key = (g: { scope: string; group: string; resource: string; verb: string }) =>
    `${g.scope === '*' ? 'cluster' : 'own'} ${g.group || 'core'}/${g.resource} ${g.verb}`;
  const granted = [...new Set(grants(controllerManifests(defaultInstall)).map(key))].sort();
  // One line per API call site family in agent/controller (grep the kube client calls).
  const used = [
    // controller.ts: the cache (list + watch); splitObjects.ts: finalizers, status subresource.
    'cluster queuesplit.dev/queuesplits list',
    'cluster queuesplit.dev/queuesplits watch',
    'cluster queuesplit.dev/queuesplits patch',
    'cluster queuesplit.dev/queuesplits/status patch',
    // workloads.ts, agentObjects.ts, ownership.ts, workloadStatus.ts; workloadCache.ts caches them
    'cluster apps/deployments get',
    'cluster apps/deployments list',
    'cluster apps/deployments watch',
    'cluster apps/statefulsets list',
    'cluster apps/statefulsets watch',
    'cluster apps/deployments create',
    'cluster apps/deployments update',
    'cluster apps/deployments patch',
    'cluster apps/deployments delete',
    'cluster apps/statefulsets get',
    'cluster apps/statefulsets update',
    'cluster apps/statefulsets patch',
    'cluster apps/deployments/scale update',
    'cluster apps/statefulsets/scale update',
    'cluster apps/replicasets list',
    'cluster apps/replicasets/scale update',
    'cluster core/pods list',
    // the queue-agent's Role grants get/update on two ConfigMaps: RBAC lets the controller
    // create it only while it holds those verbs itself.
    'cluster core/configmaps get',
    'cluster core/configmaps list',
    'cluster core/configmaps watch',
    'cluster core/configmaps create',
    'cluster core/configmaps update',
    'cluster core/configmaps delete',
    'cluster core/serviceaccounts create',
    'cluster core/serviceaccounts delete',
    'cluster rbac.authorization.k8s.io/roles create',
    'cluster rbac.authorization.k8s.io/roles delete',
    'cluster rbac.authorization.k8s.io/rolebindings create',
    'cluster rbac.authorization.k8s.io/rolebindings delete',
    // the queue-agent's NetworkPolicy: read to compare, created, replaced, deleted with it
    'cluster networking.k8s.io/networkpolicies get',
    'cluster networking.k8s.io/networkpolicies create',
    'cluster networking.k8s.io/networkpolicies update',
    'cluster networking.k8s.io/networkpolicies delete',
    'cluster autoscaling/horizontalpodautoscalers list',
    'cluster policy/poddisruptionbudgets list',
    'cluster keda.sh/scaledobjects list',
    'cluster keda.sh/scaledobjects patch',
    'cluster core/events create',
    'cluster core/events list',
    'cluster core/namespaces get',
    // leaderElection.ts, ownership.ts: Leases in the controller namespace only.
    'own coordination.k8s.io/leases get',
    'own coordination.k8s.io/leases list',
    'own coordination.k8s.io/leases create',
    'own coordination.k8s.io/leases update',
    'own coordination.k8s.io/leases patch',
    'own coordination.k8s.io/leases delete',
  ].sort();
  assert.deepEqual(granted, used);
});

test('a namespaced install binds the workload permissions only in the watched namespaces and its own', () => {
  const manifests = controllerManifests({ ...defaultInstall, watchNamespaces: ['team-a', 'team-b'] });
  assert.deepEqual(
    manifests.filter((m) => m.kind === 'ClusterRoleBinding').map((m) => m.metadata.name),
    [],
    'no ClusterRoleBinding',
  );
  const scopes = [...new Set(grants(manifests).map((g) => g.scope))].sort();
  assert.deepEqual(scopes, ['queuesplit-system', 'team-a', 'team-b']);
  const deployment = manifests.find((m) => m.kind === 'Deployment')!;
  const args = (deployment.spec as { template: { spec: { containers: { args: string[] }[] } } }).template.spec
    .containers[0]!.args;
  assert.ok(args.includes('--watch-namespaces=team-a,team-b'), args.join(' '));
});
