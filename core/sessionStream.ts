// The session stream: how a route's session messages reach the developer's sidecar through the
// cluster (docs/design.md §8). The queue-agent, which holds the workload's broker credentials,
// consumes the route's session shadow and streams it to the one sidecar that proves the route's
// secret (never sending it: core/sessionSecret.ts); the sidecar reaches the agent pod through the Kubernetes API's port-forward, so no
// broker address or credential ever reaches the laptop.
//
// Transport: one WebSocket (RFC 6455, the `ws` library) per sidecar session, subprotocol
// SESSION_SUBPROTOCOL, on the agent's HTTP port at SESSION_PATH; each frame is one binary
// WebSocket message holding one MessagePack-encoded object (bytes stay bytes, no base64).
//
// Exchange (client = sidecar, agent = queue-agent):
//   agent  → challenge{nonce, podUid}            first frame, at once: a fresh nonce and the
//                                                agent pod's uid (the sidecar checks it is the
//                                                pod it port-forwarded to)
//   client → hello{routeId, proof, window,       the route's key signs (routeId, podUid, nonce);
//                  unsettled}                    the agent checks it against spec.session's
//                                                public key and its own uid. unsettled: messages
//                                                it acked on a dropped stream and never saw settled
//   agent  → welcome{queues, settled,            settled: those of `unsettled` the agent did
//                    features} | refused         settle (reported now, not sent again); the
//                                                rest either come again or, when the broker
//                                                turns out to have had the answer, are named in
//                                                a later settled{refs};
//                                                features: what this agent takes beyond v2's
//                                                first frames (SESSION_FEATURES); refused
//                                                closes the stream
//   agent  → message{tag, queue, message}        at most `window` unacknowledged at once; the
//                                                message's broker part under its provider's key
//                                                (core/providers/<provider>/message.ts)
//   client → ack{tags}                           delivered locally (2xx, broker confirm); each
//                                                acked tag frees one credit of the window
//   client → reject{tags}                        the developer gave up on these messages (their
//                                                handler kept failing): settle them as the
//                                                app's own reject would, which each broker does
//                                                its own way (the provider's words say how:
//                                                core/providers/<provider>/words.ts `reject`).
//                                                A rejected tag frees its credit like an ack.
//                                                Sent only to an agent whose welcome lists
//                                                'reject' (an older agent would end the stream
//                                                on a frame it does not know).
//   agent  → settled{tags, refs?}                the broker has the client's answer (committed,
//                                                acked, rejected, deleted). One
//                                                settlement for both answers: the client knows
//                                                which it gave, and reports the message
//                                                delivered (ack) or rejected (reject) only now.
//                                                refs: messages answered on an earlier stream
//                                                that ended before the broker's proof came back
//                                                (tags mean nothing across streams), settled
//                                                once this stream shows the broker had the answer
//                                                (optional: an older client ignores it and
//                                                leaves those unreported, as before)
//   client → publish{requestId, queue, …}        Send Test Message; the agent publishes to the
//   agent  → published | publishRefused          source only when the headers match the route
//   agent  → notice{code, message}               e.g. the route is draining: the stream ends
//   client → bye                                 stopping: the agent settles what was answered
//
// Order: messages of one lane (a queue, or the part of it its broker settles apart:
// core/providers/contract.ts MessageLane) are sent in order and the sidecar delivers them in
// that order. A stream that drops (port-forward, sidecar or agent gone) is resumed by a new
// hello; what was sent but not settled is sent again (duplicates only for unsettled messages),
// and what was never sent waits in the shadow for the route's lease.
import { decode, encode } from '@msgpack/msgpack';
import { z } from 'zod';
import { wireBaseSchema, wireBytes as bytes } from './messageWire';
import { PROVIDER_NAMES, type Provider } from './providers';
import type { MessageLane } from './providers/contract';
import { coreProvider, type ProviderTypesOf } from './providers/registry';
import { providerSchema } from './providerSchema';
import { NONCE_PATTERN } from './sessionSecret';

