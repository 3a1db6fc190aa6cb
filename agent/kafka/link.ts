// The engine's broker clients: an admin client, a group-less reader for the source, and the
// transactional producer that is the fence. `up` connects what is missing and takes the fence;
// a fenced link stays down for good (a replacement engine owns the split now).
import type { Admin, ISocketFactory, Kafka } from 'kafkajs';
import { ResilientAdmin } from './admin';
import { describeError, type Logger } from '../log';
import { kafkaClient } from './clients';
import type { KafkaEngineConfig, KafkaTiming } from './config';
import { TxnProducer } from './txn';
import { Wire } from './wire';

export type LinkState = { ok: true } | { ok: false; fenced: boolean; reason: string };

export class KafkaLink {
  readonly kafka: Kafka;
  readonly admin: Admin;
  private readonly resilient: ResilientAdmin;
  readonly wire: Wire;
  readonly txn: TxnProducer;
  private adminUp = false;
  private wireUp = false;
  private closed = false;
  private readonly clientId: string;

  constructor(
    private readonly config: KafkaEngineConfig,
    private readonly timing: KafkaTiming,
    log: Logger,
    private readonly socketFactory?: ISocketFactory,
  ) {
    const label = config.clientLabel ? ` ${config.clientLabel}` : '';
    this.clientId = `queue-split ${config.activationId}/${config.epoch}${label}`.replace(
      /[^a-zA-Z0-9._ /-]/g,
      '-',
    );
    this.kafka = kafkaClient(config.connection, this.clientId, timing, socketFactory);
    this.resilient = new ResilientAdmin(this.kafka);
    this.admin = this.resilient.client;
    this.wire = this.newWire('reader');
    this.txn = new TxnProducer(this.kafka, config.transactionalId, log);
  }

  get fenced(): string | undefined {
    return this.txn.fenced;
  }

  get connected(): boolean {
    return (
      !this.closed && this.adminUp && this.wireUp && this.wire.isConnected && this.txn.fenced === undefined
    );
  }

  /** A reader of its own, for a drain or a proof: its metadata never mixes with the pump's. */
  newWire(purpose: string): Wire {
    return new Wire(this.config.connection, `${this.clientId} ${purpose}`, this.timing, this.socketFactory);
  }

  async up(): Promise<LinkState> {
    if (this.txn.fenced) return { ok: false, fenced: true, reason: this.txn.fenced };
    if (this.closed) return { ok: false, fenced: false, reason: 'the engine is closed' };
    try {
      if (!this.adminUp) {
        await this.admin.connect();
        this.adminUp = true;
      }
      if (!this.wireUp) {
        await this.wire.connect();
        this.wireUp = true;
      }
    } catch (err) {
      return { ok: false, fenced: false, reason: `cannot reach Kafka: ${describeError(err)}` };
    }
    const fence = await this.txn.takeFence();
    if (fence.ok) return { ok: true };
    return { ok: false, fenced: fence.kind === 'fenced', reason: fence.reason };
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.txn.close();
    await this.wire.disconnect();
    this.wireUp = false;
    await this.resilient.close();
    this.adminUp = false;
  }
}
