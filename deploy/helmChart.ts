// The Helm chart deploy/helm/queue-split, generated from deploy/manifests.ts so that it and the
// plain manifests (deploy/install/controller.yaml) cannot drift: `npm run deploy:manifests`
// writes both, test/unit/deploy/helmChart.test.ts fails when the committed chart is stale, and
// test/cluster/helm.test.ts shows with a real helm that the chart renders exactly the objects
// controllerManifests() gives for the same values.
//
// How: controllerManifests() is called with sentinel values (a namespace, images, a replica count,
// list entries, maps no user would write), and every place a sentinel comes out becomes the Helm
// expression of its value. Objects that appear only with a switch on (admission policies,
// ServiceMonitor, namespaced mode) or off (the ClusterRoleBinding) are found by rendering with the
// switch flipped, and wrapped in `if`. Anything the generator cannot express this way (a switch
// that changes an object instead of adding or removing it) throws, naming the object: the chart is
// never silently wrong.
//
// Left out of the chart: the controller's Namespace. Helm writes its release record into the
// release namespace before it creates anything, so that namespace must exist first (the chart's
// README: create and label it, as the NOTES warn when it does not enforce PodSecurity).
// The CRD goes in crds/: Helm creates it on install and never upgrades or deletes it. Deleting it
// with the release would delete every QueueSplit while the controller that hands their workloads
// back is being deleted too, leaving workloads cut over (README "Uninstall").
import { isDeepStrictEqual } from 'node:util';
import { stringify } from 'yaml';
import type { Artifact } from '../core/artifacts';
import { renderQueueSplitCrdYaml } from '../core/crd/crdManifest';
import { imageReferencePattern } from '../core/image';
import { restrictedNamespaceLabels } from '../core/podSecurity';
import { PROVIDER_NAMES, PROVIDERS } from '../core/providers';
import { brokerSettings } from '../core/providers/registry';
import { productVersion } from '../core/version';
import {
  controllerManifests,
  defaultControllerResources,
  defaultInstall,
  type ContainerResources,
  type InstallOptions,
  type Manifest,
} from './manifests';

export const CHART_DIR = 'deploy/helm/queue-split';
/** The generated files in templates/ and crds/ are all of those folders (the test checks). */
export const CHART_GENERATED_DIRS = ['templates', 'crds'];

/** The chart's values: what values.yaml documents and values.schema.json checks. */
export interface ChartValues {
  image: string;
  /** '' : the controller's image. */
  agentImage: string;
  replicas: number;
  /** [] : every namespace (a ClusterRoleBinding). */
  watchNamespaces: string[];
  extraArgs: string[];
  podAnnotations: Record<string, string>;
  resources: ContainerResources;
  admissionPolicies: { enabled: boolean };
  metrics: { serviceMonitor: { enabled: boolean; labels: Record<string, string> } };
}

export function defaultChartValues(image: string = defaultInstall.image): ChartValues {
  return {
    image,
    agentImage: '',
    replicas: defaultInstall.replicas,
    watchNamespaces: [],
    extraArgs: [...defaultInstall.extraArgs],
    podAnnotations: {},
    resources: defaultControllerResources,
    admissionPolicies: { enabled: true },
    metrics: { serviceMonitor: { enabled: false, labels: {} } },
  };
}

/** The install options a release with these values in `namespace` stands for (the tests' oracle). */
export function installOptionsFor(values: ChartValues, namespace: string): InstallOptions {
  const monitor = values.metrics.serviceMonitor;
  return {
    namespace,
    image: values.image,
    ...(values.agentImage !== '' ? { agentImage: values.agentImage } : {}),
    replicas: values.replicas,
    ...(values.watchNamespaces.length > 0 ? { watchNamespaces: values.watchNamespaces } : {}),
    extraArgs: values.extraArgs,
    ...(Object.keys(values.podAnnotations).length > 0 ? { podAnnotations: values.podAnnotations } : {}),
    resources: values.resources,
    admissionPolicies: values.admissionPolicies.enabled,
    ...(monitor.enabled ? { serviceMonitor: { labels: monitor.labels } } : {}),
  };
}

