// "Write Queue Config Annotation…": what a workload's pod template says about the queues it
// consumes, and the declaration proposed from it. The env of each container is read as names,
// literal values and references (a secretKeyRef's Secret and key, never its value); each
// provider's rules (./kafka.ts, ./rabbitmq.ts, ./sqs.ts) score its env vars per setting. The
// proposal is validated by core/queueConfig exactly as the controller reads the annotation.
import * as l10n from '@vscode/l10n';
import { PROVIDER_NAMES, sourceLabel, type Provider } from '../../../core/providers';
import type { Container, WorkloadLike } from '../../../core/queueConfig/podTemplate';
import { resolveWorkload, type ResolvedWorkload } from '../../../core/queueConfig/resolveWorkload';
import {
  QUEUE_CONFIG_ANNOTATION,
  type BlockOf,
  type QueueConfig,
  type QueueDeclaration,
} from '../../../core/queueConfig/schema';
import { formatFieldError, type Result } from '../../../core/result';
import { stringify } from 'yaml';
import { kafkaRules } from './kafka';
import { rabbitRules } from './rabbitmq';
import { sqsRules } from './sqs';
import { wordsOf, type EnvFact, type ProposalRules, type Question, type RoleRule } from './types';

/** Each provider's rules; the compiler asks for a new provider's. */
const RULES: { readonly [P in Provider]: ProposalRules<P> } = {
  kafka: kafkaRules,
  rabbitmq: rabbitRules,
  sqs: sqsRules,
};

export function rulesOf<P extends Provider>(provider: P): ProposalRules<P> {
  return RULES[provider];
}

/** Score from which an env var is taken for a setting without asking (and a source pre-picked). */
export const LIKELY = 3;

/** A container's env entries as the inference reads them. */
export function envFacts(container: Container): EnvFact[] {
  const facts = new Map<string, EnvFact>();
  for (const entry of Array.isArray(container.env) ? container.env : []) {
    if (typeof entry?.name !== 'string') continue;
    const from = entry.valueFrom;
    let fact: EnvFact;
    if (from === undefined || from === null) fact = { name: entry.name, value: entry.value ?? '' };
    else if (from.secretKeyRef?.name)
      fact = {
        name: entry.name,
        from: { kind: 'secret', name: from.secretKeyRef.name, key: from.secretKeyRef.key },
      };
    else if (from.configMapKeyRef?.name)
      fact = {
        name: entry.name,
        from: { kind: 'configMap', name: from.configMapKeyRef.name, key: from.configMapKeyRef.key },
      };
    else fact = { name: entry.name, unusable: true };
    // The last entry of a name is the one Kubernetes uses.
    facts.delete(entry.name);
    facts.set(entry.name, fact);
  }
  return [...facts.values()];
}

/** Where an env var's value comes from, for a person: `= orders`, `from Secret amqp (key url)`. */
export function describeEnv(env: EnvFact): string {
  if (env.from !== undefined)
    return `from ${env.from.kind === 'secret' ? 'Secret' : 'ConfigMap'} ${env.from.name} (key ${env.from.key})`;
  if (env.unusable) return l10n.t('from a fieldRef or resourceFieldRef');
  return `= ${env.value ?? ''}`;
}

export interface Candidate {
  env: EnvFact;
  score: number;
}

export interface ProviderSurvey {
  provider: Provider;
  /** Env vars that may name a source (a queue each), likeliest first. */
  sources: Candidate[];
  /** Per field of the connection and per-queue settings: candidates, likeliest first. */
  roles: Record<string, Candidate[]>;
  /** How much the env looks like this provider (orders the providers offered). */
  evidence: number;
}

export interface ContainerSurvey {
  container: string;
  env: EnvFact[];
  /** Providers with at least one possible source, likeliest first. */
  providers: ProviderSurvey[];
  /** envFrom sources: their variables are invisible here and cannot be declared. */
  envFrom: string[];
}

function candidates(rule: RoleRule, env: readonly EnvFact[]): Candidate[] {
  return env
    .filter((e) => !e.unusable && (rule.literal !== true || e.value !== undefined))
    .map((e) => ({ env: e, score: rule.score(e) }))
    .filter((c) => c.score > 0)
    .sort((a, b) => b.score - a.score || a.env.name.localeCompare(b.env.name));
}

