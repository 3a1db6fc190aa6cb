// Queue Split: Set Broker Password… — a password goes to VS Code's secret storage, never to
// settings.json: the local RabbitMQ's or SQS endpoint's of relay delivery (bound to the URL of
// its setting, without the password: user, host and port), or the local value of a container env
// var (env delivery and Send Test Message, in place of a queueSplit.env entry). An empty entry
// removes a stored one. Nothing here needs a trusted workspace: it reads user-level settings only
// in Restricted Mode, and stores what the user types.
import * as vscode from 'vscode';
import { PROVIDERS, type Provider } from '../../core/providers';
import { RELAY_PASSWORDS } from '../brokerSecrets';
import { urlParts, withoutPassword } from '../model/brokerSecrets';
import { UserError } from '../notifications';
import type { Services } from '../services';
import { settings } from '../settings';

/** Kubernetes' rule for env var names (core/queueConfig/blocks.ts; not imported: it brings zod). */
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

interface Item extends vscode.QuickPickItem {
  run: () => Promise<void>;
}

export async function setBrokerPassword(services: Services): Promise<void> {
  const secrets = services.brokerSecrets;
  const items: Item[] = [];
  for (const [provider, info] of Object.entries(RELAY_PASSWORDS) as [
    Provider,
    NonNullable<(typeof RELAY_PASSWORDS)[Provider]>,
  ][]) {
    const setting = `queueSplit.delivery.${PROVIDERS[provider].relay.setting}`;
    const url = settings.relayBroker(provider);
    const parts = urlParts(url);
    const stored = parts !== undefined && (await secrets.hasRelayPassword(provider, url));
    items.push({
      label: `$(key) ${info.broker[0]!.toUpperCase()}${info.broker.slice(1)} (relay delivery)`,
      description:
        parts !== undefined ? `${withoutPassword(url)}${stored ? ' · stored' : ''}` : `set ${setting} first`,
      detail:
        parts !== undefined
          ? `The ${info.secret} of ${decodeURIComponent(parts.user)} at ${parts.scheme}${parts.host}`
          : `Set ${setting} to the URL with its user and without the ${info.secret}, e.g. ${info.example}.`,
      run: async () => {
        if (parts === undefined)
          throw new UserError(
            `${setting} ${url === '' ? 'is not set' : 'names no user'}: the ${info.secret} is kept for a user at a host.`,
            `Set it to the URL without the ${info.secret}, e.g. ${info.example}, then run Set Broker Password… again.`,
            [
              {
                title: 'Open Settings',
                run: () => vscode.commands.executeCommand('workbench.action.openSettings', setting),
              },
            ],
          );
        const secret = await askSecret(
          `Set Broker Password: ${info.broker}`,
          `The ${info.secret} of ${decodeURIComponent(parts.user)} at ${parts.scheme}${parts.host}.`,
          stored,
        );
        if (secret === undefined) return;
        await secrets.setRelayPassword(provider, url, secret === '' ? undefined : secret);
        services.notifier.info(
          secret === ''
            ? `The ${info.secret} for ${withoutPassword(url)} was removed from VS Code's secret storage.`
            : `The ${info.secret} for ${withoutPassword(url)} is in VS Code's secret storage; the next relay split uses it.`,
        );
      },
    });
  }
  for (const name of secrets.envNames())
    items.push({
      label: `$(key) ${name}`,
      description: 'env value · stored',
      detail: `The local value of the container env var ${name} (env delivery, Send Test Message)`,
      run: () => setEnv(services, name, true),
    });
  items.push({
    label: '$(add) A container env var’s local value…',
    detail:
      'For env delivery and Send Test Message: a value queueSplit.env would hold in settings.json, e.g. AMQP_URL with its password',
    run: async () => {
      const name = await vscode.window.showInputBox({
        title: 'Set Broker Password: env var',
        prompt: 'The name of the workload container’s env var whose local value you set, e.g. AMQP_URL.',
        ignoreFocusOut: true,
        validateInput: (v) =>
          ENV_NAME.test(v.trim())
            ? undefined
            : 'An env var name: letters, digits, "_", "-", "."; not starting with a digit.',
      });
      if (name === undefined) return;
      await setEnv(services, name.trim(), secrets.envNames().includes(name.trim()));
    },
  });
  const picked = await vscode.window.showQuickPick(items, {
    title: 'Set Broker Password',
    placeHolder: 'Which password? It is kept in VS Code’s secret storage, never in settings.json.',
    ignoreFocusOut: true,
  });
  if (picked !== undefined) await picked.run();
}

async function setEnv(services: Services, name: string, stored: boolean): Promise<void> {
  const value = await askSecret(
    `Set Broker Password: ${name}`,
    `The local value of ${name}, as your process would see it (e.g. amqp://USER:PASSWORD@HOST:5672). It is used over queueSplit.env's.`,
    stored,
  );
  if (value === undefined) return;
  await services.brokerSecrets.setEnvValue(name, value === '' ? undefined : value);
  services.notifier.info(
    value === ''
      ? `The local value of ${name} was removed from VS Code's secret storage.`
      : `The local value of ${name} is in VS Code's secret storage; the next split and Send Test Message use it.`,
  );
}

/** The secret as typed (hidden); '' to remove a stored one; undefined when cancelled. */
function askSecret(title: string, what: string, stored: boolean): Thenable<string | undefined> {
  return vscode.window.showInputBox({
    title,
    prompt: `${what} Kept in VS Code's secret storage.${stored ? ' Leave empty to remove the stored one.' : ''}`,
    password: true,
    ignoreFocusOut: true,
    validateInput: (v) => (v === '' && !stored ? 'Type it, or press Escape to cancel.' : undefined),
  });
}