// ---- sentinels: values no user would give, each standing for one chart value ----
const NAMESPACE = 'qs-helm-release-namespace';
const DIGEST = `sha256:${'5e'.repeat(32)}`;
// With a digest, so that the digest annotation comes out (only when the image has one).
const IMAGE = `registry.qs-helm.invalid/image@${DIGEST}`;
const AGENT_IMAGE = 'registry.qs-helm.invalid/agent-image:sentinel';
const REPLICAS = 7391;
// Two, so that the joined list (`--watch-namespaces=a,b`) is told from one entry.
const WATCHED = ['qs-helm-watched-1', 'qs-helm-watched-2'];
const EXTRA_ARG = '--qs-helm-extra-arg';
const POD_ANNOTATIONS = { 'qs-helm.invalid/pod-annotations': 'sentinel' };
const RESOURCES: ContainerResources = { limits: { 'qs-helm.invalid/resources': 'sentinel' } };
const MONITOR_LABEL = 'qs-helm.invalid/servicemonitor-labels';

const sentinelOptions: InstallOptions = {
  namespace: NAMESPACE,
  image: IMAGE,
  agentImage: AGENT_IMAGE,
  replicas: REPLICAS,
  watchNamespaces: WATCHED,
  extraArgs: [EXTRA_ARG],
  podAnnotations: POD_ANNOTATIONS,
  resources: RESOURCES,
  admissionPolicies: true,
  serviceMonitor: { labels: { [MONITOR_LABEL]: 'sentinel' } },
};

const NAMESPACED = '$.Values.watchNamespaces';

/**
 * Each switch: its Helm condition, the options with it off, and what it may change in an object
 * that is there either way (everything else must be equal).
 */
const switches: { condition: string; off: InstallOptions; keptAs?: (object: unknown) => unknown }[] = [
  {
    condition: NAMESPACED,
    off: { ...sentinelOptions, watchNamespaces: undefined },
    keptAs: withoutWatched,
  },
  {
    condition: '$.Values.admissionPolicies.enabled',
    off: { ...sentinelOptions, admissionPolicies: false },
  },
  {
    condition: '$.Values.metrics.serviceMonitor.enabled',
    off: { ...sentinelOptions, serviceMonitor: undefined },
  },
];

/**
 * Templates refer to the root context as `$`: the same expression works inside range. Values are
 * put in as plain text, also inside CEL string literals and messages, where deploy/manifests.ts
 * writes JSON.stringify(value): the same text for a namespace (a DNS label) and for an image
 * (values.schema.json admits no quote or backslash in one).
 */
const substitutions: [sentinel: string, expression: string][] = [
  [IMAGE, '$.Values.image'],
  [AGENT_IMAGE, '(include "queue-split.agentImage" $)'],
  [WATCHED.join(','), `(join "," ${NAMESPACED})`],
  [NAMESPACE, '$.Release.Namespace'],
];

/** One object's template: its YAML with tokens, and what each token becomes. */
class TemplateWriter {
  private readonly tokens = new Map<string, (head: string) => string[]>();

  constructor(private readonly extra: [string, string][] = []) {}

  /** A token replaced by `render(head)`: the lines that replace its whole line, `head` being what precedes it. */
  private token(render: (head: string) => string[]): string {
    const token = `__QSHELM_${this.tokens.size}__`;
    this.tokens.set(token, render);
    return token;
  }

  private scalar(expression: string): string {
    return this.token((head) => [`${head}{{ ${expression} }}`]);
  }

  /** A line that is there only when `condition` holds. */
  private optional(condition: string, value: string): string {
    return this.token((head) => [`{{- if ${condition} }}`, `${head}${value}`, '{{- end }}']);
  }

