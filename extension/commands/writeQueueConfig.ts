// Queue Split: Write Queue Config Annotation… — proposes the telepresence.io/queue-config
// annotation of a workload from what its pod template shows (containers, env vars that look like
// topics, queues, queue URLs and brokers; Secret and ConfigMap references by name and key, never
// a Secret's value), lets the person confirm the provider and the queues, validates the proposal
// with the schema and the workload checks the controller runs, shows it as a diff of the
// workload's YAML, then applies it (a merge patch of the annotation, with the user's
// credentials) or copies it as a patch for kubectl or a GitOps repository. The bulk (zod, yaml,
// the inference) is dist/extension-annotation.js, loaded when the command first runs.
import * as vscode from 'vscode';
import { sourceLabel, PROVIDERS, type Provider } from '../../core/providers';
import type { WorkloadLike } from '../../core/queueConfig/podTemplate';
import type * as Annotation from '../model/annotation';
import { namespaceOfNode, type TreeNode } from '../model/tree';
import type { WorkloadKind } from '../model/types';
import { UserError } from '../notifications';
import type { Services } from '../services';

type Model = typeof Annotation;

/** Given by tests and scripts: each one given skips its question. */
export interface WriteQueueConfigArgs {
  workload?: { kind: WorkloadKind; name: string };
  container?: string;
  provider?: Provider;
  /** The env vars naming the sources, a queue each. */
  sources?: string[];
  /** Env var per connection field of the provider's block (`brokersEnv`, `managementUrlEnv`). */
  roles?: Record<string, string>;
  answers?: Record<string, string>;
  /** What to do with a valid proposal, instead of asking; `none`: only show the diff. */
  action?: 'apply' | 'copy' | 'none';
}

export interface WriteQueueConfigResult {
  outcome: 'applied' | 'copied' | 'shown' | 'refused';
  workload: { kind: WorkloadKind; name: string; namespace: string };
  /** The annotation's value as proposed. */
  annotation: string;
  /** The two sides of the diff. */
  diff: { current: string; proposed: string };
  /** copied: the text put on the clipboard. */
  patch?: string;
  /** refused: what the error said, and what to do. */
  message?: string;
}

export const ANNOTATION_SCHEME = 'queuesplit-annotation';
const STEP = vscode.l10n.t('Write Queue Config');

/** The read-only documents the diff shows (the workload now, and with the proposal). */
class ProposalDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private count = 0;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '# This proposal is gone: run the command again.\n';
  }

  /** A fresh URI per run: VS Code keeps an open document's text by URI. */
  add(namespace: string, file: string, side: 'current' | 'proposed', text: string): vscode.Uri {
    this.count += 1;
    const uri = vscode.Uri.from({
      scheme: ANNOTATION_SCHEME,
      path: `/${namespace}/${side}/${file}`,
      query: `n=${this.count}`,
    });
    this.texts.set(uri.toString(), text);
    return uri;
  }
}

let documents: ProposalDocuments | undefined;

function proposalDocuments(services: Services): ProposalDocuments {
  if (documents === undefined) {
    const created = new ProposalDocuments();
    services.context.subscriptions.push(
      vscode.workspace.registerTextDocumentContentProvider(ANNOTATION_SCHEME, created),
      { dispose: () => (documents = undefined) },
    );
    documents = created;
  }
  return documents;
}

interface Item<T> extends vscode.QuickPickItem {
  value: T;
}

async function pick<T>(items: Item<T>[], title: string, placeHolder: string): Promise<T | undefined> {
  const picked = await vscode.window.showQuickPick(items, {
    title: `${STEP}: ${title}`,
    placeHolder,
    matchOnDescription: true,
    ignoreFocusOut: true,
  });
  return picked?.value;
}

