// Minimal reader of the RabbitMQ management HTTP API for tests.
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
}

export async function getQueue(managementUrl: string, queue: string, vhost = '/'): Promise<QueueInfo> {
  const url = new URL(managementUrl);
  const auth = Buffer.from(
    `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`,
  ).toString('base64');
  const res = await fetch(
    `${url.origin}/api/queues/${encodeURIComponent(vhost)}/${encodeURIComponent(queue)}`,
    {
      headers: { authorization: `Basic ${auth}` },
      signal: AbortSignal.timeout(5000),
    },
  );
  if (!res.ok) throw new Error(`management API GET queue ${queue}: HTTP ${res.status}`);
  return (await res.json()) as QueueInfo;
}
