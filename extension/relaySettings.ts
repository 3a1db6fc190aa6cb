// The relay part of a split request, from the settings (Start Split and launch configurations
// with "delivery": "relay" share it). Refused with the fix when no local broker is named.
import * as vscode from 'vscode';
import type { SplitRequest } from './model/types';
import { UserError } from './notifications';
import { settings } from './settings';

export function relayFromSettings(): NonNullable<SplitRequest['relay']> {
  const kafkaBrokers = settings.relayKafkaBrokers();
  const amqpUrl = settings.relayAmqpUrl();
  const to = settings.relayTo();
  if (kafkaBrokers === '' && amqpUrl === '')
    throw new UserError(
      'relay delivery needs the local broker to republish into.',
      'Set queueSplit.delivery.relayKafkaBrokers and/or queueSplit.delivery.relayAmqpUrl, then start again.',
      [
        {
          title: 'Open Settings',
          run: () =>
            vscode.commands.executeCommand('workbench.action.openSettings', 'queueSplit.delivery.relay'),
        },
      ],
    );
  return {
    ...(kafkaBrokers !== '' ? { kafkaBrokers } : {}),
    ...(amqpUrl !== '' ? { amqpUrl } : {}),
    ...(Object.keys(to).length > 0 ? { to } : {}),
  };
}
