// What the sidecar reports by code (errors, warnings, progress stages, detached and rejected lines)
// and the words the extension puts into the sidecar's sentences (flag homes, hints) come out of the
// l10n bundle: with a bundle that upper-cases every English text (./shoutedBundle.ts), no English
// word of a template may stay lower-case. Only the values the line names (queue, message id, split
// name, setting keys, the controller's own message) may. The sidecar's sentence follows an
// error's headline, marked as the sidecar's (it names what failed: host, workload, verb), and is
// the detail for the log, untranslated.
import './shoutedBundle';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PROVIDER_NAMES } from '../../../core/providers';
import type {
  DetachedMessage,
  ErrorCode,
  ErrorMessage,
  ProgressStage,
  RejectedMessage,
  WarningCode,
} from '../../../core/sidecarProtocol';
import { clipboardPatch } from '../../../extension/model/annotation/render';
import { inEditorTerms, SIDECAR_ERROR_WORDS, sidecarError } from '../../../extension/model/sidecarErrors';
import {
  detachedWords,
  progressWords,
  rejectedWords,
  SIDECAR_WARNING_WORDS,
  warningWords,
} from '../../../extension/model/sidecarWords';

const TIME = '2026-12-06T00:00:00Z';
const SPLIT = { name: 'qs-alice', namespace: 'shop', routeId: 'r1' };

/** Lower-case English left once the values a text may carry are taken out. */
function english(text: string, ...values: string[]): string[] {
  let rest = text.replace(/queueSplit(\.[A-Za-z]+)+/g, ' ').replace(/x-dead-letter-exchange/g, ' ');
  for (const v of values) rest = rest.split(v).join(' ');
  return rest.match(/[a-z]{3,}/g) ?? [];
}

const errorLine = (code: ErrorCode, flag?: string): ErrorMessage => ({
  type: 'error',
  time: TIME,
  code,
  message: 'Something failed on host-1.',
  suggestedAction: 'Start the sidecar again.',
  ...(flag !== undefined ? { flag } : {}),
});

describe('sidecar lines by code, in the bundle’s words', () => {
  test('every error code: headline and action translated; the sidecar’s sentence is the detail', () => {
    for (const code of Object.keys(SIDECAR_ERROR_WORDS) as ErrorCode[]) {
      for (const flag of [undefined, '--target', '--relay-amqp-url']) {
        const shown = sidecarError(errorLine(code, flag));
        // The sidecar's own sentence follows the headline, marked as its own: what failed, where.
        const [headline, own] = shown.message.split(' (THE SIDECAR: ');
        assert.deepEqual(english(headline ?? ''), [], `${code} ${flag}: ${shown.message}`);
        if (!/THE SIDECAR REFUSED/.test(shown.message))
          assert.equal(own, 'Something failed on host-1.)', `${code} ${flag}: the specifics shown`);
        assert.deepEqual(english(shown.suggestedAction), [], `${code} ${flag}: ${shown.suggestedAction}`);
        assert.match(shown.detail, /^Something failed on host-1\. /, code);
      }
    }
  });

  test('a relay flag turns the broker codes to the local broker', () => {
    const down = sidecarError(errorLine('broker-unreachable', '--relay-amqp-url'));
    assert.match(down.message, /^YOUR LOCAL BROKER \(THE queueSplit\.delivery\.relayAmqpUrl SETTING\)/);
    assert.match(
      down.suggestedAction,
      /^START YOUR LOCAL BROKER, OR FIX THE queueSplit\.delivery\.relayAmqpUrl/,
    );
    const far = sidecarError(errorLine('broker-unreachable'));
    assert.match(far.suggestedAction, /FORWARD ITS PORT/);
    const login = sidecarError(errorLine('broker-auth', '--relay-amqp-url'));
    assert.match(login.suggestedAction, /SET BROKER PASSWORD/);
  });

  test('a refused split: the controller’s words inside the bundle’s headline, its next action', () => {
    const refused = sidecarError({
      ...errorLine('split-rejected'),
      controller: { phase: 'Rejected', message: 'Rejected: overlaps bob', nextAction: 'change the filter' },
    });
    assert.equal(refused.message, 'THE CONTROLLER REFUSED THE SPLIT: Rejected: overlaps bob');
    assert.equal(refused.suggestedAction, 'change the filter');
    const failed = sidecarError({
      ...errorLine('split-failed'),
      controller: { phase: 'Failed', message: 'Failed: no shadow' },
    });
    assert.equal(failed.message, 'THE CONTROLLER COULD NOT ACTIVATE THE SPLIT: Failed: no shadow');
    assert.match(
      failed.suggestedAction,
      /^THE CONTROLLER COULD NOT ACTIVATE THE SPLIT: THE QUEUE SPLITS VIEW/,
    );
  });

  test('every warning code, with and without a queue', () => {
    for (const code of Object.keys(SIDECAR_WARNING_WORDS) as WarningCode[]) {
      const plain = warningWords({ type: 'warning', time: TIME, code, message: 'x' });
      assert.deepEqual(english(plain.message), [], `${code}: ${plain.message}`);
      assert.deepEqual(english(plain.suggestedAction), [], `${code}: ${plain.suggestedAction}`);
      const queued = warningWords({ type: 'warning', time: TIME, code, message: 'x', queue: 'orders' });
      assert.match(queued.message, /^QUEUE orders: /, code);
      assert.deepEqual(english(queued.message, 'orders'), [], `${code}: ${queued.message}`);
    }
  });

  test('every progress stage, with and without its fields', () => {
    const stages: ProgressStage[] = [
      'resolving',
      'creating',
      'adopting',
      'waiting',
      'active',
      'consuming',
      'recovered',
      'stopping',
      'draining',
    ];
    for (const stage of stages) {
      const bare = progressWords({ type: 'progress', time: TIME, stage, message: 'x' });
      assert.deepEqual(english(bare), [], `${stage}: ${bare}`);
      const full = progressWords({
        type: 'progress',
        time: TIME,
        stage,
        message: 'x',
        split: SPLIT,
        phase: 'Preparing',
        queue: 'orders',
        lag: 3,
      });
      assert.deepEqual(english(full, 'qs-alice', 'orders', 'Preparing'), [], `${stage}: ${full}`);
    }
  });

  test('detached: drained or not, and each handback phase; the controller’s message stays its own', () => {
    const line = (drained: boolean, handback?: DetachedMessage['handback']): DetachedMessage => ({
      type: 'detached',
      time: TIME,
      split: SPLIT,
      drained,
      waitedMs: 10,
      message: 'x',
      ...(handback !== undefined ? { handback } : {}),
    });
    const texts = [
      detachedWords(line(false)),
      detachedWords(line(true)),
      detachedWords(line(true, { phase: 'HandedBack', message: 'done' })),
      detachedWords(line(true, { phase: 'Split', message: 'one route' })),
      detachedWords(line(true, { phase: 'HandingBack', message: 'rolling the workload back' })),
    ];
    for (const text of texts)
      assert.deepEqual(english(text, 'qs-alice', 'HandingBack', 'rolling the workload back'), [], text);
    assert.match(texts[4]!, /\(HandingBack\): rolling the workload back$/);
  });

  test('rejected: by request or by the limit, with each provider’s effect', () => {
    const line = (by: RejectedMessage['by']): RejectedMessage => ({
      type: 'rejected',
      time: TIME,
      queue: 'orders',
      messageId: '0-5',
      attempts: 8,
      by,
      message: 'x',
      counts: { delivered: 0, failed: 8, rejected: 1 },
    });
    for (const by of ['request', 'reject-after'] as const)
      for (const provider of [...PROVIDER_NAMES, undefined]) {
        const text = rejectedWords(line(by), provider);
        assert.deepEqual(english(text, 'orders', '0-5'), [], `${by} ${provider}: ${text}`);
      }
    assert.match(rejectedWords(line('request'), 'kafka'), /KAFKA HAS NO REJECT/);
  });
});

