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
      label: `$(key) ${vscode.l10n.t('{0} (relay delivery)', info.label)}`,
      description:
        parts !== undefined
          ? `${withoutPassword(url)}${stored ? ` · ${vscode.l10n.t('stored')}` : ''}`
          : vscode.l10n.t('set {0} first', setting),
      detail:
        parts !== undefined
          ? vscode.l10n.t(
              'The {0} of {1} at {2}',
              info.secret,
              decodeURIComponent(parts.user),
              `${parts.scheme}${parts.host}`,
            )
          : vscode.l10n.t(
              'Set {0} to the URL with its user and without the {1}, e.g. {2}.',
              setting,
              info.secret,
              info.example,
            ),
      run: async () => {
        if (parts === undefined)
          throw new UserError(
            url === ''
              ? vscode.l10n.t('{0} is not set: the {1} is kept for a user at a host.', setting, info.secret)
              : vscode.l10n.t(
                  '{0} names no user: the {1} is kept for a user at a host.',
                  setting,
                  info.secret,
                ),
            vscode.l10n.t(
              'Set it to the URL without the {0}, e.g. {1}, then run Set Broker Password… again.',
              info.secret,
              info.example,
            ),
            [
              {
                title: vscode.l10n.t('Open Settings'),
                run: () => vscode.commands.executeCommand('workbench.action.openSettings', setting),
              },
            ],
          );
        const secret = await askSecret(
          vscode.l10n.t('Set Broker Password: {0}', info.broker),
          vscode.l10n.t(
            'The {0} of {1} at {2}.',
            info.secret,
            decodeURIComponent(parts.user),
            `${parts.scheme}${parts.host}`,
          ),
          stored,
        );
        if (secret === undefined) return;
        await secrets.setRelayPassword(provider, url, secret === '' ? undefined : secret);
        services.notifier.info(
          secret === ''
            ? vscode.l10n.t(
                "The {0} for {1} was removed from VS Code's secret storage.",
                info.secret,
                withoutPassword(url),
              )
            : vscode.l10n.t(
                "The {0} for {1} is in VS Code's secret storage; the next relay split uses it.",
                info.secret,
                withoutPassword(url),
              ),
        );
      },
    });
  }
  for (const name of secrets.envNames())
    items.push({
      label: `$(key) ${name}`,
      description: vscode.l10n.t('env value · stored'),
      detail: vscode.l10n.t(
        'The local value of the container env var {0} (env delivery, Send Test Message)',
        name,
      ),
      run: () => setEnv(services, name, true),
    });
  items.push({
    label: `$(add) ${vscode.l10n.t('A container env var’s local value…')}`,
    detail: vscode.l10n.t(
      'For env delivery and Send Test Message: a value queueSplit.env would hold in settings.json, e.g. AMQP_URL with its password',
    ),
    run: async () => {
      const name = await vscode.window.showInputBox({
        title: vscode.l10n.t('Set Broker Password: env var'),
        prompt: vscode.l10n.t(
          'The name of the workload container’s env var whose local value you set, e.g. AMQP_URL.',
        ),
        ignoreFocusOut: true,
        validateInput: (v) =>
          ENV_NAME.test(v.trim())
            ? undefined
            : vscode.l10n.t('An env var name: letters, digits, "_", "-", "."; not starting with a digit.'),
      });
      if (name === undefined) return;
      await setEnv(services, name.trim(), secrets.envNames().includes(name.trim()));
    },
  });
  const picked = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('Set Broker Password'),
    placeHolder: vscode.l10n.t(
      'Which password? It is kept in VS Code’s secret storage, never in settings.json.',
    ),
    ignoreFocusOut: true,
  });
  if (picked !== undefined) await picked.run();
}

async function setEnv(services: Services, name: string, stored: boolean): Promise<void> {
  const value = await askSecret(
    vscode.l10n.t('Set Broker Password: {0}', name),
    vscode.l10n.t(
      "The local value of {0}, as your process would see it (e.g. amqp://USER:PASSWORD@HOST:5672). It is used over queueSplit.env's.",
      name,
    ),
    stored,
  );
  if (value === undefined) return;
  await services.brokerSecrets.setEnvValue(name, value === '' ? undefined : value);
  services.notifier.info(
    value === ''
      ? vscode.l10n.t("The local value of {0} was removed from VS Code's secret storage.", name)
      : vscode.l10n.t(
          "The local value of {0} is in VS Code's secret storage; the next split and Send Test Message use it.",
          name,
        ),
  );
}

/** The secret as typed (hidden); '' to remove a stored one; undefined when cancelled. */
function askSecret(title: string, what: string, stored: boolean): Thenable<string | undefined> {
  return vscode.window.showInputBox({
    title,
    prompt: [
      what,
      vscode.l10n.t("Kept in VS Code's secret storage."),
      ...(stored ? [vscode.l10n.t('Leave empty to remove the stored one.')] : []),
    ].join(' '),
    password: true,
    ignoreFocusOut: true,
    validateInput: (v) =>
      v === '' && !stored ? vscode.l10n.t('Type it, or press Escape to cancel.') : undefined,
  });
}