async function chooseWorkload(
  model: Model,
  objects: readonly (WorkloadLike & { kind: WorkloadKind })[],
  namespace: string,
): Promise<{ kind: WorkloadKind; name: string } | undefined> {
  if (objects.length === 0)
    throw new UserError(
      vscode.l10n.t('There is no Deployment or StatefulSet in namespace {0}.', namespace),
      vscode.l10n.t('Pick the namespace of your workload with "Queue Split: Select Context/Namespace…".'),
    );
  const items = objects.map((object) => {
    const workload = model.declaredWorkload(object);
    const state = model.declarationState(workload);
    const found = model.surveySummary(model.surveyWorkload(workload));
    const rank = state.state === 'valid' ? 2 : found === model.noSourcesSummary() ? 1 : 0;
    const said =
      state.state === 'none'
        ? vscode.l10n.t('no queue declaration')
        : state.state === 'invalid'
          ? `$(warning) ${vscode.l10n.t('invalid declaration')}`
          : vscode.l10n.t('declares {0}: a new proposal replaces it', state.queues.join(', '));
    const item: Item<{ kind: WorkloadKind; name: string }> = {
      label: object.metadata?.name ?? '',
      description: `${object.kind} · ${said}`,
      detail: state.state === 'invalid' ? `${found} — ${state.problem}` : found,
      value: { kind: object.kind, name: object.metadata?.name ?? '' },
    };
    return { item, rank };
  });
  items.sort((a, b) => a.rank - b.rank || a.item.label.localeCompare(b.item.label));
  return pick(
    items.map((i) => i.item),
    vscode.l10n.t('workload'),
    vscode.l10n.t(
      'Deployments and StatefulSets in namespace {0}; those without a valid declaration first',
      namespace,
    ),
  );
}

const isNode = (arg: TreeNode | WriteQueueConfigArgs | undefined): arg is TreeNode =>
  arg !== undefined && 'id' in arg;

/** The workload of a tree row (a workload or one of its queues), or the one the args name. */
function workloadOf(arg: TreeNode | WriteQueueConfigArgs | undefined) {
  if (!isNode(arg)) return arg?.workload;
  return arg.kind === 'workload' || arg.kind === 'queue'
    ? { kind: arg.workload.kind, name: arg.workload.name }
    : undefined;
}