  /** A string with sentinels in it, as a Helm expression (quoted), or undefined if it has none. */
  private stringExpression(text: string): string | undefined {
    const all = [...this.extra, ...substitutions].sort((a, b) => b[0].length - a[0].length);
    const found = new RegExp(all.map(([s]) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'g');
    const literals = text.split(found);
    const args = (text.match(found) ?? []).map((match) => all.find(([s]) => s === match)![1]);
    if (args.length === 0) return undefined;
    if (args.length === 1 && literals.every((l) => l === '')) return `${args[0]} | quote`;
    // A Go string literal: JSON's escapes are a subset of Go's.
    const literal = JSON.stringify(literals.map((l) => l.replace(/%/g, '%%')).join('%s'));
    return `printf ${literal} ${args.join(' ')} | quote`;
  }

  /** The object with every sentinel replaced by a token. */
  transform(value: unknown, key?: string): unknown {
    if (typeof value === 'number') return value === REPLICAS ? this.scalar('$.Values.replicas') : value;
    if (typeof value === 'string') {
      if (value === DIGEST) {
        // The digest of the image, recorded only when it has one (core/image.ts imageDigest).
        return this.optional(
          'contains "@" $.Values.image',
          '{{ splitList "@" $.Values.image | last | quote }}',
        );
      }
      const expression = this.stringExpression(value);
      return expression === undefined ? value : this.scalar(expression);
    }
    if (Array.isArray(value)) {
      return value.map((item: unknown) => {
        if (item === EXTRA_ARG) {
          return this.token((head) => [
            '{{- range $.Values.extraArgs }}',
            `${head}{{ . | quote }}`,
            '{{- end }}',
          ]);
        }
        // An entry naming the watched namespaces exists only in namespaced mode.
        if (typeof item === 'string' && item.includes(WATCHED.join(','))) {
          return this.optional(NAMESPACED, `{{ ${this.stringExpression(item)!} }}`);
        }
        return this.transform(item);
      });
    }
    if (value !== null && typeof value === 'object') {
      if (isDeepStrictEqual(value, RESOURCES)) return this.scalar('toJson $.Values.resources');
      if (isDeepStrictEqual(value, POD_ANNOTATIONS)) {
        return this.optional('$.Values.podAnnotations', '{{ toJson $.Values.podAnnotations }}');
      }
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        if (k === MONITOR_LABEL) {
          const labels = '$.Values.metrics.serviceMonitor.labels';
          out[
            this.token(() => [
              `{{- range $key, $value := ${labels} }}`,
              '{{ $key | quote }}: {{ $value | quote }}',
              '{{- end }}',
            ])
          ] = '';
        } else {
          if (k.includes('qs-helm'))
            throw new Error(`helmChart: a sentinel in the key "${k}" (under ${key ?? 'the object'})`);
          out[k] = this.transform(v, k);
        }
      }
      return out;
    }
    return value;
  }

  /** The object's YAML with its tokens replaced by Helm template text. */
  render(object: Manifest): string {
    const text = stringify(this.transform(object));
    if (text.includes('{{'))
      throw new Error(
        `helmChart: ${describe(object)} has "{{" of its own, which Helm would read as a template`,
      );
    const lines = text.split('\n').flatMap((line) => {
      const match = /^(\s*)(.*?)(__QSHELM_\d+__)/.exec(line);
      if (!match) return [line];
      const [, indent, head, token] = match;
      return this.tokens.get(token!)!(head!).map((l) => indent + l);
    });
    const rest = /__QSHELM_\d+__|qs-helm/.exec(lines.join('\n'));
    if (rest)
      throw new Error(
        `helmChart: ${describe(object)} still has a sentinel (${rest[0]}) the generator does not handle`,
      );
    return lines.join('\n');
  }
}

const keyOf = (m: Manifest) => `${m.kind}/${m.metadata.namespace ?? ''}/${m.metadata.name}`;
const describe = (m: Manifest) =>
  `${m.kind} ${m.metadata.namespace ? `${m.metadata.namespace}/` : ''}${m.metadata.name}`;

/** The object without the list entries that exist only in namespaced mode. */
function withoutWatched(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value
      .filter((item) => !(typeof item === 'string' && item.includes(WATCHED.join(','))))
      .map(withoutWatched);
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutWatched(v)]));
  }
  return value;
}