export const SESSION_PATH = '/v1/session';
/** The queue-agent's HTTP port (health, metrics, this stream), named in its pod spec. */
export const AGENT_HTTP_PORT = 9090;
export const AGENT_HTTP_PORT_NAME = 'metrics';
// v2: the client proves its secret by a signature over the agent's challenge (v1 sent it).
export const SESSION_SUBPROTOCOL = 'queuesplit.session.v2';
/** Default and bound of the in-flight window a sidecar may ask for. */
export const DEFAULT_SESSION_WINDOW = 64;
export const MAX_SESSION_WINDOW = 1024;
/** A hello must arrive this soon after the WebSocket opens. */
export const HELLO_TIMEOUT_MS = 10_000;
/**
 * Additions to v2 an agent announces in its welcome, so a newer sidecar uses them only with an
 * agent that takes them (an additive change, not a new subprotocol: either side may be the
 * older one, and neither refuses the other). `reject`: the client may send reject{tags}.
 */
export const SESSION_FEATURES = ['reject'] as const;
export type SessionFeature = (typeof SESSION_FEATURES)[number];

/** Each provider's part as it travels: under the provider's key (kept from v2's first
 * version: peers of any version read the same keys), in the provider's shape. */
type WirePartsOf = {
  [P in Provider as ProviderTypesOf<P>['wireKey']]?: ProviderTypesOf<P>['wirePart'];
};

/** A session message as the agent read it from the shadow (core/shadowMessage.ts ShadowMessage). */
export type WireMessage = z.infer<typeof wireBaseSchema> & WirePartsOf;

/** The parts a message holds, with their providers, in table order. */
function wireParts(message: object): { provider: Provider; part: unknown }[] {
  return PROVIDER_NAMES.flatMap((provider) => {
    const part: unknown = (message as Record<string, unknown>)[coreProvider(provider).message.wireKey];
    return part !== undefined ? [{ provider, part }] : [];
  });
}

/** The part a message carries, with its provider (one, once the schema accepted the message). */
export const wirePartOf = (message: object) => wireParts(message)[0];

/** The base fields, then every provider's part as optional; a message carries exactly one. The
 * table builds the shape, so the type is stated: WirePartsOf is the same table's. */
export const wireMessageSchema = wireBaseSchema
  .extend(
    Object.fromEntries(
      PROVIDER_NAMES.map((provider) => {
        const { wireKey, wireSchema } = coreProvider(provider).message;
        return [wireKey, wireSchema.optional()];
      }),
    ),
  )
  .refine(
    (message) => wireParts(message).length === 1,
    'a message carries exactly one broker part',
  ) as unknown as z.ZodType<WireMessage>;

const tags = z.array(z.int().min(0)).max(MAX_SESSION_WINDOW * 4);
/** A message by queue and id (core/shadowMessage.ts ShadowMessage.id), across streams. */
const messageRefs = z.array(z.object({ queue: z.string(), id: z.string() })).max(MAX_SESSION_WINDOW);
export type MessageRef = z.infer<typeof messageRefs>[number];

export const clientFrameSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('hello'),
    routeId: z.string().min(1).max(64),
    /** An Ed25519 signature, base64url (core/sessionSecret.ts sessionProof). */
    proof: z.string().regex(/^[A-Za-z0-9_-]{86}$/),
    window: z.int().min(1).max(MAX_SESSION_WINDOW),
    unsettled: messageRefs.optional(),
  }),
  z.object({ type: z.literal('ack'), tags }),
  z.object({ type: z.literal('reject'), tags }),
  z.object({
    type: z.literal('publish'),
    requestId: z.string().min(1).max(64),
    queue: z.string().min(1).max(63),
    /** String headers only: they are what a route filter matches. */
    headers: z.record(z.string().max(255), z.string().max(4096)),
    body: bytes,
    contentType: z.string().max(255).optional(),
    key: z.string().max(4096).optional(),
  }),
  z.object({ type: z.literal('bye') }),
]);
export type ClientFrame = z.infer<typeof clientFrameSchema>;

