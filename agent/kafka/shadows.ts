// Shadow topics: the source's partition count (a record keeps its partition), and retention
// that never expires a message (`retention.ms=-1`, `retention.bytes=-1`). Both are read back
// from the broker: a broker or policy that silently changes them would lose messages later.
import type { Admin } from 'kafkajs';
import { pollUntil } from '../engine/timing';
import { isTopicExists, isUnknownTopic } from './kafkaErrors';

const TOPIC_RESOURCE = 2; // kafkajs ConfigResourceTypes.TOPIC
export const SHADOW_CONFIG = { 'retention.ms': '-1', 'retention.bytes': '-1' } as const;

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

export async function readRetention(
  admin: Admin,
  topic: string,
): Promise<Record<string, string | undefined>> {
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: [{ type: TOPIC_RESOURCE, name: topic, configNames: Object.keys(SHADOW_CONFIG) }],
  });
  const entries = described.resources[0]?.configEntries ?? [];
  return Object.fromEntries(
    Object.keys(SHADOW_CONFIG).map((k) => [k, entries.find((e) => e.configName === k)?.configValue]),
  );
}

/** The preflight: what the broker kept, compared with what a shadow needs. */
export function retentionProblem(
  topic: string,
  kept: Record<string, string | undefined>,
): string | undefined {
  const wrong = Object.entries(SHADOW_CONFIG).filter(([k, v]) => kept[k] !== v);
  if (wrong.length === 0) return undefined;
  const got = wrong.map(([k]) => `${k}=${kept[k] ?? 'unset'}`).join(', ');
  return `the broker keeps ${got} on ${topic}, not -1: shadow messages would expire before anyone consumed them`;
}

/** Creates the shadow (or accepts it from an earlier attempt) and proves its shape. */
export async function ensureShadow(admin: Admin, topic: string, partitions: number): Promise<ShadowCheck> {
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
          configEntries: Object.entries(SHADOW_CONFIG).map(([name, value]) => ({ name, value })),
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
  const problem = retentionProblem(topic, await readRetention(admin, topic));
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
