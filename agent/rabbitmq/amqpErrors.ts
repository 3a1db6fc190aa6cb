// AMQP reply codes the engine reacts to, and a safe way to read them off amqplib errors.
export const ReplyCode = {
  ACCESS_REFUSED: 403, // exclusive consume refused (classic queues only)
  NOT_FOUND: 404,
  RESOURCE_LOCKED: 405, // another connection holds the exclusive lock queue
  PRECONDITION_FAILED: 406, // ifEmpty/ifUnused refused, inequivalent declaration
  NOT_IMPLEMENTED: 540, // e.g. ifEmpty on a quorum queue (closes the whole connection)
} as const;

export function replyCode(err: unknown): number | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const code = (err as { code: unknown }).code;
    if (typeof code === 'number') return code;
  }
  return undefined;
}
