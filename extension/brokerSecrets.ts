// Broker passwords in VS Code's secret storage (the OS keychain on a desktop), never in
// settings.json: the local relay brokers' passwords (queueSplit.delivery.relayAmqpUrl,
// relaySqsEndpoint) and the env values a split needs locally (queueSplit.env). "Queue Split: Set
// Broker Password…" stores them; the sidecar gets them in its environment at start
// (QUEUE_SPLIT_SECRET_SETTINGS), never on its command line or in a file. A password still written
// in settings.json is used when none is stored, with a warning naming the command.
import * as vscode from 'vscode';
import { PROVIDERS, type Provider } from '../core/providers';
import {
  envSecretKey,
  envWithSecrets,
  RELAY_PASSWORDS,
  relaySecretKey,
  relayWithPasswords,
} from './model/brokerSecrets';
import type { Notifier } from './notifications';
import { settings } from './settings';

/** globalState: the env var names whose values are stored (secret storage cannot list its keys). */
const ENV_NAMES_KEY = 'queueSplit.brokerSecrets.envNames';

export class BrokerSecrets {
  /** The settings already warned about in this window (once each, not per start). */
  private readonly told = new Set<string>();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly notifier: Notifier,
  ) {}

  /** The relay brokers with their stored passwords in: only for the sidecar's environment. */
  async relayBrokers(
    brokers: Readonly<Partial<Record<Provider, string>>>,
  ): Promise<Partial<Record<Provider, string>>> {
    const stored = new Map<string, string>();
    for (const [provider, url] of Object.entries(brokers) as [Provider, string][]) {
      const key = relaySecretKey(provider, url);
      const value = key !== undefined ? await this.context.secrets.get(key) : undefined;
      if (key !== undefined && value !== undefined) stored.set(key, value);
    }
    const result = relayWithPasswords(brokers, (key) => stored.get(key));
    for (const provider of result.inline)
      this.warnInline(
        `queueSplit.delivery.${PROVIDERS[provider].relay.setting}`,
        vscode.l10n.t('then remove it from the URL'),
      );
    return result.brokers;
  }

  /** queueSplit.env with the stored values over it: for the sidecar and Send Test Message. */
  async envOverrides(): Promise<Record<string, string>> {
    const stored: Record<string, string> = {};
    for (const name of this.envNames()) {
      const value = await this.context.secrets.get(envSecretKey(name));
      if (value !== undefined) stored[name] = value;
    }
    const result = envWithSecrets(settings.envOverrides(), stored);
    for (const name of result.inline)
      this.warnInline(`queueSplit.env (${name})`, vscode.l10n.t('then remove {0} from queueSplit.env', name));
    return result.env;
  }

  /** The env var names that have a stored value. */
  envNames(): string[] {
    return this.context.globalState.get<string[]>(ENV_NAMES_KEY, []);
  }

  async hasRelayPassword(provider: Provider, url: string): Promise<boolean> {
    const key = relaySecretKey(provider, url);
    return key !== undefined && (await this.context.secrets.get(key)) !== undefined;
  }

  /** Stores (or with undefined, removes) the password of relay broker `url`. */
  async setRelayPassword(provider: Provider, url: string, password: string | undefined): Promise<void> {
    const key = relaySecretKey(provider, url);
    if (key === undefined) throw new Error(`${url} names no user`);
    if (password === undefined) await this.context.secrets.delete(key);
    else await this.context.secrets.store(key, password);
  }

  /** Stores (or with undefined, removes) the local value of env var `name`. */
  async setEnvValue(name: string, value: string | undefined): Promise<void> {
    const names = new Set(this.envNames());
    if (value === undefined) {
      await this.context.secrets.delete(envSecretKey(name));
      names.delete(name);
    } else {
      await this.context.secrets.store(envSecretKey(name), value);
      names.add(name);
    }
    await this.context.globalState.update(ENV_NAMES_KEY, [...names].sort());
  }

  private warnInline(where: string, thenWhat: string): void {
    if (this.told.has(where)) return;
    this.told.add(where);
    this.notifier.warn(
      vscode.l10n.t(
        '{0} holds a password in settings.json, which is deprecated: it is still used, for now.',
        where,
      ),
      vscode.l10n.t(
        'Run "Queue Split: Set Broker Password…" to keep it in VS Code\'s secret storage, {0}.',
        thenWhat,
      ),
      {
        title: vscode.l10n.t('Set Broker Password…'),
        run: () => vscode.commands.executeCommand('queueSplit.setBrokerPassword'),
      },
    );
  }
}

export { RELAY_PASSWORDS };
