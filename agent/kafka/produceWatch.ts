// kafkajs 2.2.4's sendBatch (`producer/sendMessages.js`) sends one Produce per leader broker and,
// when any of them fails, retries the call: the retry sends to every broker whose answer it does
// not hold *yet*. `Promise.all` gave up on the first failure, so a request still in flight (acks=all
// waiting for replicas, on a loaded cluster) counts as unanswered: the retry waits for that
// broker's lock and sends the same records again with the next sequence numbers, and the broker
// appends them a second time in the same transaction. A partition whose leader moved after its
// broker answered is sent again to the new leader the same way. Either way a read_committed reader
// sees the record twice once the transaction commits (agent/kafka/DECISIONS.md, "Shadows on a
// replicated cluster, and broker outages").
//
// The narrowest extension that sees it: Broker.produce, wrapped once, counts the produce requests
// that succeeded for each topic-partition within the send that made them (an async context, so
// retries on timers and other engines' sends in the same process are told apart). A Produce that
// resolves wrote every partition it names (kafkajs throws on any partition error), or answered a
// retry with the same sequence as a duplicate, which only follows a request that failed. So two
// successful requests for one partition in one send are two writes.
import { AsyncLocalStorage } from 'node:async_hooks';
import Broker from 'kafkajs/src/broker';

interface ProduceRequest {
  readonly topicData: readonly {
    readonly topic: string;
    readonly partitions: readonly { readonly partition: number }[];
  }[];
}

const sends = new AsyncLocalStorage<Map<string, number>>();

const proto = Broker.prototype as { produce(request: ProduceRequest): Promise<unknown> };
const original = proto.produce;
proto.produce = async function (this: unknown, request: ProduceRequest) {
  const response = await original.call(this, request);
  const written = sends.getStore();
  if (written) {
    for (const { topic, partitions } of request.topicData) {
      for (const { partition } of partitions) {
        const tp = `${topic}/${partition}`;
        written.set(tp, (written.get(tp) ?? 0) + 1);
      }
    }
  }
  return response;
};

/** Runs `send` (one kafkajs sendBatch) and answers how many successful produce requests it
 * made per `topic/partition`. */
export async function watchProduces<T>(
  send: () => Promise<T>,
): Promise<{ value: T; written: Map<string, number> }> {
  const written = new Map<string, number>();
  const value = await sends.run(written, send);
  return { value, written };
}
