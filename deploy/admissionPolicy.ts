// The ValidatingAdmissionPolicy that confines the controller's ServiceAccount (README "Install").
// RBAC cannot say "only objects named qs-*" or "only this image": with the
// verbs cutover needs, the controller could otherwise run any image as any ServiceAccount in
// every namespace it serves. The API server refuses, for the controller's requests only:
//  - ServiceAccounts, Roles, RoleBindings, ConfigMaps it does not own (named qs-*, labelled
//    queuesplit.dev/workload; plus its install-id ConfigMap in its own namespace); its Roles
//    grant only get/update on named ConfigMaps and its RoleBindings bind only its qs-* Roles to
//    qs-* ServiceAccounts of the same namespace; in its own namespace, a qs-seal-* Role grants
//    only get on qs-seal-* ConfigMaps and may be bound to a queue-agent's ServiceAccount in
//    another namespace (the agent reads its seal there, and nothing else);
//  - creating or deleting any Deployment but its queue-agent's, and a queue-agent Deployment
//    that runs another image than the one it was installed with or another ServiceAccount
//    than its qs-sa-* one;
//  - on a workload it does not own, any change but the cutover fields: literal env values of
//    existing env entries, the ConfigMap a configMap volume names when either name is one of its
//    qs-cfg-* copies, replicas, its handback finalizer and its own annotations.
// The image is a literal rendered at install, so no parameter object has to be trusted.
import type { Manifest } from './manifests';
import { AGENT_POD_LABEL } from '../core/names';
import {
  ORIGINAL_CONFIG_ANNOTATION,
  ORIGINAL_ENV_ANNOTATION,
  OVERRIDE_GENERATION_ANNOTATION,
} from '../core/queueConfig/originalEnv';
import { RETRY_ANNOTATION } from '../core/state/operatorRetry';
import { WORKLOAD_STATUS_ANNOTATION } from '../core/workloadStatus';

export const ADMISSION_POLICY_NAME = 'queuesplit-controller-confinement';
/** The label every object the controller creates carries (agentObjects.ts, coordinator.ts, stateSeal.ts). */
export const OWNED_LABEL = 'queuesplit.dev/workload';
const HANDBACK_FINALIZER = 'queuesplit.dev/handback';
const INSTALL_CONFIGMAP = 'queuesplit-install';

const cel = (value: string | readonly string[]) => JSON.stringify(value);

/** `a` and `b` (maps or objects) are equal on every key but `except`. */
const equalExcept = (a: string, b: string, except: readonly string[]) =>
  `(${a}.all(k, k in ${cel(except)} || (k in ${b} && ${a}[k] == ${b}[k])) && ` +
  `${b}.all(k, k in ${cel(except)} || k in ${a}))`;

