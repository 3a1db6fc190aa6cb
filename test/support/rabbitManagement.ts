// Minimal client of the RabbitMQ management HTTP API for tests.
export interface QueueInfo {
  name: string;
  type: string;
  durable: boolean;
  auto_delete: boolean;
  exclusive: boolean;
  arguments: Record<string, unknown>;
  consumers?: number;
  messages_ready?: number;
  messages_unacknowledged?: number;
  consumer_details?: { consumer_tag: string }[];
  policy?: string | null;
  effective_policy_definition?: Record<string, unknown> | null;
}

interface ConnectionInfo {
  name: string;
  client_properties?: { connection_name?: string };
}

async function call(
  managementUrl: string,
  method: 'GET' | 'DELETE' | 'PUT',
  path: string,
  body?: unknown,
): Promise<Response> {
  const url = new URL(managementUrl);
  const auth = Buffer.from(
    `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`,
  ).toString('base64');
  return fetch(`${url.origin}${path}`, {
    method,
    headers: {
      authorization: `Basic ${auth}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(5000),
  });
}

/** Sets a policy for queues whose names match `pattern`, as an operator would. */
export async function putPolicy(
  managementUrl: string,
  name: string,
  pattern: string,
  definition: Record<string, unknown>,
  vhost = '/',
): Promise<void> {
  const res = await call(
    managementUrl,
    'PUT',
    `/api/policies/${encodeURIComponent(vhost)}/${encodeURIComponent(name)}`,
    {
      pattern,
      definition,
      'apply-to': 'queues',
      priority: 10,
    },
  );
  await res.body?.cancel();
  if (!res.ok) throw new Error(`management API PUT policy ${name}: HTTP ${res.status}`);
}

export async function deletePolicy(managementUrl: string, name: string, vhost = '/'): Promise<void> {
  const res = await call(
    managementUrl,
    'DELETE',
    `/api/policies/${encodeURIComponent(vhost)}/${encodeURIComponent(name)}`,
  );
  await res.body?.cancel();
  if (!res.ok && res.status !== 404)
    throw new Error(`management API DELETE policy ${name}: HTTP ${res.status}`);
}

export async function getQueue(managementUrl: string, queue: string, vhost = '/'): Promise<QueueInfo> {
  const res = await call(
    managementUrl,
    'GET',
    `/api/queues/${encodeURIComponent(vhost)}/${encodeURIComponent(queue)}`,
  );
  if (!res.ok) throw new Error(`management API GET queue ${queue}: HTTP ${res.status}`);
  return (await res.json()) as QueueInfo;
}

/** True when the queue exists (a 404 is false, any other failure throws). */
export async function queueExists(managementUrl: string, queue: string, vhost = '/'): Promise<boolean> {
  const res = await call(
    managementUrl,
    'GET',
    `/api/queues/${encodeURIComponent(vhost)}/${encodeURIComponent(queue)}`,
  );
  await res.body?.cancel();
  if (res.status === 404) return false;
  if (!res.ok) throw new Error(`management API GET queue ${queue}: HTTP ${res.status}`);
  return true;
}

/** Force-closes every connection whose client-provided name ends with `nameEnd` (as an
 * operator or a network failure would end it); returns how many it closed. */
export async function closeConnections(managementUrl: string, nameEnd: string): Promise<number> {
  const res = await call(managementUrl, 'GET', '/api/connections?columns=name,client_properties');
  if (!res.ok) throw new Error(`management API GET connections: HTTP ${res.status}`);
  const all = (await res.json()) as ConnectionInfo[];
  const targets = all.filter((c) => c.client_properties?.connection_name?.endsWith(nameEnd));
  for (const c of targets) {
    const del = await call(managementUrl, 'DELETE', `/api/connections/${encodeURIComponent(c.name)}`);
    await del.body?.cancel();
  }
  return targets.length;
}

/** The names of the exchanges whose names start with `prefix`. */
export async function exchangesStartingWith(
  managementUrl: string,
  prefix: string,
  vhost = '/',
): Promise<string[]> {
  const res = await call(managementUrl, 'GET', `/api/exchanges/${encodeURIComponent(vhost)}?columns=name`);
  if (!res.ok) throw new Error(`management API GET exchanges: HTTP ${res.status}`);
  const all = (await res.json()) as { name: string }[];
  return all.map((x) => x.name).filter((name) => name.startsWith(prefix));
}

/** The exchanges `queue` is bound to, the default exchange aside. */
export async function exchangesBoundTo(managementUrl: string, queue: string, vhost = '/'): Promise<string[]> {
  const res = await call(
    managementUrl,
    'GET',
    `/api/queues/${encodeURIComponent(vhost)}/${encodeURIComponent(queue)}/bindings`,
  );
  if (!res.ok) throw new Error(`management API GET bindings of ${queue}: HTTP ${res.status}`);
  const bindings = (await res.json()) as { source: string }[];
  return bindings.map((b) => b.source).filter((source) => source !== '');
}

/** Deletes every exchange whose name starts with `prefix` (what a test's engines made). */
export async function deleteExchangesStartingWith(
  managementUrl: string,
  prefix: string,
  vhost = '/',
): Promise<void> {
  for (const name of await exchangesStartingWith(managementUrl, prefix, vhost)) {
    const res = await call(
      managementUrl,
      'DELETE',
      `/api/exchanges/${encodeURIComponent(vhost)}/${encodeURIComponent(name)}`,
    );
    await res.body?.cancel();
    if (!res.ok && res.status !== 404)
      throw new Error(`management API DELETE exchange ${name}: HTTP ${res.status}`);
  }
}
