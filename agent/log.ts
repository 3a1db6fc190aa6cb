// The agent's structured log (controller, queue-agent and engines): one JSON object per line.
// Callers pass names, ids and counts only; never message bodies, header values (filter values
// are header values) or URLs with credentials. `redact` is the last line of defence for error
// texts that might carry a URL.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Readonly<Record<string, string | number | boolean | null | undefined>>;

export interface Logger {
  debug(event: string, fields?: LogFields): void;
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
  child(bindings: LogFields): Logger;
}

const levels: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** `scheme://user:pass@host` → `scheme://***@host`, anywhere in a text. */
export function redact(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/\s@]*@/gi, '$1***@');
}

/** A loggable description of any thrown value, credentials removed. */
export function describeError(err: unknown): string {
  return redact(apiStatusLine(err) ?? (err instanceof Error ? err.message : String(err)));
}

/**
 * A Kubernetes API error (client-node's ApiException: a code and the server's Status as the
 * body) as "409 Operation cannot be fulfilled on …": its message without the response headers
 * and the JSON around it. Undefined for any other error.
 */
function apiStatusLine(err: unknown): string | undefined {
  const e = err as { code?: unknown; body?: unknown } | null;
  if (typeof e?.code !== 'number' || typeof e.body !== 'string') return undefined;
  try {
    const status = JSON.parse(e.body) as { message?: unknown };
    if (typeof status.message === 'string') return `${e.code} ${status.message}`;
  } catch {
    // not a Status object
  }
  return undefined;
}

export function jsonLogger(
  write: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
  minLevel: LogLevel = 'info',
  bindings: LogFields = {},
): Logger {
  const emit = (level: LogLevel, event: string, fields?: LogFields) => {
    if (levels[level] < levels[minLevel]) return;
    const record: Record<string, unknown> = { time: new Date().toISOString(), level, event, ...bindings };
    for (const [key, value] of Object.entries(fields ?? {})) {
      record[key] = typeof value === 'string' ? redact(value) : value;
    }
    write(JSON.stringify(record));
  };
  return {
    debug: (event, fields) => emit('debug', event, fields),
    info: (event, fields) => emit('info', event, fields),
    warn: (event, fields) => emit('warn', event, fields),
    error: (event, fields) => emit('error', event, fields),
    child: (more) => jsonLogger(write, minLevel, { ...bindings, ...more }),
  };
}

export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};
