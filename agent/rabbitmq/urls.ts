// What the engine reads from its (secret) URLs. Nothing here ever returns a password except
// the credentials object handed straight to fetch.
export interface AmqpTarget {
  /** The URL to dial, with heartbeat set unless the caller chose one. Secret: never log. */
  readonly url: string;
  readonly vhost: string;
  readonly username: string;
}

export function amqpTarget(amqpUrl: string, heartbeatSeconds: number): AmqpTarget {
  const url = new URL(amqpUrl);
  if (!url.searchParams.has('heartbeat')) url.searchParams.set('heartbeat', String(heartbeatSeconds));
  const path = url.pathname.replace(/^\//, '');
  return {
    url: url.toString(),
    vhost: path === '' ? '/' : decodeURIComponent(path),
    username: url.username === '' ? 'guest' : decodeURIComponent(url.username),
  };
}

export interface ManagementTarget {
  readonly origin: string;
  /** `Basic …` header value. Secret: never log. */
  readonly authorization: string;
}

/** The management API base and credentials: its own userinfo, else the AMQP URL's. */
export function managementTarget(managementUrl: string, amqpUrl: string): ManagementTarget {
  const mgmt = new URL(managementUrl);
  const amqp = new URL(amqpUrl);
  const source = mgmt.username !== '' ? mgmt : amqp;
  const user = decodeURIComponent(source.username || 'guest');
  const pass = decodeURIComponent(source.password || 'guest');
  const base = `${mgmt.origin}${mgmt.pathname.replace(/\/$/, '')}`;
  return { origin: base, authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` };
}