function surveyProvider<P extends Provider>(
  rules: ProposalRules<P>,
  env: readonly EnvFact[],
): ProviderSurvey {
  const sources = candidates(rules.source, env);
  const roles: Record<string, Candidate[]> = {};
  for (const rule of [...rules.perQueue, ...rules.connection]) roles[rule.field] = candidates(rule, env);
  const top = (list: readonly Candidate[] | undefined) => list?.[0]?.score ?? 0;
  const evidence =
    top(sources) +
    sources.filter((s) => s.score >= LIKELY).length +
    [...rules.perQueue, ...rules.connection]
      .filter((rule) => rule.required === true)
      .reduce((sum, rule) => sum + top(roles[rule.field]), 0);
  return { provider: rules.provider, sources, roles, evidence };
}

export function surveyContainer(container: Container): ContainerSurvey {
  const env = envFacts(container);
  const providers = PROVIDER_NAMES.map((p) => surveyProvider(rulesOf(p), env))
    .filter((s) => s.sources.length > 0)
    .sort((a, b) => b.evidence - a.evidence);
  const envFrom = (container.envFrom ?? []).map((s) =>
    s.secretRef?.name ? `Secret ${s.secretRef.name}` : `ConfigMap ${s.configMapRef?.name ?? '?'}`,
  );
  return { container: container.name, env, providers, envFrom };
}

/** Every container of the pod template, those with a possible queue first. */
export function surveyWorkload(workload: WorkloadLike): ContainerSurvey[] {
  const containers = workload.spec?.template?.spec?.containers ?? [];
  return containers
    .map(surveyContainer)
    .sort((a, b) => (b.providers[0]?.evidence ?? 0) - (a.providers[0]?.evidence ?? 0));
}

/** One line per provider found: `Kafka: ORDERS_TOPIC, PAYMENTS_TOPIC`. */
/** surveySummary's words for a workload without a queue-like env var (callers compare to it). */
export function noSourcesSummary(): string {
  return l10n.t('no env var looks like a topic, queue or queue URL');
}

export function surveySummary(surveys: readonly ContainerSurvey[]): string {
  const parts = surveys.flatMap((c) =>
    c.providers.map(
      (p) =>
        `${sourceLabel(p.provider)}: ${p.sources.map((s) => s.env.name).join(', ')}${surveys.length > 1 ? ` (${c.container})` : ''}`,
    ),
  );
  return parts.length > 0 ? parts.join(' · ') : noSourcesSummary();
}

/** What the user chose (or accepted) for the proposal. */
export interface ProposalChoice {
  container: string;
  provider: Provider;
  /** The env vars naming the sources, a queue each, in this order. */
  sources: readonly string[];
  /** Env var per connection field; a field not given takes its likeliest candidate (if likely). */
  roles?: Readonly<Record<string, string>>;
  /** Answers to the provider's questions; one not given takes what the env says, else the first. */
  answers?: Readonly<Record<string, string>>;
}

export interface ProposedQueue {
  name: string;
  sourceEnv: string;
  source: string;
  /** Per-queue settings taken (Kafka's groupEnv), field → env var. */
  perQueue: Record<string, string>;
}

export interface Proposal {
  provider: Provider;
  container: string;
  config: QueueConfig;
  /** The annotation's value, as it will be written. */
  text: string;
  queues: ProposedQueue[];
  /** Connection field → env var. */
  connection: Record<string, string>;
  answers: Record<string, string>;
  /** What was left out or assumed, for the person to read before applying. */
  notes: string[];
}

const NAME_NOISE = new Set([
  'TOPIC',
  'TOPICS',
  'QUEUE',
  'QUEUES',
  'URL',
  'URI',
  'NAME',
  'SOURCE',
  'INPUT',
  'IN',
  'INBOUND',
  'KAFKA',
  'RABBITMQ',
  'RABBIT',
  'AMQP',
  'SQS',
  'AWS',
  'CONSUMER',
  'CONSUME',
  'SUBSCRIBE',
  'SUBSCRIPTION',
  'LISTEN',
  'LISTENER',
  'GROUP',
  'ID',
]);