const withNamespace = (m: Manifest, namespace: string): Manifest => ({
  ...m,
  metadata: { ...m.metadata, namespace },
});

interface Template {
  file: string;
  conditions: string[];
  /** Set for the object rendered once per namespace it binds in (namespaced mode). */
  perWatchedNamespace: boolean;
  object: Manifest;
}

/** Which object goes in which template, under which conditions. */
function planTemplates(): Template[] {
  const all = controllerManifests(sentinelOptions);
  const variants = switches.map((s) => ({ ...s, objects: controllerManifests(s.off) }));
  const templates: Template[] = [];
  const covered = new Set<string>();
  for (const object of all) {
    if (covered.has(keyOf(object))) continue;
    if (object.kind === 'Namespace' && object.metadata.name === NAMESPACE) continue; // see the top
    const conditions: string[] = [];
    for (const variant of variants) {
      const twin = variant.objects.find((o) => keyOf(o) === keyOf(object));
      if (!twin) conditions.push(variant.condition);
      else if (!isDeepStrictEqual(variant.keptAs ? variant.keptAs(object) : object, twin)) {
        throw new Error(
          `helmChart: ${describe(object)} changes with ${variant.condition}; the generator can only add or remove objects`,
        );
      }
    }
    // Namespaced mode binds in each watched namespace and the controller's own: one template,
    // ranged over that list, in place of the copies.
    const perWatchedNamespace = object.metadata.namespace === WATCHED[0];
    if (perWatchedNamespace) {
      for (const namespace of [...WATCHED, NAMESPACE]) {
        const copy = all.find((o) => keyOf(o) === keyOf(withNamespace(object, namespace)));
        if (!copy || !isDeepStrictEqual(copy, withNamespace(object, namespace))) {
          throw new Error(`helmChart: ${describe(object)} is not the same object in ${namespace}`);
        }
        covered.add(keyOf(copy));
      }
    } else if (WATCHED.includes(object.metadata.namespace ?? '')) {
      throw new Error(`helmChart: ${describe(object)} has no twin in ${WATCHED[0]}`);
    }
    templates.push({
      file: `${object.kind.toLowerCase()}-${object.metadata.name}.yaml`,
      conditions,
      perWatchedNamespace,
      object,
    });
  }
  // Objects only with a switch off (the cluster-wide binding).
  for (const variant of variants) {
    for (const object of variant.objects) {
      if (all.some((o) => keyOf(o) === keyOf(object))) continue;
      if (object.kind === 'Namespace') continue;
      templates.push({
        file: `${object.kind.toLowerCase()}-${object.metadata.name}.yaml`,
        conditions: [`not ${variant.condition}`],
        perWatchedNamespace: false,
        object,
      });
    }
  }
  const files = templates.map((t) => t.file);
  const twice = files.find((f, i) => files.indexOf(f) !== i);
  if (twice) throw new Error(`helmChart: two objects would go to templates/${twice}`);
  return templates;
}

const GENERATED =
  'Generated by `npm run deploy:manifests` from deploy/manifests.ts (deploy/helmChart.ts): edit those, not this file.';

function renderTemplate(template: Template): string {
  const writer = template.perWatchedNamespace
    ? new TemplateWriter([[WATCHED[0]!, '$namespace']])
    : new TemplateWriter();
  const body = writer.render(template.object).trimEnd();
  const lines = [`{{- /* ${GENERATED} */ -}}`];
  const open =
    template.conditions.length === 0
      ? []
      : [
          template.conditions.length === 1
            ? template.conditions[0]!
            : `and ${template.conditions.map((c) => `(${c})`).join(' ')}`,
        ];
  if (open.length > 0) lines.push(`{{- if ${open[0]} }}`);
  if (template.perWatchedNamespace) {
    lines.push(
      '{{- range $namespace := uniq (append $.Values.watchNamespaces $.Release.Namespace) }}',
      '---',
    );
  }
  lines.push(body);
  if (template.perWatchedNamespace) lines.push('{{- end }}');
  if (open.length > 0) lines.push('{{- end }}');
  return `${lines.join('\n')}\n`;
}

