// A deadline for one API request: client-node's fetch takes an AbortSignal, set through a
// middleware. Without it a request to a hung API server waits for ever (a paused process keeps
// its sockets open), and whatever waits on it — the leader's renewal — with it.
import { Observable, type ConfigurationOptions } from '@kubernetes/client-node';

export function withTimeout(ms: number, options?: ConfigurationOptions): ConfigurationOptions {
  const signal = AbortSignal.timeout(Math.max(1, Math.round(ms)));
  return {
    ...options,
    middleware: [
      ...(options?.middleware ?? []),
      {
        pre: (request) => {
          request.setSignal(signal);
          return new Observable(Promise.resolve(request));
        },
        post: (response) => new Observable(Promise.resolve(response)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}
