// A test client's hello on the session stream (core/sessionStream.ts), as the sidecar makes it:
// the agent speaks first with a challenge, and the hello signs it with the route's secret.
import type WebSocket from 'ws';
import { sessionProof } from '../../core/sessionSecret';
import { decodeAgentFrame, encodeFrame, type AgentFrame, type MessageRef } from '../../core/sessionStream';

export type Challenge = Extract<AgentFrame, { type: 'challenge' }>;

/** The hello answering `challenge` for `routeId` with `secret`. */
export function helloFor(
  challenge: Challenge,
  routeId: string,
  secret: string,
  window: number,
  unsettled?: MessageRef[],
): Uint8Array {
  return encodeFrame({
    type: 'hello',
    routeId,
    proof: sessionProof(secret, { routeId, podUid: challenge.podUid, nonce: challenge.nonce }),
    window,
    ...(unsettled ? { unsettled } : {}),
  });
}

/** The first challenge `ws` receives (register before it opens, or it may be missed). */
export function challengeOf(ws: WebSocket): Promise<Challenge> {
  return new Promise((resolve, reject) => {
    const onMessage = (data: Buffer) => {
      const decoded = decodeAgentFrame(data);
      if (decoded.ok && decoded.frame.type === 'challenge') {
        ws.off('message', onMessage);
        resolve(decoded.frame);
      }
    };
    ws.on('message', onMessage);
    ws.once('close', () => reject(new Error('closed before a challenge')));
  });
}

/** Sends the hello as soon as the challenge comes. */
export async function answerChallenge(ws: WebSocket, routeId: string, secret: string, window: number) {
  ws.send(helloFor(await challengeOf(ws), routeId, secret, window));
}