/** The words of an env name that say which queue it is: ORDERS_TOPIC → ORDERS. */
export function stemOf(envName: string): string[] {
  return wordsOf(envName).filter((w) => !NAME_NOISE.has(w));
}

/** A DNS label (a logical queue name): lowercase letters, digits, '-', at most 63. */
export function dnsLabel(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 63)
    .replace(/-+$/, '');
}

/** The logical name of a queue: from its env name's words, else from its source. */
export function queueNameFor(rules: ProposalRules<Provider>, envName: string, value: string): string {
  const fromName = dnsLabel(stemOf(envName).join('-'));
  if (fromName !== '') return fromName;
  const fromValue = dnsLabel(rules.nameFromValue(value));
  return fromValue !== '' ? fromValue : dnsLabel(rules.source.what) || 'queue';
}

function unique(name: string, taken: Set<string>): string {
  let candidate = name;
  for (let n = 2; taken.has(candidate); n++) {
    const suffix = `-${n}`;
    candidate = `${name.slice(0, 63 - suffix.length).replace(/-+$/, '')}${suffix}`;
  }
  taken.add(candidate);
  return candidate;
}

/** The answer to a question: the choice, else what the env says, else the first answer. */
export function answerOf(question: Question, env: readonly EnvFact[], given?: string): string {
  if (given !== undefined && question.answers.some((a) => a.value === given)) return given;
  return question.infer(env)?.value ?? question.answers[0]?.value ?? '';
}

/**
 * The per-queue setting (Kafka's group) for each source: the candidate sharing the most words
 * with the source's env name, one not taken by another queue when there is one (two queues
 * cannot share the setting the controller overrides per queue).
 */
function perQueueFor(
  rule: RoleRule,
  list: readonly Candidate[],
  sources: readonly string[],
): Map<string, string> {
  const taken = new Set<string>();
  const chosen = new Map<string, string>();
  for (const source of sources) {
    const stem = new Set(stemOf(source));
    const ranked = list
      .filter((c) => c.env.name !== source)
      .map((c) => ({
        name: c.env.name,
        rank: c.score + 3 * stemOf(c.env.name).filter((w) => stem.has(w)).length,
      }))
      .sort((a, b) => b.rank - a.rank || a.name.localeCompare(b.name));
    const pick = ranked.find((c) => !taken.has(c.name)) ?? ranked[0];
    if (pick !== undefined) {
      chosen.set(source, pick.name);
      taken.add(pick.name);
    }
  }
  return chosen;
}

/** Connection settings no env var was chosen for or looks like: the command asks for them. */
export function unresolvedRoles(
  survey: ProviderSurvey,
  choice: Pick<ProposalChoice, 'roles' | 'sources'>,
): RoleRule[] {
  const rules = rulesOf(survey.provider);
  return rules.connection.filter(
    (rule) =>
      rule.required === true &&
      choice.roles?.[rule.field] === undefined &&
      !(survey.roles[rule.field] ?? []).some(
        (c) => c.score >= LIKELY && !choice.sources.includes(c.env.name),
      ),
  );
}

/** Connection settings with several likely env vars: the command lets the person choose. */
export function ambiguousRoles(
  survey: ProviderSurvey,
  choice: Pick<ProposalChoice, 'roles' | 'sources'>,
): RoleRule[] {
  const rules = rulesOf(survey.provider);
  return rules.connection.filter((rule) => {
    if (choice.roles?.[rule.field] !== undefined) return false;
    const likely = (survey.roles[rule.field] ?? []).filter(
      (c) => c.score >= LIKELY && !choice.sources.includes(c.env.name),
    );
    return rule.required === true && likely.length > 1 && likely[0]?.score === likely[1]?.score;
  });
}

