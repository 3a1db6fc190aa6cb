// A kafkajs admin client that survives topics deleted by someone else. kafkajs refreshes the
// metadata of every topic an admin client ever touched, and a topic deleted by another client
// fails every later refresh with UNKNOWN_TOPIC_OR_PARTITION: one shadow deleted behind the
// engine would take the whole admin client down. Here an operation that fails that way runs
// once more on a fresh client, and a client that saw the error is never reused.
//
// Invariants (the clients below):
//   1. Operations start only on the current client; a client that met a deleted topic is
//      retired: no new operation starts on it.
//   2. A retired client is disconnected once the operations already running on it have ended,
//      never under them (kafkajs answers a disconnected client's fetchTopicOffsets with a
//      TypeError, which the engine must read as a programming error; the Kafka soak met it).
//   3. close() disconnects every client at once: the engine is stopping.
//   4. A client whose metadata lists a topic without partitions (kafkajs's fetchTopicOffsets then
//      throws a TypeError on `high.pop()`/`low.pop()`) is retired as in 1: its metadata stays so
//      until it ages out (a topic just created or deleted when it last refreshed). Met again on a
//      fresh client, it is a broker condition (the step is retried), not a programming error.
import type { Admin, Kafka } from 'kafkajs';
import { isUnknownTopic } from './kafkaErrors';

/** kafkajs 2.2.4 admin/index.js fetchTopicOffsets(ByTimestamp): `const { partitions } = high.pop()`. */
function isMetadataGap(err: unknown): boolean {
  return err instanceof TypeError && /of '(high|low)\.pop\(\.\.\.\)'/.test(err.message);
}

/** Either kind of stale client: a deleted topic (1), or a topic without partitions (4). */
function isStaleClient(err: unknown): boolean {
  return isUnknownTopic(err) || isMetadataGap(err);
}

/** What a metadata gap is to the engine: the broker's state, not a bug in the engine (4). */
function asBrokerCondition(err: unknown): unknown {
  if (!isMetadataGap(err)) return err;
  return new Error(
    "the Kafka client's metadata lists no partitions for the topic (being created or deleted, or not yet known to the broker answering); retried",
    { cause: err },
  );
}

interface Client {
  admin: Promise<Admin>;
  /** Operations running on it. */
  running: number;
  retired: boolean;
}

export class ResilientAdmin {
  private current: Client | undefined;
  private readonly retiring = new Set<Client>();
  private closed = false;
  /** Use like a kafkajs Admin; every method goes through `run`. */
  readonly client: Admin;

  constructor(private readonly kafka: Kafka) {
    // Every Admin method is async and takes plain arguments, so forwarding by name is sound.
    this.client = new Proxy({} as Admin, {
      get: (_target, name) => {
        if (name === 'then') return undefined; // not a promise: `await client` must not call `then`
        if (name === 'connect') return () => this.take().admin.then(() => undefined);
        if (name === 'disconnect') return () => this.close();
        return (...args: unknown[]) =>
          this.run((admin) => {
            const method = Reflect.get(admin, name) as (...a: unknown[]) => Promise<unknown>;
            return method.apply(admin, args);
          });
      },
    });
  }

  async run<T>(op: (admin: Admin) => Promise<T>): Promise<T> {
    try {
      return await this.on(op);
    } catch (err) {
      if (!isStaleClient(err) || this.closed) throw asBrokerCondition(err);
      // On a fresh client; a second failure retires that one too (`on`).
      return await this.on(op).catch((again: unknown) => {
        throw asBrokerCondition(again);
      });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.retiring, ...(this.current ? [this.current] : [])];
    this.current = undefined;
    this.retiring.clear();
    await Promise.all(all.map(disconnect));
  }

  /** Runs `op` on the current client; a client it finds stale is retired (1, 4). */
  private async on<T>(op: (admin: Admin) => Promise<T>): Promise<T> {
    const client = this.take();
    client.running++;
    try {
      return await op(await client.admin);
    } catch (err) {
      if (isStaleClient(err)) this.retire(client);
      throw err;
    } finally {
      client.running--;
      if (client.retired && client.running === 0 && this.retiring.delete(client)) void disconnect(client);
    }
  }

  private take(): Client {
    if (this.closed) {
      const admin = Promise.reject(new Error('the admin client is closed'));
      admin.catch(() => undefined);
      return { admin, running: 0, retired: true };
    }
    if (this.current) return this.current;
    const client: Client = {
      admin: (async () => {
        const admin = this.kafka.admin();
        await admin.connect();
        return admin;
      })(),
      running: 0,
      retired: false,
    };
    client.admin.catch(() => {
      if (this.current === client) this.current = undefined;
    });
    this.current = client;
    return client;
  }

  /** No new operation starts on `client`; it is disconnected when its last one ends (2). */
  private retire(client: Client): void {
    if (client.retired) return;
    client.retired = true;
    if (this.current === client) this.current = undefined;
    if (client.running === 0) void disconnect(client);
    else this.retiring.add(client);
  }
}

async function disconnect(client: Client): Promise<void> {
  await (await client.admin.catch(() => undefined))?.disconnect().catch(() => undefined);
}