export function controllerAdmissionPolicy(options: {
  namespace: string;
  image: string;
  labels: Record<string, string>;
}): Manifest[] {
  const { namespace, image, labels } = options;
  const username = `system:serviceaccount:${namespace}:queuesplit-controller`;
  const managedAnnotations = [
    WORKLOAD_STATUS_ANNOTATION,
    ORIGINAL_ENV_ANNOTATION,
    ORIGINAL_CONFIG_ANNOTATION,
    RETRY_ANNOTATION,
  ];
  const operations = ['CREATE', 'UPDATE', 'DELETE'];
  const env = (c: string) => `${c}.?env.orValue([])`;
  const containerCutover =
    'object.spec.template.spec.containers.size() == oldObject.spec.template.spec.containers.size() && ' +
    'object.spec.template.spec.containers.all(c, oldObject.spec.template.spec.containers.exists(o, ' +
    `o.name == c.name && ${equalExcept('c', 'o', ['env'])} && ${env('c')}.size() == ${env('o')}.size() && ` +
    `${env('c')}.all(e, ${env('o')}.exists(p, p.name == e.name && e.?valueFrom == p.?valueFrom))))`;
  // A configMap volume may name another ConfigMap only when one of the two is a copy of ours.
  const volumes = (o: string) => `${o}.spec.template.spec.?volumes.orValue([])`;
  const volumeCutover =
    `${volumes('object')}.size() == ${volumes('oldObject')}.size() && ` +
    `${volumes('object')}.all(v, ${volumes('oldObject')}.exists(o, o.name == v.name && (v == o || ` +
    `(has(v.configMap) && has(o.configMap) && ${equalExcept('v', 'o', ['configMap'])} && ` +
    `${equalExcept('v.configMap', 'o.configMap', ['name'])} && ` +
    `(v.configMap.?name.orValue('').startsWith('qs-cfg-') || o.configMap.?name.orValue('').startsWith('qs-cfg-'))))))`;
  const annotations = (o: string) => `${o}.metadata.?annotations.orValue({})`;
  const finalizers = (o: string) =>
    `${o}.metadata.?finalizers.orValue([]).filter(f, f != ${cel(HANDBACK_FINALIZER)})`;
  const tenantCutover = [
    equalExcept('object.spec', 'oldObject.spec', ['template', 'replicas']),
    equalExcept('object.spec.template', 'oldObject.spec.template', ['metadata', 'spec']),
    equalExcept('object.spec.template.metadata', 'oldObject.spec.template.metadata', [
      'annotations',
      'creationTimestamp',
    ]),
    equalExcept(annotations('object.spec.template'), annotations('oldObject.spec.template'), [
      OVERRIDE_GENERATION_ANNOTATION,
    ]),
    equalExcept('object.spec.template.spec', 'oldObject.spec.template.spec', ['containers', 'volumes']),
    volumeCutover,
    containerCutover,
    'object.metadata.?labels == oldObject.metadata.?labels',
    'object.metadata.?ownerReferences == oldObject.metadata.?ownerReferences',
    equalExcept(annotations('object'), annotations('oldObject'), managedAnnotations),
    `${finalizers('object')} == ${finalizers('oldObject')}`,
  ].join(' && ');
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: ADMISSION_POLICY_NAME, labels },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: ['apps'],
              apiVersions: ['*'],
              operations,
              resources: ['deployments', 'statefulsets'],
            },
            { apiGroups: [''], apiVersions: ['*'], operations, resources: ['serviceaccounts', 'configmaps'] },
            {
              apiGroups: ['rbac.authorization.k8s.io'],
              apiVersions: ['*'],
              operations,
              resources: ['roles', 'rolebindings'],
            },
            {
              apiGroups: ['networking.k8s.io'],
              apiVersions: ['*'],
              operations,
              resources: ['networkpolicies'],
            },
          ],
        },
        matchConditions: [
          { name: 'queuesplit-controller', expression: `request.userInfo.username == ${cel(username)}` },
        ],
        variables: [
          { name: 'subject', expression: "request.operation == 'DELETE' ? oldObject : object" },
          {
            name: 'owned',
            expression: `variables.subject.metadata.?name.orValue('').startsWith('qs-') && ${cel(OWNED_LABEL)} in variables.subject.metadata.?labels.orValue({})`,
          },
          {
            name: 'wasOwned',
            expression: `oldObject != null && oldObject.metadata.name.startsWith('qs-') && ${cel(OWNED_LABEL)} in oldObject.metadata.?labels.orValue({})`,
          },
          {
            // Queue-agents before this policy dropped the labels of their status ConfigMap when
            // they wrote it: such a one may still be deleted (only that, only unlabelled).
            name: 'legacyStatus',
            expression:
              "request.operation == 'DELETE' && request.resource.resource == 'configmaps' && oldObject.metadata.name.startsWith('qs-status-') && !has(oldObject.metadata.labels)",
          },
          {
            name: 'installRecord',
            expression: `request.resource.resource == 'configmaps' && request.namespace == ${cel(namespace)} && variables.subject.metadata.?name.orValue('') == ${cel(INSTALL_CONFIGMAP)}`,
          },
          { name: 'workload', expression: "request.resource.group == 'apps'" },
        ],
        validations: [
          {
            expression:
              "variables.workload || variables.installRecord || variables.legacyStatus || (variables.owned && (request.operation != 'UPDATE' || variables.wasOwned))",
            message: `The Queue Split controller may create, change and delete only its own ServiceAccounts, Roles, RoleBindings, ConfigMaps and NetworkPolicies: named qs-* and labelled ${OWNED_LABEL} (admission policy ${ADMISSION_POLICY_NAME}).`,
          },
          {
            expression: `request.resource.resource != 'roles' || request.operation == 'DELETE' || object.rules.all(r, r.?apiGroups.orValue([]) == [''] && r.?resources.orValue([]) == ['configmaps'] && r.?resourceNames.orValue([]).size() > 0 && (request.namespace == ${cel(namespace)} ? (object.metadata.name.startsWith('qs-seal-') && r.verbs == ['get'] && r.resourceNames.all(n, n.startsWith('qs-seal-'))) : r.verbs.all(v, v in ['get', 'update', 'watch'])))`,
            message: `A Role the Queue Split controller creates may grant only get, update and watch on named ConfigMaps, and in its own namespace only get on its qs-seal-* ConfigMaps (admission policy ${ADMISSION_POLICY_NAME}).`,
          },
          {
            expression: `request.resource.resource != 'rolebindings' || request.operation == 'DELETE' || (object.roleRef.kind == 'Role' && object.roleRef.name.startsWith('qs-') && object.subjects.all(s, s.kind == 'ServiceAccount' && s.name.startsWith('qs-') && (s.?namespace.orValue(request.namespace) == request.namespace || (request.namespace == ${cel(namespace)} && object.roleRef.name.startsWith('qs-seal-')))))`,
            message: `A RoleBinding the Queue Split controller creates may bind only its qs-* Role to its qs-* ServiceAccount in the same namespace, or in its own namespace a qs-seal-* Role to a queue-agent's (admission policy ${ADMISSION_POLICY_NAME}).`,
          },
          {
            // Ingress-only, selecting only a queue-agent's pods: it cannot cut a tenant's traffic.
            expression: `request.resource.resource != 'networkpolicies' || request.operation == 'DELETE' || (object.spec.?policyTypes.orValue([]) == ['Ingress'] && !has(object.spec.podSelector.matchExpressions) && object.spec.podSelector.?matchLabels.orValue({}).size() == 1 && object.spec.podSelector.?matchLabels[?${cel(AGENT_POD_LABEL)}].orValue('').startsWith('qs-agent-'))`,
            message: `A NetworkPolicy the Queue Split controller creates may only restrict ingress to one of its queue-agents' pods (admission policy ${ADMISSION_POLICY_NAME}).`,
          },
          {
            expression:
              "!variables.workload || request.operation == 'UPDATE' || (request.resource.resource == 'deployments' && variables.owned)",
            message: `The Queue Split controller may create and delete only its queue-agent Deployments: named qs-* and labelled ${OWNED_LABEL} (admission policy ${ADMISSION_POLICY_NAME}).`,
          },
          {
            expression:
              `!variables.workload || request.operation == 'DELETE' || (request.operation == 'UPDATE' && !variables.wasOwned) || ` +
              `(variables.owned && object.spec.template.spec.containers.all(c, c.image == ${cel(image)}) && ` +
              `object.spec.template.spec.?initContainers.orValue([]).all(c, c.image == ${cel(image)}) && ` +
              "object.spec.template.spec.?serviceAccountName.orValue('').startsWith('qs-sa-'))",
            message: `A queue-agent Deployment may run only the agent image the controller was installed with (${image}), as its qs-sa-* ServiceAccount (admission policy ${ADMISSION_POLICY_NAME}).`,
          },
          {
            expression: `!variables.workload || request.operation != 'UPDATE' || variables.wasOwned || (${tenantCutover})`,
            message: `On a workload it does not own the Queue Split controller may change only the cutover fields: literal values of existing env entries, replicas, the ${HANDBACK_FINALIZER} finalizer and its annotations ${[...managedAnnotations, OVERRIDE_GENERATION_ANNOTATION].join(', ')} (admission policy ${ADMISSION_POLICY_NAME}).`,
          },
        ],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: ADMISSION_POLICY_NAME, labels },
      spec: { policyName: ADMISSION_POLICY_NAME, validationActions: ['Deny'] },
    },
  ];
}
