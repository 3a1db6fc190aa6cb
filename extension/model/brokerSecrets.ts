// Broker passwords kept in VS Code's secret storage instead of settings.json, as pure logic: what
// each stored secret is keyed on, how a stored password goes into a broker URL, and which values
// of the settings hold a password (read still, as a deprecated fallback, with a warning).
//
// A relay password is keyed on the URL it was set for without the password (scheme, user, host
// and port): a workspace that points the relay setting at another host gets no password with it.
// An env value (the `queueSplit.env` overrides) is keyed on its env var name.
import * as l10n from '@vscode/l10n';
import type { Provider } from '../../core/providers';

/** The local brokers of relay delivery whose setting is a URL with a user, hence a password. */
export const RELAY_PASSWORDS: Partial<
  Record<Provider, { label: string; broker: string; secret: string; example: string }>
> = {
  rabbitmq: {
    label: l10n.t('Local RabbitMQ'),
    broker: l10n.t('local RabbitMQ'),
    secret: l10n.t('password'),
    example: 'amqp://USER@127.0.0.1:5672',
  },
  sqs: {
    label: l10n.t('Local SQS endpoint'),
    broker: l10n.t('local SQS endpoint'),
    secret: l10n.t('secret access key'),
    example: 'http://ACCESS_KEY_ID@127.0.0.1:9324',
  },
};

const AUTHORITY = /^([a-z][a-z0-9+.-]*:\/\/)([^:@/?#]*)(?::([^@/?#]*))?@([^/?#]*)/i;

export interface UrlParts {
  /** `amqp://` */
  scheme: string;
  /** As written (percent-encoded). */
  user: string;
  /** As written; undefined when the URL has none. */
  password?: string;
  /** host[:port] */
  host: string;
}

/** The authority of `scheme://user[:password]@host...`; undefined without a user. */
export function urlParts(url: string): UrlParts | undefined {
  const m = AUTHORITY.exec(url.trim());
  if (m === null || m[2] === '') return undefined;
  return {
    scheme: m[1]!.toLowerCase(),
    user: m[2]!,
    ...(m[3] !== undefined && m[3] !== '' ? { password: m[3] } : {}),
    host: m[4]!.toLowerCase(),
  };
}

/** The URL as it may be shown: its password, if any, left out. */
export function withoutPassword(url: string): string {
  const parts = urlParts(url);
  if (parts === undefined) return url.trim();
  return url
    .trim()
    .replace(
      AUTHORITY,
      (_all, scheme: string, user: string, _pw, host: string) => `${scheme}${user}@${host}`,
    );
}

/** The same URL carrying `password` (percent-encoded as a URL's userinfo must be). */
export function withPassword(url: string, password: string): string {
  if (urlParts(url) === undefined) return url;
  return url
    .trim()
    .replace(
      AUTHORITY,
      (_all, scheme: string, user: string, _pw, host: string) =>
        `${scheme}${user}:${encodeURIComponent(password)}@${host}`,
    );
}

/** Where the password of relay broker `url` is stored; undefined when the URL names no user. */
export function relaySecretKey(provider: Provider, url: string): string | undefined {
  const parts = urlParts(url);
  if (parts === undefined) return undefined;
  return `queueSplit.broker/relay/${provider}/${parts.scheme}${parts.user}@${parts.host}`;
}

/** Where the value of env var `name` (queueSplit.env, for env delivery and Send Test Message) is. */
export function envSecretKey(name: string): string {
  return `queueSplit.broker/env/${name}`;
}

const SECRET_NAME = /PASS(WORD|WD)?|SECRET|TOKEN|CREDENTIAL|API_?KEY|PRIVATE_?KEY/i;

/** Whether a `queueSplit.env` value holds a password: a URL with one, or a secret-looking name. */
export function envValueHoldsPassword(name: string, value: string): boolean {
  if (value.trim() === '') return false;
  return urlParts(value)?.password !== undefined || SECRET_NAME.test(name);
}

/** What the relay brokers become for the sidecar: each URL with its stored password, else as
 * written (a password already in it is the deprecated fallback, reported in `inline`). */
export function relayWithPasswords(
  brokers: Readonly<Partial<Record<Provider, string>>>,
  stored: (key: string) => string | undefined,
): { brokers: Partial<Record<Provider, string>>; inline: Provider[] } {
  const out: Partial<Record<Provider, string>> = {};
  const inline: Provider[] = [];
  for (const [provider, url] of Object.entries(brokers) as [Provider, string][]) {
    const key = RELAY_PASSWORDS[provider] !== undefined ? relaySecretKey(provider, url) : undefined;
    const password = key !== undefined ? stored(key) : undefined;
    if (password !== undefined) out[provider] = withPassword(url, password);
    else {
      out[provider] = url;
      if (RELAY_PASSWORDS[provider] !== undefined && urlParts(url)?.password !== undefined)
        inline.push(provider);
    }
  }
  return { brokers: out, inline };
}

/** The env overrides for the sidecar: settings' values with the stored ones over them; the names
 * whose value from settings.json holds a password (the deprecated fallback) in `inline`. */
export function envWithSecrets(
  fromSettings: Readonly<Record<string, string>>,
  stored: Readonly<Record<string, string>>,
): { env: Record<string, string>; inline: string[] } {
  const inline = Object.entries(fromSettings)
    .filter(([name, value]) => stored[name] === undefined && envValueHoldsPassword(name, value))
    .map(([name]) => name);
  return { env: { ...fromSettings, ...stored }, inline };
}