export const REFUSAL_CODES = ['unauthorized', 'route-not-active', 'protocol', 'replaced'] as const;
export const NOTICE_CODES = ['route-draining', 'reader-failed', 'reader-recovered'] as const;

export const agentFrameSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('challenge'),
    nonce: z.string().regex(NONCE_PATTERN),
    podUid: z.string().min(1).max(64),
  }),
  z.object({
    type: z.literal('welcome'),
    routeId: z.string(),
    queues: z.array(z.object({ name: z.string(), provider: providerSchema })),
    window: z.int().min(1),
    settled: messageRefs,
    /** Absent from agents before SESSION_FEATURES; unknown names are kept, and ignored. */
    features: z.array(z.string().max(64)).max(32).optional(),
  }),
  z.object({ type: z.literal('refused'), code: z.enum(REFUSAL_CODES), message: z.string() }),
  z.object({
    type: z.literal('message'),
    tag: z.int().min(0),
    queue: z.string(),
    message: wireMessageSchema,
  }),
  z.object({
    type: z.literal('settled'),
    tags,
    /** Answered on an earlier stream, proven only on this one (the exchange above). */
    refs: messageRefs.optional(),
  }),
  z.object({ type: z.literal('published'), requestId: z.string(), messageId: z.string() }),
  z.object({ type: z.literal('publishRefused'), requestId: z.string(), reason: z.string() }),
  z.object({
    type: z.literal('notice'),
    code: z.enum(NOTICE_CODES),
    queue: z.string().optional(),
    message: z.string(),
  }),
]);
export type AgentFrame = z.infer<typeof agentFrameSchema>;

export function encodeFrame(frame: ClientFrame | AgentFrame): Uint8Array {
  return encode(frame, { ignoreUndefined: true });
}

export type Decoded<T> = { ok: true; frame: T } | { ok: false; problem: string };

function decodeWith<T>(schema: z.ZodType<T>, data: Uint8Array): Decoded<T> {
  let value: unknown;
  try {
    value = decode(data);
  } catch (err) {
    return { ok: false, problem: `not MessagePack (${err instanceof Error ? err.message : String(err)})` };
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, problem: `${issue?.path.join('.') || 'frame'}: ${issue?.message ?? 'invalid'}` };
  }
  return { ok: true, frame: parsed.data };
}

export const decodeClientFrame = (data: Uint8Array) => decodeWith(clientFrameSchema, data);
export const decodeAgentFrame = (data: Uint8Array) => decodeWith(agentFrameSchema, data);

/** A message frame the schema refused, as far as it names its message. */
export interface UnreadableMessage {
  tag: number;
  queue: string;
  id: string;
  /** Its lane, when its part still says (core/providers/contract.ts MessageLane). */
  lane?: MessageLane;
}

/**
 * Which message an unreadable frame carried, when it says so: the sidecar parks that one message
 * (not acked, it stays in the shadow) instead of dropping the stream, which would bring the same
 * message first again on every resume.
 */
export function unreadableMessage(data: Uint8Array): UnreadableMessage | undefined {
  let value: unknown;
  try {
    value = decode(data);
  } catch {
    return undefined;
  }
  const parsed = z
    .object({
      type: z.literal('message'),
      tag: z.int().min(0),
      queue: z.string(),
      message: z.looseObject({ id: z.string() }),
    })
    .safeParse(value);
  if (!parsed.success) return undefined;
  const { tag, queue, message } = parsed.data;
  const lane = wireParts(message)
    .map(({ provider, part }) => coreProvider(provider).message.wireLane(part))
    .find((l) => l !== undefined);
  return { tag, queue, id: message.id, ...(lane ? { lane } : {}) };
}