export async function writeQueueConfig(
  services: Services,
  arg?: TreeNode | WriteQueueConfigArgs,
): Promise<WriteQueueConfigResult | undefined> {
  const args: WriteQueueConfigArgs = isNode(arg) ? {} : (arg ?? {});
  const [api, model] = await Promise.all([
    services.cluster.api(isNode(arg) ? namespaceOfNode(arg) : undefined),
    import('../model/annotation'),
  ]);
  const { namespace, context } = api.target;
  const target = workloadOf(arg) ?? (await chooseWorkload(model, await api.listWorkloadObjects(), namespace));
  if (target === undefined) return undefined;
  const live = await api.readWorkload(target.kind, target.name);
  // While split, the live env names the shadows: the proposal reads the original values.
  const workload = model.declaredWorkload(live);
  const what = `${target.kind} ${target.name}`;

  const surveys = model.surveyWorkload(workload);
  const withQueues = surveys.filter((s) => s.providers.length > 0);
  if (withQueues.length === 0) {
    const envFrom = surveys.flatMap((s) => s.envFrom);
    throw new UserError(
      [
        vscode.l10n.t(
          'No env var of {0} looks like a Kafka topic, a RabbitMQ queue or an SQS queue URL (containers: {1}).',
          what,
          surveys.map((s) => s.container).join(', ') || vscode.l10n.t('none'),
        ),
        ...(envFrom.length > 0
          ? [vscode.l10n.t('Variables from envFrom ({0}) cannot be seen or declared.', envFrom.join(', '))]
          : []),
      ].join(' '),
      vscode.l10n.t(
        'The source must be a literal env value of the container (e.g. ORDERS_TOPIC=orders) or a key of a mounted config file (sourceFile): declare it by hand as the README shows ("The workloads it splits").',
      ),
    );
  }
  const survey =
    args.container !== undefined
      ? withQueues.find((s) => s.container === args.container)
      : withQueues.length === 1
        ? withQueues[0]
        : await pick(
            withQueues.map((s) => ({
              label: s.container,
              description: model.surveySummary([s]),
              value: s,
            })),
            vscode.l10n.t('container'),
            vscode.l10n.t('The container of {0} that consumes the queues', what),
          );
  if (survey === undefined) {
    if (args.container !== undefined)
      throw new UserError(
        vscode.l10n.t('Container {0} of {1} has no env var that looks like a queue.', args.container, what),
        vscode.l10n.t('Containers with one: {0}.', withQueues.map((s) => s.container).join(', ')),
      );
    return undefined;
  }

  const provider =
    args.provider !== undefined
      ? survey.providers.find((p) => p.provider === args.provider)
      : await pick(
          survey.providers.map((p) => ({
            label: PROVIDERS[p.provider].label,
            description: `${PROVIDERS[p.provider].source}s: ${p.sources.map((s) => s.env.name).join(', ')}`,
            detail: model
              .rulesOf(p.provider)
              .connection.map((rule) => {
                const top = p.roles[rule.field]?.[0];
                return top !== undefined && top.score >= model.LIKELY ? `${rule.what}: ${top.env.name}` : '';
              })
              .filter((t) => t !== '')
              .join(' · '),
            value: p,
          })),
          vscode.l10n.t('broker'),
          vscode.l10n.t('What container {0} consumes (likeliest first)', survey.container),
        );
  if (provider === undefined) {
    if (args.provider !== undefined)
      throw new UserError(
        vscode.l10n.t(
          'No env var of container {0} looks like a {1}.',
          survey.container,
          sourceLabel(args.provider),
        ),
        vscode.l10n.t('It has: {0}.', model.surveySummary([survey])),
      );
    return undefined;
  }
  const noun = PROVIDERS[provider.provider].source;

  let sources = args.sources;
  if (sources === undefined) {
    const picked = await vscode.window.showQuickPick(
      provider.sources.map((c) => ({
        label: c.env.name,
        description: model.describeEnv(c.env),
        picked: c.score >= model.LIKELY,
        ...(c.score < model.LIKELY
          ? {
              detail: vscode.l10n.t(
                'its name suggests the app writes to this {0}, not that it consumes it',
                noun,
              ),
            }
          : {}),
        value: c.env.name,
      })),
      {
        title: `${STEP}: ${vscode.l10n.t('{0}s of {1}', sourceLabel(provider.provider), survey.container)}`,
        placeHolder: vscode.l10n.t(
          'The {0}s {1} consumes: each one becomes a queue of the declaration',
          noun,
          target.name,
        ),
        canPickMany: true,
        ignoreFocusOut: true,
      },
    );
    if (picked === undefined) return undefined;
    sources = picked.map((p) => p.value);
  }
  if (sources.length === 0)
    throw new UserError(
      vscode.l10n.t('No {0} selected.', noun),
      vscode.l10n.t('Select at least one {0}.', noun),
    );

  const roles: Record<string, string> = { ...args.roles };
  const rules = model.rulesOf(provider.provider);
  for (const rule of model.ambiguousRoles(provider, { roles, sources })) {
    const likely = (provider.roles[rule.field] ?? []).filter(
      (c) => c.score >= model.LIKELY && !sources.includes(c.env.name),
    );
    const chosen = await pick(
      likely.map((c) => ({ label: c.env.name, description: model.describeEnv(c.env), value: c.env.name })),
      rule.what,
      vscode.l10n.t('Several env vars of {0} look like the {1}', survey.container, rule.what),
    );
    if (chosen === undefined) return undefined;
    roles[rule.field] = chosen;
  }
  for (const rule of model.unresolvedRoles(provider, { roles, sources })) {
    const others = survey.env.filter((e) => !sources.includes(e.name) && !e.unusable);
    if (others.length === 0)
      throw new UserError(
        vscode.l10n.t(
          'Container {0} of {1} has no env var with the {2}, which a {3} declaration needs.',
          survey.container,
          what,
          rule.what,
          PROVIDERS[provider.provider].label,
        ),
        vscode.l10n.t("Add it to the container's env (e.g. {0}), then run the command again.", rule.example),
      );
    const chosen = await pick(
      others.map((e) => ({ label: e.name, description: model.describeEnv(e), value: e.name })),
      rule.what,
      vscode.l10n.t(
        'No env var of {0} looks like the {1} (e.g. {2}): pick the one that holds it',
        survey.container,
        rule.what,
        rule.example,
      ),
    );
    if (chosen === undefined) return undefined;
    roles[rule.field] = chosen;
  }
  const answers: Record<string, string> = { ...args.answers };
  for (const question of rules.questions) {
    if (answers[question.key] !== undefined || question.infer(survey.env) !== undefined) continue;
    const answer = await pick(
      question.answers.map((a) => ({ label: a.value, description: a.description, value: a.value })),
      question.key,
      vscode.l10n.t("The container's env does not say {0}", question.title),
    );
    if (answer === undefined) return undefined;
    answers[question.key] = answer;
  }

  const containers = workload.spec?.template?.spec?.containers?.length ?? 0;
  const proposal = model.propose(
    survey,
    { container: survey.container, provider: provider.provider, sources, roles, answers },
    containers,
  );
  const ref = { kind: target.kind, name: target.name, namespace, context };
  const docs = proposalDocuments(services);
  const file = `${target.kind.toLowerCase()}-${target.name}.yaml`;
  const current = docs.add(namespace, file, 'current', model.workloadYaml(ref, live));
  const proposed = docs.add(namespace, file, 'proposed', model.workloadYaml(ref, live, proposal.text));
  await vscode.commands.executeCommand(
    'vscode.diff',
    current,
    proposed,
    vscode.l10n.t('{0}: {1} (current ↔ proposed)', target.name, model.QUEUE_CONFIG_ANNOTATION),
    { preview: true },
  );
  services.log.info(`${STEP}: proposed for ${what} in ${namespace}:\n${proposal.text}`);

  const valid = model.validateProposal(workload, proposal.text);
  if (!valid.ok)
    throw new UserError(
      [
        vscode.l10n.t(
          'The proposal for {0} does not validate: {1}',
          what,
          valid.errors.map(model.formatFieldError).join(' | '),
        ),
        ...(proposal.notes.length > 0 ? [`(${proposal.notes.join(' ')})`] : []),
      ].join(' '),
      vscode.l10n.t(
        'Fix the container env it names (or write the declaration by hand from the proposal in the diff), then run the command again.',
      ),
    );

  const result = (
    outcome: WriteQueueConfigResult['outcome'],
    extra: Partial<WriteQueueConfigResult> = {},
  ) => ({
    outcome,
    workload: { kind: target.kind, name: target.name, namespace },
    annotation: proposal.text,
    diff: { current: current.toString(), proposed: proposed.toString() },
    ...extra,
  });
  const copy = async (): Promise<WriteQueueConfigResult> => {
    const patch = model.clipboardPatch(ref, proposal.text);
    await vscode.env.clipboard.writeText(patch);
    services.notifier.info(
      vscode.l10n.t(
        'Copied the {0} patch of {1}: a YAML merge patch to merge into its manifest (GitOps), with the kubectl command that applies it in its comments.',
        model.QUEUE_CONFIG_ANNOTATION,
        what,
      ),
    );
    return result('copied', { patch });
  };

  const queues = proposal.queues.map((q) => `${q.name} (${noun} ${q.source})`).join(', ');
  const applyButton = vscode.l10n.t('Apply');
  const copyButton = vscode.l10n.t('Copy as Patch');
  const action =
    args.action ??
    (await vscode.window
      .showInformationMessage(
        [
          vscode.l10n.t(
            'Proposed queue declaration for {0}: {1}; it validates against the pod template.',
            what,
            queues,
          ),
          ...proposal.notes,
        ].join(' '),
        applyButton,
        copyButton,
      )
      .then((choice) => (choice === applyButton ? 'apply' : choice === copyButton ? 'copy' : 'none')));
  if (action === 'none') return result('shown');
  if (action === 'copy') return copy();

  // Applied only to what the diff showed: the same pod template and annotation as read.
  if (!model.sameBasis(workload, model.declaredWorkload(await api.readWorkload(target.kind, target.name))))
    throw new UserError(
      vscode.l10n.t(
        '{0} changed since the proposal was made (its pod template or its annotation): nothing was applied.',
        what,
      ),
      vscode.l10n.t(
        'Run "Queue Split: Write Queue Config Annotation…" again to propose from the current version.',
      ),
    );
  try {
    await api.annotateWorkload(target.kind, target.name, { [model.QUEUE_CONFIG_ANNOTATION]: proposal.text });
  } catch (err) {
    const problem = err as { kind?: unknown; message?: unknown; suggestedAction?: unknown };
    if (problem.kind !== 'forbidden' || typeof problem.suggestedAction !== 'string') throw err;
    const message = String(problem.message);
    services.notifier.error(message, problem.suggestedAction, { title: copyButton, run: copy });
    return result('refused', { message: `${message} ${problem.suggestedAction}` });
  }
  services.notifier.info(vscode.l10n.t('Annotated {0}: {1}. Start Split… can split it now.', what, queues), {
    title: vscode.l10n.t('Start Split…'),
    run: () => vscode.commands.executeCommand('queueSplit.startSplit'),
  });
  services.cluster.refresh();
  return result('applied');
}