/** values.yaml: the defaults of deploy/manifests.ts, each with what it does. */
function valuesYaml(values: ChartValues): string {
  const entry = (comment: string, key: keyof ChartValues) =>
    `${comment
      .split('\n')
      .map((l) => `# ${l}`)
      .join('\n')}\n${stringify({ [key]: values[key] })}`;
  return [
    `# ${GENERATED}\n# One release per cluster: the object names are fixed. The controller runs in the release\n# namespace, which must exist first (README.md beside this file).\n`,
    entry(
      'Controller and queue-agent image: a registry host, a path, a tag or a digest (…@sha256:<64 hex>,\ninstalled as given and recorded in the annotation queuesplit.dev/agent-image-digest).',
      'image',
    ),
    entry(
      'Image of the queue-agents; empty: `image`. The admission policy lets the controller run this\nimage and no other.',
      'agentImage',
    ),
    entry('Controller replicas: one leads, the others stand by.', 'replicas'),
    entry(
      'Namespaced mode: serve only these namespaces (they must exist). The controller is bound there and\nin its own namespace by RoleBindings instead of a ClusterRoleBinding. Empty: every namespace.',
      'watchNamespaces',
    ),
    entry(
      [
        'More controller flags (`node dist/agent.js controller --help`), the broker settings among them',
        '(the controller passes them on to every queue-agent):',
        // From the provider table: a new provider's settings are listed here by regenerating.
        ...brokerSettings().map((s) => `  --${s.flag}=<${s.arg}>: ${s.help} (default ${s.default})`),
      ].join('\n'),
      'extraArgs',
    ),
    entry('Annotations of the controller pods.', 'podAnnotations'),
    entry(
      'Requests and limits of the controller container. Helm merges a map you give with these\ndefaults: null drops one (`limits: {cpu: null}`).',
      'resources',
    ),
    entry(
      "The ValidatingAdmissionPolicies queuesplit-owner (a split is its creator's) and\nqueuesplit-controller-confinement (what the controller may change). They need Kubernetes >= 1.30;\nwithout them any developer with the role may change anybody's split and the controller is\nconfined by RBAC alone. Keep them on.",
      'admissionPolicies',
    ),
    entry(
      "A Service on the controller's health port and a Prometheus operator ServiceMonitor scraping its\n/metrics (process metrics); needs the ServiceMonitor CRD. `labels` go on the ServiceMonitor, e.g.\nwhat your Prometheus's serviceMonitorSelector selects.",
      'metrics',
    ),
  ].join('\n');
}

const dnsLabel = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const stringMap = { type: 'object', additionalProperties: { type: 'string' } };
const quantities = { type: 'object', additionalProperties: { type: ['string', 'number'] } };

/** values.schema.json: Helm checks the values against it on template, install and upgrade. */
function valuesSchema(): unknown {
  // The ServiceMonitor's own labels: given again, Helm would write the key twice.
  const monitor = controllerManifests({ ...defaultInstall, serviceMonitor: {} }).find(
    (m) => m.kind === 'ServiceMonitor',
  )!;
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Queue Split chart values',
    type: 'object',
    // A misspelt or unknown value is an error, not silently ignored ("namespace": use -n).
    additionalProperties: false,
    required: ['image', 'replicas'],
    properties: {
      // Helm passes a global map to every chart.
      global: { type: 'object' },
      image: { type: 'string', pattern: imageReferencePattern },
      agentImage: { type: 'string', pattern: `^$|${imageReferencePattern}` },
      replicas: { type: 'integer', minimum: 0 },
      watchNamespaces: {
        type: 'array',
        uniqueItems: true,
        items: { type: 'string', maxLength: 63, pattern: dnsLabel },
      },
      extraArgs: { type: 'array', items: { type: 'string', pattern: '^--' } },
      podAnnotations: stringMap,
      resources: {
        type: 'object',
        additionalProperties: false,
        properties: { requests: quantities, limits: quantities },
      },
      admissionPolicies: {
        type: 'object',
        additionalProperties: false,
        properties: { enabled: { type: 'boolean' } },
      },
      metrics: {
        type: 'object',
        additionalProperties: false,
        properties: {
          serviceMonitor: {
            type: 'object',
            additionalProperties: false,
            properties: {
              enabled: { type: 'boolean' },
              labels: {
                ...stringMap,
                propertyNames: { not: { enum: Object.keys(monitor.metadata.labels!) } },
              },
            },
          },
        },
      },
    },
  };
}

