// In-cluster broker addresses (kafka.kafka.svc:9092) are usually unreachable from a laptop; a
// port-forward or a public listener is. The address map rewrites where the sidecar dials,
// keeping the original host as the TLS server name so certificates still verify. For Kafka it
// applies to every connection kafkajs opens, including the advertised broker addresses it
// learns from metadata (see kafkaSocketFactory in ./kafka.ts).
import { usageError } from './errors';

export interface HostPort {
  host: string;
  port?: number;
}

export interface Dial {
  host: string;
  port: number;
  /** True when the map changed the address. */
  mapped: boolean;
}

function parseHostPort(text: string, flag: string, what: string): HostPort {
  const trimmed = text.trim();
  const match = /^(\[[^\]]+\]|[^:[\]\s]+)(?::(\d{1,5}))?$/.exec(trimmed);
  const port = match?.[2] !== undefined ? Number(match[2]) : undefined;
  if (!match?.[1] || (port !== undefined && (port < 1 || port > 65535))) {
    throw usageError(
      flag,
      `"${text}" is not a host or host:port (${what}).`,
      'Write it as in-cluster-host[:port]=reachable-host[:port], e.g. kafka.kafka.svc:9092=127.0.0.1:19092.',
    );
  }
  return { host: match[1].replace(/^\[|\]$/g, '').toLowerCase(), ...(port !== undefined ? { port } : {}) };
}

export class AddressMap {
  private readonly byHostPort = new Map<string, HostPort>();
  private readonly byHost = new Map<string, HostPort>();

  /** Entries `from=to`, each side `host` or `host:port`; `flag` names the source in errors. */
  static parse(
    entries: Readonly<Record<string, string>> | readonly string[],
    flag = '--map-address',
  ): AddressMap {
    const map = new AddressMap();
    const pairs: [string, string][] = Array.isArray(entries)
      ? entries.map((entry: string) => {
          const eq = entry.indexOf('=');
          if (eq < 0)
            throw usageError(
              flag,
              `"${entry}" has no "=".`,
              'Write it as in-cluster-host[:port]=reachable-host[:port].',
            );
          return [entry.slice(0, eq), entry.slice(eq + 1)];
        })
      : Object.entries(entries as Readonly<Record<string, string>>);
    for (const [fromText, toText] of pairs) {
      const from = parseHostPort(fromText, flag, 'left side');
      const to = parseHostPort(toText, flag, 'right side');
      if (from.port !== undefined) map.byHostPort.set(`${from.host}:${from.port}`, to);
      else map.byHost.set(from.host, to);
    }
    return map;
  }

  get size(): number {
    return this.byHostPort.size + this.byHost.size;
  }

  /** Adds the entries of `other` that this map does not have (flags win over the settings file). */
  withFallback(other: AddressMap): AddressMap {
    const merged = new AddressMap();
    for (const source of [other, this]) {
      for (const [k, v] of source.byHostPort) merged.byHostPort.set(k, v);
      for (const [k, v] of source.byHost) merged.byHost.set(k, v);
    }
    return merged;
  }

  dial(host: string, port: number): Dial {
    const key = host.toLowerCase().replace(/^\[|\]$/g, '');
    const to = this.byHostPort.get(`${key}:${port}`) ?? this.byHost.get(key);
    if (to === undefined) return { host, port, mapped: false };
    return { host: to.host, port: to.port ?? port, mapped: true };
  }

  /** `host:port` → the mapped `host:port` (a listener prefix like SASL_SSL:// is kept). */
  mapBroker(broker: string, defaultPort = 9092): string {
    const prefix = /^[A-Za-z_]+:\/\//.exec(broker)?.[0] ?? '';
    const rest = broker.slice(prefix.length);
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(rest);
    if (!m?.[1]) return broker;
    const port = m[2] !== undefined ? Number(m[2]) : defaultPort;
    const dial = this.dial(m[1], port);
    if (!dial.mapped) return broker;
    const host = dial.host.includes(':') ? `[${dial.host}]` : dial.host;
    return `${prefix}${host}:${dial.port}`;
  }

  /** An amqp(s)/http(s) URL with its host:port mapped, plus the original host for TLS. */
  mapUrl(url: string): { url: string; originalHost: string; mapped: boolean } {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { url, originalHost: '', mapped: false };
    }
    const originalHost = parsed.hostname.replace(/^\[|\]$/g, '');
    const defaults: Record<string, number> = { 'amqp:': 5672, 'amqps:': 5671, 'http:': 80, 'https:': 443 };
    const port = parsed.port !== '' ? Number(parsed.port) : (defaults[parsed.protocol] ?? 0);
    const dial = this.dial(originalHost, port);
    if (!dial.mapped) return { url, originalHost, mapped: false };
    parsed.hostname = dial.host.includes(':') ? `[${dial.host}]` : dial.host;
    parsed.port = String(dial.port);
    return { url: parsed.toString(), originalHost, mapped: true };
  }
}
