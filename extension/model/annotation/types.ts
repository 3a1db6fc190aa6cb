// What "Write Queue Config Annotation…" reads from a pod template and the per-provider rules it
// reads it with. Pure data: no `vscode`, no Kubernetes client.
import type { Provider } from '../../../core/providers';
import type { BlockOf } from '../../../core/queueConfig/schema';

/**
 * One env entry of a container as the inference sees it. Only literal values are read: a
 * secretKeyRef or configMapKeyRef says where its value lives (names and keys), never the value.
 */
export interface EnvFact {
  name: string;
  /** Its literal value (`value:`), when it has one. */
  value?: string;
  /** Where a `valueFrom` takes it from. */
  from?: { kind: 'secret' | 'configMap'; name: string; key: string };
  /** A `valueFrom` the queue-agent cannot reproduce (fieldRef, resourceFieldRef). */
  unusable?: true;
}

/** A setting of a provider block that names an env var, and how likely an env var holds it. */
export interface RoleRule {
  /** The block's field, dotted below the block: `brokersEnv`, `sasl.usernameEnv`. */
  readonly field: string;
  /** What a person calls its value: "bootstrap brokers". */
  readonly what: string;
  /** The declaration needs it. */
  readonly required?: true;
  /** Its value must be a literal (the controller reads and overrides it: source, group). */
  readonly literal?: true;
  /** An env var that would hold it, for the hint when none does: `KAFKA_BOOTSTRAP_SERVERS=kafka:9092`. */
  readonly example: string;
  /** How much `env` looks like it: 0 not at all; 3 and more, likely (proposed without asking). */
  score(env: EnvFact): number;
}

/** A choice the env may not say, asked with fixed answers (Kafka's offsetReset). */
export interface Question {
  readonly key: string;
  readonly title: string;
  readonly answers: readonly { readonly value: string; readonly description: string }[];
  /** The answer the env says, and the env var that says it. */
  infer(env: readonly EnvFact[]): { value: string; from: string } | undefined;
}

/** Everything the block of one queue is built from. */
export interface BlockInput {
  /** Env var per field of the block (the source's, the per-queue and connection roles found). */
  fields: Readonly<Record<string, string>>;
  answers: Readonly<Record<string, string>>;
  env: readonly EnvFact[];
}

/** How one provider's declaration is proposed from a container's env. */
export interface ProposalRules<P extends Provider> {
  readonly provider: P;
  /** The env var naming one queue's source: each one chosen becomes a queue. */
  readonly source: RoleRule;
  /** Settings each queue has its own of besides the source (Kafka's consumer group). */
  readonly perQueue: readonly RoleRule[];
  /** The connection, shared by the container's queues of this provider. */
  readonly connection: readonly RoleRule[];
  readonly questions: readonly Question[];
  /** The block; `notes` say what was left out and why (shown before the diff). */
  block(input: BlockInput): { block: BlockOf<P>; notes: string[] };
  /** A logical queue name a source's literal value suggests, when its env name says none. */
  nameFromValue(value: string): string;
}

/** Upper-case words of an env name: `kafka.bootstrap-servers` → KAFKA, BOOTSTRAP, SERVERS. */
export function wordsOf(name: string): string[] {
  return name
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .filter((w) => w !== '');
}

/** A literal that Kubernetes would not rewrite ($(NAME) expansion) and that is not empty. */
export function plainLiteral(env: EnvFact): string | undefined {
  const value = env.value;
  if (value === undefined || value.trim() === '' || value.includes('$(') || value.includes('$$'))
    return undefined;
  return value;
}
