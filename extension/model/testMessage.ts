// What "Send Test Message…" sends and says, as a pure function: headers (and, when the filter
// reads the body, body fields) that match the split's own filter — built by core/filter
// messageMatching from that filter alone, so they can only carry the user's own values and, since
// routes on a queue never overlap, match nobody else's route.
import * as l10n from '@vscode/l10n';
import { describeWitness, filterKeys, messageMatching, type RouteFilter } from '../../core/filter';

export interface ChosenBody {
  body: Buffer;
  contentType?: string;
}

export interface TestMessagePlan {
  headers: Readonly<Record<string, string>>;
  body: Buffer;
  contentType?: string;
  /** For the notification (the user's own values): `headers x-queue-split-user="alice"`, and a
   * note when the body had to be replaced. */
  shown: string;
  /** For the log: header names only. */
  headerNames: string;
}

export function planTestMessage(
  filter: RouteFilter,
  chosen: ChosenBody,
): TestMessagePlan | { error: string; fix: string } {
  const chosenText = chosen.body.toString('utf8');
  const message = messageMatching(filter, chosenText);
  if (message === undefined)
    return {
      error: l10n.t('No message can match the filter of this split.'),
      fix: l10n.t('Start the split again with a filter some message can match.'),
    };
  const headers = Object.entries(message.headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // A filter reading the body gets a JSON body: the chosen object with its fields set, or those
  // fields alone.
  const readsBody = message.body !== undefined && message.body !== chosenText;
  const bodyFields = filterKeys(filter).filter((k) => k.startsWith('body:'));
  const contentType = readsBody ? 'application/json' : chosen.contentType;
  return {
    headers: message.headers,
    body: readsBody ? Buffer.from(message.body!, 'utf8') : chosen.body,
    ...(contentType !== undefined ? { contentType } : {}),
    shown: [
      describeWitness({ headers, body: undefined }),
      ...(message.bodyReplaced
        ? [
            l10n.t(
              'a JSON body with only the fields your filter reads ({0}), since the chosen body lacked them',
              bodyFields.join(', '),
            ),
          ]
        : readsBody
          ? [l10n.t('the fields your filter reads ({0}) set in the body', bodyFields.join(', '))]
          : []),
    ].join(l10n.t(' and ')),
    headerNames: headers.map(([name]) => name).join(', ') || 'none',
  };
}
