// What a kafkajs error means for the engine. kafkajs wraps protocol errors (retries exhausted,
// non-retriable wrappers), so every check walks the `cause` chain. Codes are Kafka's own.
export const ErrorCode = {
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  LEADER_NOT_AVAILABLE: 5,
  NOT_LEADER_FOR_PARTITION: 6,
  UNKNOWN_MEMBER_ID: 25,
  INVALID_PRODUCER_EPOCH: 47,
  TOPIC_ALREADY_EXISTS: 36,
  GROUP_ID_NOT_FOUND: 69,
  NON_EMPTY_GROUP: 68,
  PRODUCER_FENCED: 90,
  CORRUPT_MESSAGE: 2,
  MESSAGE_TOO_LARGE: 10,
  RECORD_LIST_TOO_LARGE: 18,
  INVALID_TIMESTAMP: 32,
  INVALID_RECORD: 87,
} as const;

interface ErrorLike {
  readonly type?: unknown;
  readonly code?: unknown;
  readonly message?: unknown;
  readonly cause?: unknown;
  readonly originalError?: unknown;
}

/** The error and every error it wraps, outermost first (bounded: causes can be cyclic). */
function chain(err: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  let current: unknown = err;
  while (typeof current === 'object' && current !== null && out.length < 8) {
    const e = current as ErrorLike;
    out.push(e);
    current = e.cause ?? e.originalError;
  }
  return out;
}

function has(err: unknown, code: number, type: string): boolean {
  return chain(err).some((e) => e.code === code || e.type === type);
}

/** The broker says a newer producer holds this transactional id. kafkajs has no name for 90
 * (it reports "Unknown error code 90"), so the text is checked too. Only a broker round trip
 * produces these: a fenced producer still begins transactions locally. */
export function isFenced(err: unknown): boolean {
  return (
    has(err, ErrorCode.INVALID_PRODUCER_EPOCH, 'INVALID_PRODUCER_EPOCH') ||
    has(err, ErrorCode.PRODUCER_FENCED, 'PRODUCER_FENCED') ||
    chain(err).some((e) => typeof e.message === 'string' && /\berror code 90\b/.test(e.message))
  );
}

/** The broker asked does not lead the partition (yet): a partition just added whose leader has
 * not taken it, a leader that moved. Fresh metadata names the leader. */
export function isLeaderMoved(err: unknown): boolean {
  return (
    has(err, ErrorCode.NOT_LEADER_FOR_PARTITION, 'NOT_LEADER_FOR_PARTITION') ||
    has(err, ErrorCode.LEADER_NOT_AVAILABLE, 'LEADER_NOT_AVAILABLE')
  );
}

export function isUnknownTopic(err: unknown): boolean {
  return has(err, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'UNKNOWN_TOPIC_OR_PARTITION');
}

export function isTopicExists(err: unknown): boolean {
  return has(err, ErrorCode.TOPIC_ALREADY_EXISTS, 'TOPIC_ALREADY_EXISTS');
}

export function isGroupMissing(err: unknown): boolean {
  return has(err, ErrorCode.GROUP_ID_NOT_FOUND, 'GROUP_ID_NOT_FOUND');
}

/** An offset commit from outside the group was refused because the group has live members:
 * the broker's UNKNOWN_MEMBER_ID (25) for a generation -1 commit, or kafkajs' own pre-check in
 * `admin.setOffsets` ("The consumer group must have no running instances"). */
export function isLiveGroupRefusal(err: unknown): boolean {
  return (
    has(err, ErrorCode.UNKNOWN_MEMBER_ID, 'UNKNOWN_MEMBER_ID') ||
    has(err, ErrorCode.NON_EMPTY_GROUP, 'NON_EMPTY_GROUP') ||
    chain(err).some(
      (e) => typeof e.message === 'string' && e.message.includes('must have no running instances'),
    )
  );
}

/** The innermost protocol error name, for logs and reasons (no payload ever appears in it). */
export function errorName(err: unknown): string | undefined {
  for (const e of chain(err).reverse()) if (typeof e.type === 'string') return e.type;
  return undefined;
}

/** The broker refused records for what they are (too large for the topic, a timestamp out of
 * its bounds, a record it rejects), or the client threw while encoding them (kafkajs throws a
 * TypeError or RangeError on values it cannot size). Sending the same records again fails the
 * same way, unlike a network or leader error. */
export function isRecordRefused(err: unknown): boolean {
  const codes = [
    ErrorCode.CORRUPT_MESSAGE,
    ErrorCode.MESSAGE_TOO_LARGE,
    ErrorCode.RECORD_LIST_TOO_LARGE,
    ErrorCode.INVALID_TIMESTAMP,
    ErrorCode.INVALID_RECORD,
  ];
  const names = [
    'CORRUPT_MESSAGE',
    'MESSAGE_TOO_LARGE',
    'RECORD_LIST_TOO_LARGE',
    'INVALID_TIMESTAMP',
    'INVALID_RECORD',
  ];
  return chain(err).some(
    (e) =>
      codes.some((c) => e.code === c) ||
      names.some((n) => e.type === n) ||
      e instanceof TypeError ||
      e instanceof RangeError,
  );
}
