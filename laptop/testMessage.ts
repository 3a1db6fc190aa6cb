// A test message published straight into a queue's source from the laptop (Send Test Message
// when no sidecar of the split runs): what each provider's publisher needs.
export interface OutgoingTestMessage {
  /** The topic or queue the workload consumes. */
  source: string;
  messageId: string;
  headers: Readonly<Record<string, string>>;
  body: Buffer;
  contentType?: string;
}
