// Every command runs through here: an error becomes one notification with its suggested action
// (and the log), never an unhandled rejection or a stack trace in the user's face.
import { explain } from '../notifications';
import type { Services } from '../services';

export function guarded<A extends unknown[], R>(
  services: Services,
  name: string,
  body: (...args: A) => Promise<R>,
): (...args: A) => Promise<R | undefined> {
  return async (...args: A) => {
    try {
      return await body(...args);
    } catch (err) {
      const { message, suggestedAction, actions } = explain(err);
      services.log.debug(
        `${name} failed: ${err instanceof Error && err.stack !== undefined ? err.stack : message}`,
      );
      services.notifier.error(message, suggestedAction, ...actions);
      return undefined;
    }
  };
}
