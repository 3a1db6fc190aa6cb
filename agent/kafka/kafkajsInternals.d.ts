// Types for the few kafkajs 2.2.4 internals the engine uses (see wire.ts for why). kafkajs is
// unmaintained since 2023, so these modules are frozen; only what wire.ts calls is declared.
declare module 'kafkajs/src/cluster' {
  // A namespace merged with the class carries these types through `export =`.
  namespace Cluster {
    export interface WireRecord {
      offset: string;
      key: Buffer | null;
      value: Buffer | null;
      headers: Record<string, Buffer | null | (Buffer | null)[]>; // null: a null header value
      timestamp: string;
      isControlRecord?: boolean;
      // One object per record batch, shared by its records (agent/kafka/aborted.ts groups by it).
      batchContext?: {
        producerId: string;
        inTransaction: boolean;
        firstOffset: string;
        lastOffsetDelta: number;
      };
    }
    export interface WireFetchPartition {
      partition: number;
      errorCode: number;
      highWatermark: string;
      lastStableOffset: string;
      lastStartOffset: string;
      abortedTransactions: { producerId: string; firstOffset: string }[];
      messages: WireRecord[];
    }
    export interface WireBroker {
      fetch(request: {
        replicaId: number;
        isolationLevel: number;
        maxWaitTime: number;
        minBytes: number;
        maxBytes: number;
        topics: {
          topic: string;
          partitions: { partition: number; fetchOffset: string; maxBytes: number }[];
        }[];
      }): Promise<{ responses: { topicName: string; partitions: WireFetchPartition[] }[] }>;
      offsetCommit(request: {
        groupId: string;
        groupGenerationId: number;
        memberId: string;
        topics: { topic: string; partitions: { partition: number; offset: string }[] }[];
      }): Promise<unknown>;
    }
    export interface ClusterOptions {
      logger: unknown;
      socketFactory: unknown;
      brokers: string[];
      ssl?: unknown;
      sasl?: unknown;
      clientId: string;
      connectionTimeout: number;
      authenticationTimeout: number;
      requestTimeout: number;
      enforceRequestTimeout: boolean;
      metadataMaxAge: number;
      retry: { retries: number; initialRetryTime: number; maxRetryTime: number };
      allowAutoTopicCreation: boolean;
      maxInFlightRequests?: number | null;
      isolationLevel: number;
    }
  }
  class Cluster {
    constructor(options: Cluster.ClusterOptions);
    targetTopics: Set<string>;
    connect(): Promise<void>;
    disconnect(): Promise<void>;
    isConnected(): boolean;
    addTargetTopic(topic: string): Promise<void>;
    refreshMetadata(): Promise<void>;
    findLeaderForPartitions(topic: string, partitions: number[]): Record<string, number[]>;
    findBroker(query: { nodeId: string }): Promise<Cluster.WireBroker>;
    findGroupCoordinator(query: { groupId: string }): Promise<Cluster.WireBroker>;
  }
  export = Cluster;
}

declare module 'kafkajs/src/loggers' {
  export const LEVELS: { NOTHING: number; ERROR: number; WARN: number; INFO: number; DEBUG: number };
  export function createLogger(options: {
    level: number;
    logCreator: (level: number) => (entry: unknown) => void;
  }): unknown;
}

declare module 'kafkajs/src/network/socketFactory' {
  function defaultSocketFactory(): unknown;
  export = defaultSocketFactory;
}

declare module 'kafkajs/src/protocol/encoder' {
  // Only the two methods nullHeaders.ts wraps; the rest of the class is not used directly.
  class Encoder {
    writeVarIntBytes(value: unknown): Encoder;
    writeVarInt(value: number): Encoder;
  }
  export = Encoder;
}

// The record encoders, for test/bench/kafka-null-headers.bench.ts only.
declare module 'kafkajs/src/protocol/recordBatch/record/v0' {
  function Record(record: {
    offsetDelta?: number;
    timestampDelta?: number;
    key: Buffer | null;
    value: Buffer | null;
    headers?: Record<string, Buffer | (Buffer | null)[] | null>;
  }): unknown;
  export = Record;
}

declare module 'kafkajs/src/protocol/recordBatch/v0' {
  export function RecordBatch(batch: { records: unknown[] }): Promise<unknown>;
}

// Only Broker.produce, which produceWatch.ts wraps.
declare module 'kafkajs/src/broker' {
  class Broker {
    produce(request: unknown): Promise<unknown>;
  }
  export = Broker;
}
