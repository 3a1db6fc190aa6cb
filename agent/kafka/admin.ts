// A kafkajs admin client that survives topics deleted by someone else. kafkajs refreshes the
// metadata of every topic an admin client ever touched, and a topic deleted by another client
// fails every later refresh with UNKNOWN_TOPIC_OR_PARTITION: one shadow deleted behind the
// engine would take the whole admin client down. Here an operation that fails that way runs
// once more on a fresh client, and a client that saw the error is never reused.
import type { Admin, Kafka } from 'kafkajs';
import { isUnknownTopic } from './kafkaErrors';

export class ResilientAdmin {
  private current: Promise<Admin> | undefined;
  private closed = false;
  /** Use like a kafkajs Admin; every method goes through `run`. */
  readonly client: Admin;

  constructor(private readonly kafka: Kafka) {
    // Every Admin method is async and takes plain arguments, so forwarding by name is sound.
    this.client = new Proxy({} as Admin, {
      get: (_target, name) => {
        if (name === 'then') return undefined; // not a promise: `await client` must not call `then`
        if (name === 'connect') return () => this.get().then(() => undefined);
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
      return await op(await this.get());
    } catch (err) {
      if (!isUnknownTopic(err) || this.closed) throw err;
      await this.reset();
      try {
        return await op(await this.get());
      } catch (again) {
        // The topic this operation names is missing; don't keep a client that now refreshes it.
        if (isUnknownTopic(again)) await this.reset();
        throw again;
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.reset();
  }

  private get(): Promise<Admin> {
    if (this.closed) return Promise.reject(new Error('the admin client is closed'));
    this.current ??= (async () => {
      const admin = this.kafka.admin();
      await admin.connect();
      return admin;
    })();
    const pending = this.current;
    pending.catch(() => {
      if (this.current === pending) this.current = undefined;
    });
    return pending;
  }

  private async reset(): Promise<void> {
    const old = this.current;
    this.current = undefined;
    await (await old?.catch(() => undefined))?.disconnect().catch(() => undefined);
  }
}
