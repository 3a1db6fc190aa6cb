// RabbitMQ management credentials travel with every management API request (Basic auth). When
// AMQP is protected by TLS, a plain http:// management URL would send the same credentials
// unencrypted, so the pair is refused unless the declaration says `allowPlainHttpManagement:
// true` (README "Trust boundaries"). One rule for the controller's config check (literal
// values) and the queue-agent's preflight (the values its pod env resolves to).
import { fieldError, type FieldError } from '../../result';

export const ALLOW_PLAIN_HTTP_MANAGEMENT = 'allowPlainHttpManagement';

const protocolOf = (url: string | undefined): string | undefined => {
  if (url === undefined) return undefined;
  try {
    return new URL(url).protocol;
  } catch {
    return undefined;
  }
};

/**
 * Whether the management URL would carry credentials in the clear next to a TLS-protected AMQP
 * connection. `amqpUrl`/`managementUrl` undefined: not known (a Secret reference at config time).
 */
export function plainHttpManagement(input: {
  amqpUrl: string | undefined;
  managementUrl: string | undefined;
  tls: boolean;
}): boolean {
  const amqpTls = input.tls || protocolOf(input.amqpUrl) === 'amqps:';
  return amqpTls && protocolOf(input.managementUrl) === 'http:';
}

/** The error, naming both env vars and the two fixes; never the URLs (they may hold credentials). */
export function plainHttpManagementError(path: string, urlEnv: string, managementUrlEnv: string): FieldError {
  return fieldError(
    `${path}.managementUrlEnv`,
    `${managementUrlEnv} is a plain http:// URL while ${urlEnv} uses TLS (amqps://): the management API credentials would cross the network unencrypted.`,
    `Use an https:// management URL, or set ${path}.${ALLOW_PLAIN_HTTP_MANAGEMENT}: true if management traffic stays on a network you trust.`,
  );
}