describe('the words put into the sidecar’s sentences', () => {
  test('flag hints become the bundle’s setting words', () => {
    assert.equal(
      inEditorTerms('Supply it locally with --env AMQP_URL=amqp://host:5672.'),
      'Supply it locally with THE queueSplit.env SETTING ("AMQP_URL": "amqp://host:5672").',
    );
    assert.equal(
      inEditorTerms('--env AMQP_URL is ignored.'),
      'THE queueSplit.env ENTRY "AMQP_URL" is ignored.',
    );
    assert.equal(
      inEditorTerms('Use --mode env or --transport broker; start the sidecar again.'),
      'Use env DELIVERY (THE queueSplit.delivery.mode SETTING) or THE BROKER TRANSPORT; START THE SPLIT AGAIN.',
    );
    assert.equal(inEditorTerms('See the sidecar log.'), 'See THE QUEUE SPLIT LOG.');
    assert.equal(
      inEditorTerms('Run with --help for the flags.'),
      'REPORT THIS WITH THE QUEUE SPLIT LOG (IT IS A BUG OF THE EXTENSION).',
    );
    assert.equal(
      inEditorTerms('--target: "x" is not a URL.'),
      'THE queueSplit.delivery.httpTarget SETTING: "x" is not a URL.',
    );
  });

  test('Copy as Patch: its comment lines come from the bundle; the command is kept', () => {
    const ref = { kind: 'Deployment' as const, name: 'orders-app', namespace: 'shop', context: 'dev' };
    const comments = clipboardPatch(ref, 'queues: []\n')
      .split('\n')
      .filter((line) => line.startsWith('# '));
    assert.equal(comments.length, 5);
    for (const line of [comments[0]!, comments[1]!, comments[2]!])
      assert.deepEqual(
        english(line, 'telepresence.io/queue-config', 'Deployment', 'orders-app', 'shop'),
        [],
        line,
      );
    assert.match(comments[3]!, /^# {3}kubectl --context dev --namespace shop patch deployment orders-app/);
    assert.match(comments[4]!, /^# \(OR SAVE THIS FILE AND: kubectl -n shop patch/);
  });
});
