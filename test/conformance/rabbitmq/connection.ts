// One RabbitMQ connection for a harness or a test file, opened when first needed, and throwaway
// channels on it: a refused passive declare (checkQueue of a queue that is gone) closes its
// channel, never the connection. Failures surface through the operation that caused them.
import * as amqp from 'amqplib';

export interface RabbitConnection {
  connection(): Promise<amqp.ChannelModel>;
  /** Runs `op` on a channel of its own (in confirm mode), closed after. */
  withChannel<T>(op: (ch: amqp.ConfirmChannel) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export function rabbitConnection(url: string): RabbitConnection {
  let shared: Promise<amqp.ChannelModel> | undefined;
  const connection = (): Promise<amqp.ChannelModel> => {
    shared ??= amqp.connect(url).then((c) => {
      c.on('error', () => undefined);
      return c;
    });
    return shared;
  };
  return {
    connection,
    async withChannel<T>(op: (ch: amqp.ConfirmChannel) => Promise<T>): Promise<T> {
      const ch = await (await connection()).createConfirmChannel();
      ch.on('error', () => undefined);
      try {
        return await op(ch);
      } finally {
        await ch.close().catch(() => undefined);
      }
    },
    async close() {
      const conn = await shared?.catch(() => undefined);
      shared = undefined;
      await conn?.close().catch(() => undefined);
    },
  };
}
