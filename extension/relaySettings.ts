// The relay part of a split request, from the settings (Start Split and launch configurations
// with "delivery": "relay" share it). Refused with the fix when no local broker is named.
import * as vscode from 'vscode';
import { PROVIDER_NAMES, relaySettingNames, type Provider } from '../core/providers';
import type { SplitRequest } from './model/types';
import { UserError } from './notifications';
import { settings } from './settings';

export function relayFromSettings(): NonNullable<SplitRequest['relay']> {
  const brokers: Partial<Record<Provider, string>> = {};
  for (const provider of PROVIDER_NAMES) {
    const broker = settings.relayBroker(provider);
    if (broker !== '') brokers[provider] = broker;
  }
  const to = settings.relayTo();
  if (Object.keys(brokers).length === 0)
    throw new UserError(
      vscode.l10n.t('relay delivery needs the local broker to republish into.'),
      vscode.l10n.t('Set {0}, then start again.', relaySettingNames().join(vscode.l10n.t(' and/or '))),
      [
        {
          title: vscode.l10n.t('Open Settings'),
          run: () =>
            vscode.commands.executeCommand('workbench.action.openSettings', 'queueSplit.delivery.relay'),
        },
      ],
    );
  return { brokers, ...(Object.keys(to).length > 0 ? { to } : {}) };
}