export function propose(survey: ContainerSurvey, choice: ProposalChoice, podContainers: number): Proposal {
  const provider = survey.providers.find((p) => p.provider === choice.provider);
  if (provider === undefined)
    throw new Error(`container ${survey.container} has no ${choice.provider} source to propose`);
  const rules = rulesOf(choice.provider) as ProposalRules<Provider>;
  const used = new Set(choice.sources);
  const connection: Record<string, string> = {};
  for (const rule of rules.connection) {
    const given = choice.roles?.[rule.field];
    const likely = (provider.roles[rule.field] ?? []).find((c) => c.score >= LIKELY && !used.has(c.env.name));
    const name = given ?? likely?.env.name;
    if (name !== undefined) connection[rule.field] = name;
  }
  const answers: Record<string, string> = {};
  for (const question of rules.questions)
    answers[question.key] = answerOf(question, survey.env, choice.answers?.[question.key]);
  const perQueue = new Map(
    rules.perQueue.map((rule) => [
      rule.field,
      perQueueFor(rule, provider.roles[rule.field] ?? [], choice.sources),
    ]),
  );
  const names = new Set<string>();
  const notes = new Set<string>();
  const queues: ProposedQueue[] = [];
  const declarations: QueueDeclaration[] = [];
  for (const sourceEnv of choice.sources) {
    const fact = survey.env.find((e) => e.name === sourceEnv);
    const source = fact?.value ?? '';
    const own: Record<string, string> = {};
    for (const rule of rules.perQueue) {
      const name = perQueue.get(rule.field)?.get(sourceEnv);
      if (name !== undefined) own[rule.field] = name;
      else
        notes.add(
          l10n.t(
            'No env var of container {0} looks like the {1} of {2} (e.g. {3}).',
            survey.container,
            rule.what,
            sourceEnv,
            rule.example,
          ),
        );
    }
    const { block, notes: blockNotes } = rules.block({
      fields: { ...connection, ...own, [rules.source.field]: sourceEnv },
      answers,
      env: survey.env,
    });
    for (const note of blockNotes) notes.add(note);
    const name = unique(queueNameFor(rules, sourceEnv, source), names);
    queues.push({ name, sourceEnv, source, perQueue: own });
    declarations.push(
      queueDeclaration(choice.provider, name, podContainers > 1 ? survey.container : undefined, block),
    );
  }
  const config: QueueConfig = { queues: declarations };
  return {
    provider: choice.provider,
    container: survey.container,
    config,
    text: annotationText(config),
    queues,
    connection,
    answers,
    notes: [...notes],
  };
}

function queueDeclaration<P extends Provider>(
  provider: P,
  name: string,
  container: string | undefined,
  block: BlockOf<P>,
): QueueDeclaration {
  // The entry holds the block under its provider's name: the shape the schema reads.
  return { name, ...(container !== undefined ? { container } : {}), [provider]: block } as QueueDeclaration;
}

/** The annotation's value: YAML, the form the README and the JSON Schema show. */
export function annotationText(config: QueueConfig): string {
  return stringify(config, { lineWidth: 0, indentSeq: true });
}

/** `workload` with `text` as its queue-config annotation. */
export function withAnnotation<W extends WorkloadLike>(workload: W, text: string): W {
  return {
    ...workload,
    metadata: {
      ...workload.metadata,
      annotations: { ...workload.metadata?.annotations, [QUEUE_CONFIG_ANNOTATION]: text },
    },
  };
}

/**
 * Both validation stages the controller runs, on the annotation text exactly as it will be
 * written: the schema (core/queueConfig/parseQueueConfig.ts), then the pod template.
 */
export function validateProposal(workload: WorkloadLike, text: string): Result<ResolvedWorkload> {
  return resolveWorkload(withAnnotation(workload, text));
}

/** Whether `now` is still what a proposal was made from: the same pod template and annotation. */
export function sameBasis(read: WorkloadLike, now: WorkloadLike): boolean {
  const basis = (w: WorkloadLike) =>
    JSON.stringify([w.spec?.template ?? null, w.metadata?.annotations?.[QUEUE_CONFIG_ANNOTATION] ?? null]);
  return basis(read) === basis(now);
}

export type DeclarationState =
  { state: 'none' } | { state: 'invalid'; problem: string } | { state: 'valid'; queues: string[] };

/** The workload's own declaration, as the Queue Splits view judges it. */
export function declarationState(workload: WorkloadLike): DeclarationState {
  if (workload.metadata?.annotations?.[QUEUE_CONFIG_ANNOTATION] === undefined) return { state: 'none' };
  const resolved = resolveWorkload(workload);
  if (resolved.ok) return { state: 'valid', queues: resolved.value.queues.map((q) => q.name) };
  return {
    state: 'invalid',
    problem: formatFieldError(resolved.errors[0] ?? { path: '', problem: '', fix: '' }),
  };
}
