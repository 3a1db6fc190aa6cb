// Keeps secrets out of everything the sidecar prints. Two layers: URLs are shown with their
// password replaced, and every secret value the sidecar learns (Secret-derived env, passwords,
// URL passwords) is registered here and scrubbed from every line, whatever produced the text
// (our messages, kafkajs/amqplib error texts, stack traces).

const MASK = '***';
/** Shorter values would mask ordinary words; such passwords are still never printed by us. */
const MIN_SECRET_LENGTH = 4;

/** `scheme://user:pass@host/...` → `scheme://user:***@host/...`; text that is no URL is returned as is. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = MASK;
    return parsed.toString().replace('%2A%2A%2A', MASK);
  } catch {
    return url.replace(/\/\/([^/@:\s]*):[^/@\s]*@/g, `//$1:${MASK}@`);
  }
}

export class Redactor {
  private readonly secrets = new Set<string>();

  /** Registers a secret value (and its URL-encoded form, as it appears inside URLs). */
  add(secret: string | undefined): void {
    if (secret === undefined || secret.length < MIN_SECRET_LENGTH) return;
    this.secrets.add(secret);
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret) this.secrets.add(encoded);
  }

  /** Registers the password of a URL (if it has one). */
  addUrl(url: string): void {
    try {
      const parsed = new URL(url);
      if (parsed.password !== '') this.add(decodeURIComponent(parsed.password));
    } catch {
      // not a URL: nothing to register
    }
  }

  redact(text: string): string {
    let out = text.replace(/\/\/([^/@:\s"']*):[^/@\s"']*@/g, `//$1:${MASK}@`);
    for (const secret of this.secrets) out = out.split(secret).join(MASK);
    return out;
  }

  /** Deep copy of a JSON value with every string redacted. */
  redactValue<T>(value: T): T {
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return this.redact(v);
      if (Array.isArray(v)) return v.map(walk);
      if (typeof v === 'object' && v !== null) {
        return Object.fromEntries(Object.entries(v).map(([k, inner]) => [k, walk(inner)]));
      }
      return v;
    };
    return walk(value) as T;
  }
}
