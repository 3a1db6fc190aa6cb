// Shadow topics: the source's partition count (a record keeps its partition), retention that
// never expires a message (`retention.ms=-1`, `retention.bytes=-1`), `cleanup.policy=delete`
// (compaction would drop all but the last record of a key) and `message.timestamp.type=CreateTime`
// (the copy keeps the source record's timestamp), and at least the source's durability: its
// replication factor, `min.insync.replicas` and `max.message.bytes` (a smaller limit would refuse
// a record the source accepted). All of it is read back from the broker: a broker or policy that
// silently changes it would lose messages later (DECISIONS.md, "Shadows on a replicated cluster").
import type { Admin } from 'kafkajs';
import { pollUntil } from '../engine/timing';
import { isTopicExists, isUnknownTopic } from './kafkaErrors';

const TOPIC_RESOURCE = 2; // kafkajs ConfigResourceTypes.TOPIC
export const SHADOW_CONFIG = {
  'retention.ms': '-1',
  'retention.bytes': '-1',
  'cleanup.policy': 'delete',
  'message.timestamp.type': 'CreateTime',
} as const;
/** Copied from the source; a shadow may hold more, never less. */
export const COPIED_CONFIG = ['min.insync.replicas', 'max.message.bytes'] as const;

/** What a shadow must be: the fixed configs plus the source's durability. */
export interface ShadowShape {
  readonly replicationFactor: number;
  readonly config: Readonly<Record<string, string>>;
}

export type ShadowCheck = { ok: true; created: boolean } | { ok: false; problem: string; created: boolean };

/** Partition count of a topic, or undefined when it does not exist. */
export async function partitionCount(admin: Admin, topic: string): Promise<number | undefined> {
  try {
    const meta = await admin.fetchTopicMetadata({ topics: [topic] });
    return meta.topics[0]?.partitions.length;
  } catch (err) {
    if (isUnknownTopic(err)) return undefined;
    throw err;
  }
}

/** The smallest replica count over a topic's partitions (0 when it has none). */
async function replicationFactor(admin: Admin, topic: string): Promise<number> {
  const meta = await admin.fetchTopicMetadata({ topics: [topic] });
  const counts = (meta.topics[0]?.partitions ?? []).map((p) => p.replicas.length);
  return counts.length === 0 ? 0 : Math.min(...counts);
}

/** Effective values (broker defaults included) of the named topic configs. */
export async function readConfig(
  admin: Admin,
  topic: string,
  names: readonly string[] = [...Object.keys(SHADOW_CONFIG), ...COPIED_CONFIG],
): Promise<Record<string, string | undefined>> {
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: TOPIC_RESOURCE, name: topic, configNames: [...names] }],
  });
  const entries = described.resources[0]?.configEntries ?? [];
  return Object.fromEntries(names.map((k) => [k, entries.find((e) => e.configName === k)?.configValue]));
}

/** The shape a shadow of `source` needs. */
export async function shadowShapeOf(admin: Admin, source: string): Promise<ShadowShape> {
  const copied = await readConfig(admin, source, COPIED_CONFIG);
  const missing = COPIED_CONFIG.filter((k) => copied[k] === undefined);
  if (missing.length > 0) throw new Error(`the broker did not report ${missing.join(', ')} of ${source}`);
  return {
    replicationFactor: await replicationFactor(admin, source),
    config: { ...SHADOW_CONFIG, ...(copied as Record<string, string>) },
  };
}

/** The preflight: what the broker kept, compared with what a shadow needs. */
export function shapeProblem(
  topic: string,
  shape: ShadowShape,
  kept: Record<string, string | undefined>,
  keptReplicas: number,
): string | undefined {
  const copied: readonly string[] = COPIED_CONFIG;
  const wrong = Object.entries(shape.config).filter(([k, v]) => {
    const got = kept[k];
    if (got === undefined) return true;
    return copied.includes(k) ? Number(got) < Number(v) : got !== v;
  });
  const parts = wrong.map(
    ([k, v]) => `${k}=${kept[k] ?? 'unset'} (needs ${copied.includes(k) ? 'at least ' : ''}${v})`,
  );
  if (keptReplicas < shape.replicationFactor)
    parts.push(`replication factor ${keptReplicas} (needs at least the source's ${shape.replicationFactor})`);
  if (parts.length === 0) return undefined;
  return `the broker keeps ${parts.join(', ')} on ${topic}: the shadow would be less durable than its source or lose messages before anyone consumed them`;
}

/** Creates the shadow (or accepts it from an earlier attempt) and proves its shape. */
export async function ensureShadow(
  admin: Admin,
  topic: string,
  partitions: number,
  shape: ShadowShape,
): Promise<ShadowCheck> {
  let created = false;
  try {
    created = await admin.createTopics({
      // kafkajs' own wait fails on the UNKNOWN_TOPIC_OR_PARTITION a KRaft broker answers while
      // the new topic's metadata propagates; awaitLeaders below polls through it.
      waitForLeaders: false,
      topics: [
        {
          topic,
          numPartitions: partitions,
          replicationFactor: shape.replicationFactor,
          configEntries: Object.entries(shape.config).map(([name, value]) => ({ name, value })),
        },
      ],
    });
  } catch (err) {
    if (!isTopicExists(err)) throw err;
  }
  const count = await awaitLeaders(admin, topic);
  if (count === undefined) {
    return { ok: false, created, problem: `${topic} has no partition leaders after its creation` };
  }
  if (count !== partitions) {
    return {
      ok: false,
      created,
      problem: `${topic} already exists with ${count} partitions; a shadow needs the source's ${partitions}`,
    };
  }
  const problem = shapeProblem(
    topic,
    shape,
    await readConfig(admin, topic, Object.keys(shape.config)),
    await replicationFactor(admin, topic),
  );
  return problem ? { ok: false, created, problem } : { ok: true, created };
}

/** Partition count once every partition of a new topic has a leader (undefined: not in time). */
async function awaitLeaders(admin: Admin, topic: string, timeoutMs = 15_000): Promise<number | undefined> {
  const ready = await pollUntil(
    Date.now() + timeoutMs,
    100,
    async () => {
      const meta = await admin.fetchTopicMetadata({ topics: [topic] });
      const partitions = meta.topics[0]?.partitions ?? [];
      return partitions.length > 0 && partitions.every((p) => p.leader >= 0) ? partitions.length : undefined;
    },
    (n) => n !== undefined,
  );
  return ready.ok ? ready.value : undefined;
}

/** Adds partitions up to `partitions`; never removes (Kafka cannot). */
export async function growShadow(admin: Admin, topic: string, partitions: number): Promise<void> {
  const count = await partitionCount(admin, topic);
  if (count === undefined) throw new Error(`${topic} does not exist`);
  if (count >= partitions) return;
  await admin.createPartitions({ validateOnly: false, topicPartitions: [{ topic, count: partitions }] });
}

/** Deletes a topic and waits until the broker no longer lists it. */
export async function deleteTopic(admin: Admin, topic: string, timeoutMs: number): Promise<boolean> {
  try {
    await admin.deleteTopics({ topics: [topic], timeout: timeoutMs });
  } catch (err) {
    if (!isUnknownTopic(err)) throw err;
  }
  const gone = await pollUntil(
    Date.now() + timeoutMs,
    200,
    () => partitionCount(admin, topic),
    (n) => n === undefined,
  );
  return gone.ok;
}