/** "Kafka, RabbitMQ or Amazon SQS". */
function brokerList(): string {
  const labels = PROVIDER_NAMES.map((p) => PROVIDERS[p].label);
  return labels.length > 1 ? `${labels.slice(0, -1).join(', ')} or ${labels.at(-1)!}` : labels.join('');
}

function chartYaml(): string {
  return `# ${GENERATED}\n${stringify({
    apiVersion: 'v2',
    name: 'queue-split',
    // The brokers from the provider table: a new provider is named here by regenerating.
    description: `Queue Split controller: lets developers debug a ${brokerList()} consumer against the cluster without stealing their teammates' messages.`,
    type: 'application',
    version: productVersion,
    appVersion: productVersion,
  })}`;
}

const HELPERS = `{{- /* ${GENERATED} */ -}}
{{- /* The queue-agents' image: agentImage, else the controller's. */ -}}
{{- define "queue-split.agentImage" -}}
{{ .Values.agentImage | default .Values.image }}
{{- end -}}
`;

/** Printed after install and upgrade: what runs where, and what to do before uninstalling. */
function notes(): string {
  const [enforce] = Object.entries(restrictedNamespaceLabels)[0]!;
  const label = Object.entries(restrictedNamespaceLabels)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  return `{{- /* ${GENERATED} */ -}}
Queue Split {{ .Chart.AppVersion }}: the controller ({{ .Values.replicas }} replicas of {{ .Values.image }}) runs in
{{ .Release.Namespace }} and serves {{ if .Values.watchNamespaces }}only the namespaces {{ join ", " .Values.watchNamespaces }}{{ else }}every namespace{{ end }}.
{{- $namespace := lookup "v1" "Namespace" "" .Release.Namespace }}
{{- if and $namespace (ne (dig "metadata" "labels" "${enforce}" "" $namespace) "restricted") }}

WARNING: the namespace {{ .Release.Namespace }} does not enforce PodSecurity "restricted", which the
controller's pods meet. Label it:
  kubectl label namespace {{ .Release.Namespace }} ${label}
{{- end }}

Give developers the split role where they work:
  kubectl create rolebinding queuesplit-developer-<team> -n <namespace> --clusterrole=queuesplit-developer --group=<team>

The QueueSplit CRD came from the chart's crds/ folder: Helm never upgrades or deletes it. After a
chart upgrade that changes it: kubectl apply --server-side -f <chart>/crds/
Before \`helm uninstall\`, hand every workload back (README "Uninstall"): only the controller restores
them, so it must outlive the last split.
`;
}

/** Every generated file of the chart, with its repository path. */
export function helmChartFiles(image: string = defaultInstall.image): Artifact[] {
  const file = (name: string, content: string): Artifact => ({ path: `${CHART_DIR}/${name}`, content });
  return [
    file('Chart.yaml', chartYaml()),
    file('values.yaml', valuesYaml(defaultChartValues(image))),
    file('values.schema.json', `${JSON.stringify(valuesSchema(), null, 2)}\n`),
    file('crds/queuesplit.crd.yaml', renderQueueSplitCrdYaml()),
    file('templates/_helpers.tpl', HELPERS),
    file('templates/NOTES.txt', notes()),
    ...planTemplates().map((t) => file(`templates/${t.file}`, renderTemplate(t))),
  ];
}
