// A sidecar `error` line (core/sidecarProtocol.ts ErrorMessage) in the extension's words: the
// sidecar speaks English to a terminal user, in flags (`--target`, `--env NAME=<value>`); the
// extension's user has settings and commands, in their language. Every error code has an entry
// here (the Record's type says so) with a headline, the suggested action and buttons in editor
// terms through l10n; a `flag`, when the line has one, points the button at that flag's setting.
// The sidecar's own sentence, its flags rewritten, is the detail the log keeps. Pure:
// sidecar/splitSessions.ts and sidecarLauncher.ts use it. docs/extension-errors.md lists what
// each code says and offers.
import * as l10n from '@vscode/l10n';
import { PROVIDER_NAMES, PROVIDERS } from '../../core/providers';
import type { ErrorCode, ErrorMessage } from '../../core/sidecarProtocol';
import { developerRoleBindingCommand, subjectOfUser } from '../../core/kubeFailure';
import { fix, uniqueFixes, type Fix } from './fixes';

/** Where a sidecar flag (or --settings key) is set in VS Code: a setting, or a command. */
export interface FlagHome {
  /** How the text names it: "the queueSplit.delivery.httpTarget setting". */
  words: string;
  fix?: Fix;
}

const setting = (key: string): FlagHome => ({ words: l10n.t('the {0} setting', key), fix: fix.setting(key) });

/** Each provider's relay flag (sidecar/providers/<provider>.ts `relay.flag`; a unit test checks them). */
export const RELAY_FLAGS: Readonly<Record<(typeof PROVIDER_NAMES)[number], string>> = {
  kafka: '--relay-kafka-brokers',
  rabbitmq: '--relay-amqp-url',
  sqs: '--relay-sqs-endpoint',
};

const LAUNCH_FIX = fix.startSplit();

/**
 * Every flag the sidecar may name, and where the extension's user changes it. Flags the
 * extension sets itself with no setting behind them (--split, --state-file, ...) are its own:
 * a refusal there is a bug of the extension, said so.
 */
export const FLAG_HOMES: Readonly<Record<string, FlagHome>> = {
  '--target': setting('queueSplit.delivery.httpTarget'),
  '--settings target': setting('queueSplit.delivery.httpTarget'),
  '--mode': setting('queueSplit.delivery.mode'),
  '--env': setting('queueSplit.env'),
  '--map-address': setting('queueSplit.addressMap'),
  '--settings addressMap': setting('queueSplit.addressMap'),
  '--relay-to': setting('queueSplit.delivery.relayTo'),
  '--reject-after': setting('queueSplit.delivery.rejectAfterAttempts'),
  '--kubeconfig': setting('queueSplit.kubeconfig'),
  '--context': {
    words: l10n.t('the context ("Queue Split: Select Context/Namespace…")'),
    fix: fix.selectContext(),
  },
  '--namespace': {
    words: l10n.t('the namespace ("Queue Split: Select Context/Namespace…")'),
    fix: fix.selectContext(),
  },
  '--owner': setting('queueSplit.owner'),
  '--lease-seconds': setting('queueSplit.leaseSeconds'),
  '--ready-timeout': setting('queueSplit.readyTimeoutSeconds'),
  '--workload': {
    words: l10n.t('the workload (the queueSplit.workload setting or .vscode/queue-split.json)'),
    fix: fix.setting('queueSplit.workload'),
  },
  '--queue': {
    words: l10n.t(
      'the queues of your split definition (.vscode/queue-split.json) or "Queue Split: Start Split…"',
    ),
    fix: LAUNCH_FIX,
  },
  '--filter': {
    words: l10n.t(
      'the filter of your split definition (.vscode/queue-split.json) or "Queue Split: Start Split…"',
    ),
    fix: LAUNCH_FIX,
  },
  '--tls-ca-file': {
    words: l10n.t("the broker's TLS settings in the workload's queue declaration"),
    fix: fix.declareQueues(),
  },
  ...Object.fromEntries(
    PROVIDER_NAMES.map((p) => [RELAY_FLAGS[p], setting(`queueSplit.delivery.${PROVIDERS[p].relay.setting}`)]),
  ),
};

/** The extension's own sidecar arguments: no setting behind them. */
const INTERNAL = l10n.t('an argument the extension passes to the sidecar');

/**
 * Every flag of the sidecar's command line (sidecar/main.ts; a unit test checks the list), so
 * that only they are rewritten: a kubectl command in a message keeps its own flags.
 */
export const SIDECAR_FLAGS: ReadonlySet<string> = new Set([
  '--agent-url',
  '--context',
  '--detach-timeout',
  '--env',
  '--env-out',
  '--filter',
  '--help',
  '--http-timeout',
  '--kubeconfig',
  '--lease-seconds',
  '--map-address',
  '--mode',
  '--namespace',
  '--owner',
  '--poll-interval',
  '--preflight-only',
  '--queue',
  '--ready-timeout',
  '--reject-after',
  '--relay-to',
  '--retry-max-delay',
  '--settings',
  '--split',
  '--state-file',
  '--stop-grace',
  '--target',
  '--tls-ca-file',
  '--transport',
  '--version',
  '--workload',
  ...Object.values(RELAY_FLAGS),
]);

/** Where `flag` (a flag, "--settings key", or anything the sidecar put there) is changed; undefined: internal. */
export function flagHome(flag: string | undefined): FlagHome | undefined {
  if (flag === undefined) return undefined;
  return FLAG_HOMES[flag] ?? FLAG_HOMES[flag.split(' ')[0] ?? ''];
}

const FLAG = /(?<![\w-])--[a-z][a-z0-9-]*/g;

/** True when `text` still speaks in sidecar flags (kubectl's in a command line do not count). */
export function namesFlags(text: string): boolean {
  return [...text.matchAll(FLAG)].some(([flag]) => SIDECAR_FLAGS.has(flag));
}

const KEY = String.raw`((?:<[^>]*>|[^\s<>=,;()])+)`;
const VALUE = String.raw`((?:<[^>]*>|[^\s<>,;()])+?)(?=[.,;)]*(?:\s|$))`;
const keyValueHint = (flag: string) => new RegExp(`${flag} ${KEY}=${VALUE}`, 'g');

/** `the queueSplit.env setting ("AMQP_URL": "amqp://…")`: a setting with the entry a hint names. */
const settingEntry = (key: string) => (_all: string, name: string, value: string) =>
  l10n.t('the {0} setting ({1})', key, `"${name}": "${value}"`);

/**
 * The sidecar's hints that have an exact editor equivalent: "(sidecar: --x)" asides go (the text
 * before them already names the setting), `--env NAME=<value>`-style hints become the setting
 * with that entry, "--mode env" the delivery, "start the sidecar again" the split. The words put
 * in are the extension's, through l10n (the sidecar's sentence around them stays as it wrote it).
 */
function rewriteHints(text: string): string {
  return (
    text
      // "(the queueSplit.env setting; sidecar: --env)" → "(the queueSplit.env setting)"
      .replace(/;\s*sidecar:[^)]*\)/g, ')')
      // "… setting (sidecar: --relay-to orders=<queue>)" → "… setting"
      .replace(/\s*\(sidecar:[^)]*\)/g, '')
      .replace(keyValueHint('--env'), settingEntry('queueSplit.env'))
      .replace(/--env ([A-Za-z_][A-Za-z0-9_]*)\b(?!=)/g, (_all, name: string) =>
        l10n.t('the {0} entry {1}', 'queueSplit.env', `"${name}"`),
      )
      .replace(keyValueHint('--map-address'), settingEntry('queueSplit.addressMap'))
      .replace(keyValueHint('--relay-to'), settingEntry('queueSplit.delivery.relayTo'))
      .replace(/--mode (http|env|relay)\b/g, (_all, mode: string) =>
        l10n.t('{0} delivery (the {1} setting)', mode, 'queueSplit.delivery.mode'),
      )
      .replace(/--transport broker\b/g, () => l10n.t('the broker transport'))
      .replace(/\b(start|run) the sidecar again\b/gi, () => l10n.t('start the split again'))
      .replace(/\bthe sidecar log\b/g, () => l10n.t('the Queue Split log'))
  );
}

/** Sidecar words → editor words: the hints above, then every other sidecar flag by its home. */
export function inEditorTerms(text: string): string {
  let out = rewriteHints(text).replace(/\bRun with --help[^.]*\.?/g, () =>
    l10n.t('Report this with the Queue Split log (it is a bug of the extension).'),
  );
  // "--target: "x" is not a URL." → "The queueSplit.delivery.httpTarget setting: "x" is not a URL."
  out = out.replace(/^(--[a-z][a-z0-9-]*(?: [a-zA-Z.]+)?): /, (all, flag: string) =>
    SIDECAR_FLAGS.has(flag.split(' ')[0] ?? '') ? `${capitalize(flagHome(flag)?.words ?? INTERNAL)}: ` : all,
  );
  return out.replace(FLAG, (flag) => (SIDECAR_FLAGS.has(flag) ? (flagHome(flag)?.words ?? INTERNAL) : flag));
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export interface SidecarErrorContext {
  /** The namespace of the split (for a RoleBinding command). */
  namespace?: string;
  /** The Kubernetes user the split is started as (queueSplit.owner or the SelfSubjectReview). */
  user?: string;
}

interface CodeWords {
  /** What went wrong, in the user's language (the sidecar's own sentence goes to the log). */
  headline: (m: ErrorMessage) => string;
  /** What to do, in the user's language (the sidecar's own suggestion goes to the log). */
  action: string | ((m: ErrorMessage) => string);
  fixes: (m: ErrorMessage, c: SidecarErrorContext) => (Fix | undefined)[];
}

const BUG = l10n.t('This is a bug of the extension: report it with the Queue Split log.');

/** Every sidecar error code in editor terms (typed Record: a new code does not compile without one). */
export const SIDECAR_ERROR_WORDS: Readonly<Record<ErrorCode, CodeWords>> = {
  usage: {
    headline: (m) =>
      l10n.t('The sidecar did not accept {0}.', flagHome(m.flag)?.words ?? l10n.t('a setting')),
    action: (m) =>
      l10n.t(
        'Fix {0}, then start the split again.',
        flagHome(m.flag)?.words ?? l10n.t('the setting it names'),
      ),
    fixes: (m) => [flagHome(m.flag)?.fix],
  },
  'kube-config': {
    headline: () => l10n.t('The kubeconfig cannot be used to reach the cluster.'),
    action: l10n.t(
      'Point the queueSplit.kubeconfig setting (or $KUBECONFIG) at a working kubeconfig, or pick another context, then start the split again.',
    ),
    fixes: () => [fix.setting('queueSplit.kubeconfig'), fix.selectContext()],
  },
  'kube-unreachable': {
    headline: () => l10n.t('The cluster does not answer.'),
    action: l10n.t(
      'Check that the cluster runs and that this machine reaches it (VPN, proxy), then start the split again.',
    ),
    fixes: () => [fix.selectContext()],
  },
  'kube-unauthorized': {
    headline: () => l10n.t('The cluster refused your login.'),
    action: l10n.t(
      'Your login to the cluster expired or was refused: log in again (or get a fresh kubeconfig), then start the split again.',
    ),
    fixes: () => [fix.openKubeconfigFile(), fix.selectContext()],
  },
  forbidden: {
    headline: () => l10n.t('Your Kubernetes credentials may not do what the split needs in this namespace.'),
    action: l10n.t(
      'Ask your cluster admin to bind the queuesplit-developer ClusterRole to you in this namespace, or pick a namespace where you have it.',
    ),
    fixes: (m, c) => [roleBindingFix(m, c), fix.selectContext()],
  },
  'crd-missing': {
    headline: () =>
      l10n.t('The Queue Split controller is not installed in this cluster (no QueueSplit CRD).'),
    action: l10n.t(
      'Run "Queue Split: Install Controller into Cluster…" (needs cluster-admin), or pick the right context.',
    ),
    fixes: () => [fix.installController(), fix.selectContext()],
  },
  'workload-not-found': {
    headline: () => l10n.t('The workload was not found in this namespace.'),
    action: l10n.t(
      'Check the workload (the queueSplit.workload setting or .vscode/queue-split.json) and the namespace.',
    ),
    fixes: () => [fix.setting('queueSplit.workload'), fix.selectContext()],
  },
  'declaration-invalid': {
    headline: () => l10n.t("The workload's queue declaration is invalid, or does not declare the queue."),
    action: l10n.t(
      "Fix the workload's queue declaration (its telepresence.io/queue-config annotation), or pick a queue it declares.",
    ),
    fixes: () => [fix.declareQueues()],
  },
  'config-missing': {
    headline: () => l10n.t('An env var the broker connection needs has no value on this machine.'),
    action: l10n.t(
      'Give the env var a value for this machine in the queueSplit.env setting, then start the split again.',
    ),
    fixes: (m) => [flagHome(m.flag)?.fix ?? fix.setting('queueSplit.env')],
  },
  'split-conflict': {
    headline: () => l10n.t('An existing split is in the way of this one.'),
    action: l10n.t('Stop the split that is in the way (the Queue Splits view), then start again.'),
    fixes: () => [fix.showView()],
  },
  'split-rejected': {
    // The controller's reason and next action are its own words (written into the cluster).
    headline: (m) =>
      m.controller !== undefined
        ? l10n.t('The controller refused the split: {0}', m.controller.message)
        : l10n.t('The controller refused the split.'),
    action: (m) =>
      m.controller?.nextAction ??
      l10n.t(
        'The controller refused the split for the reason given: change what it names, then start again.',
      ),
    fixes: () => [fix.showView()],
  },
  'split-failed': {
    headline: (m) =>
      m.controller !== undefined
        ? l10n.t('The controller could not activate the split: {0}', m.controller.message)
        : l10n.t('The controller could not activate the split.'),
    action: (m) =>
      m.controller?.nextAction ??
      l10n.t(
        'The controller could not activate the split: the Queue Splits view and the log say why. Nothing of yours is lost.',
      ),
    fixes: () => [fix.showView()],
  },
  'split-timeout': {
    headline: () => l10n.t('The split did not become active in time.'),
    action: l10n.t(
      'The split did not become active in time: look at it in the Queue Splits view, or raise the queueSplit.readyTimeoutSeconds setting, then start the split again.',
    ),
    fixes: () => [fix.setting('queueSplit.readyTimeoutSeconds'), fix.showView()],
  },
  'split-deleted': {
    headline: () => l10n.t('Your split was deleted while it ran.'),
    action: l10n.t(
      'Somebody deleted your split (or its lease ran out): start it again if you still need it.',
    ),
    fixes: () => [fix.startSplit()],
  },
  'target-unreachable': {
    headline: () => l10n.t('The service you debug does not accept connections at its http target.'),
    action: l10n.t(
      'Start the service you debug so it listens there, or fix the queueSplit.delivery.httpTarget setting, then start the split again.',
    ),
    fixes: (m) => [flagHome(m.flag)?.fix ?? fix.setting('queueSplit.delivery.httpTarget')],
  },
  'broker-unreachable': {
    headline: (m) =>
      relayFlag(m)
        ? l10n.t('Your local broker ({0}) does not answer.', flagHome(m.flag)?.words ?? '')
        : l10n.t('This machine does not reach the broker.'),
    action: (m) =>
      relayFlag(m)
        ? l10n.t(
            'Start your local broker, or fix {0}, then start the split again.',
            flagHome(m.flag)?.words ?? '',
          )
        : l10n.t(
            'This machine does not reach the broker: forward its port and map the address (the queueSplit.addressMap setting), or choose http or relay delivery (the queueSplit.delivery.mode setting), then start the split again.',
          ),
    fixes: (m) => [
      flagHome(m.flag)?.fix ?? fix.setting('queueSplit.addressMap'),
      fix.setting('queueSplit.delivery.mode', l10n.t('Change Delivery Mode')),
    ],
  },
  'broker-auth': {
    headline: (m) =>
      relayFlag(m)
        ? l10n.t('Your local broker ({0}) refused the login.', flagHome(m.flag)?.words ?? '')
        : l10n.t('The broker refused the login.'),
    action: (m) =>
      relayFlag(m)
        ? l10n.t(
            'Fix the user in {0} and its password with "Queue Split: Set Broker Password…", then start the split again.',
            flagHome(m.flag)?.words ?? '',
          )
        : l10n.t(
            'The broker refused the login: set working credentials for this machine (the queueSplit.env setting), or choose http or relay delivery, then start the split again.',
          ),
    fixes: (m) => [flagHome(m.flag)?.fix ?? fix.setting('queueSplit.env')],
  },
  'shadow-missing': {
    headline: () => l10n.t('The split’s session queue is missing on the broker.'),
    action: l10n.t('The split’s session queue is gone from the broker: stop the split and start it again.'),
    fixes: () => [fix.showView()],
  },
  'relay-destination-missing': {
    headline: () => l10n.t('The relay destination does not exist on your local broker.'),
    action: l10n.t(
      'Create the destination on your local broker (or start your service once so it does), or choose another in the queueSplit.delivery.relayTo setting, then start the split again.',
    ),
    fixes: (m) => [flagHome(m.flag)?.fix ?? fix.setting('queueSplit.delivery.relayTo')],
  },
  'session-refused': {
    headline: () => l10n.t('The queue-agent refused this window’s session.'),
    action: l10n.t(
      'Another window (or machine) receives this split’s messages, or its secret is not this window’s: stop the split and start it again here.',
    ),
    fixes: () => [fix.showView()],
  },
  'agent-unreachable': {
    headline: () => l10n.t('The queue-agent could not be reached.'),
    action: l10n.t(
      'The queue-agent pod could not be reached through the cluster: check it is running (the Queue Splits view), then start the split again.',
    ),
    fixes: () => [fix.showView()],
  },
  'agent-impostor': {
    headline: () => l10n.t('What answered as the queue-agent is not the queue-agent.'),
    action: l10n.t(
      'Nothing was sent to it. Tell your cluster admin: a pod with the queue-agent’s labels in this namespace is not the queue-agent.',
    ),
    fixes: () => [],
  },
  internal: {
    headline: () => l10n.t('The sidecar failed.'),
    action: BUG,
    fixes: () => [],
  },
};

/** The line is about the local relay broker (its flag is a provider's relay flag). */
function relayFlag(m: ErrorMessage): boolean {
  return Object.values(RELAY_FLAGS).includes(m.flag ?? '');
}

function roleBindingFix(m: ErrorMessage, c: SidecarErrorContext): Fix | undefined {
  // The sidecar's own action may carry the command already (its RBAC preflight).
  const given = /kubectl create rolebinding [^\n)]*/.exec(m.suggestedAction)?.[0];
  if (given !== undefined) return fix.copyRoleBinding(given.replace(/[.\s]+$/, ''));
  if (c.namespace === undefined || c.user === undefined || c.user === '') return undefined;
  return fix.copyRoleBinding(developerRoleBindingCommand(c.namespace, subjectOfUser(c.user)));
}

/**
 * The --settings file is written by the extension from the user's settings: a refused key there
 * is that setting's (`<file>: env.MY-VAR: Invalid key` → queueSplit.env), not the file's.
 */
function settingsFileFlag(m: ErrorMessage): { flag?: string } {
  if (m.flag !== '--settings') return {};
  const key = /: (env|addressMap|target|relay\.to|relay\.[A-Za-z]+)\b[^:]*: /.exec(m.message)?.[1];
  if (key === undefined) return {};
  if (key === 'env') return { flag: '--env' };
  if (key === 'addressMap') return { flag: '--map-address' };
  if (key === 'target') return { flag: '--target' };
  if (key === 'relay.to') return { flag: '--relay-to' };
  const provider = PROVIDER_NAMES.find((p) => `relay.${PROVIDERS[p].relay.settingsKey}` === key);
  return provider !== undefined ? { flag: RELAY_FLAGS[provider] } : {};
}

export interface EditorError {
  /** The headline, in the user's language, then the sidecar's own sentence (its specifics). */
  message: string;
  suggestedAction: string;
  /** The sidecar's own sentence, in editor terms (settings, not flags): for the log. */
  detail: string;
  fixes: Fix[];
}

/**
 * A sidecar error line → what the extension shows: the code's headline and action in the user's
 * language, and its buttons; the sidecar's English sentence, its flags turned into settings,
 * follows the headline (it names what failed) and, with its own suggestion, is the log's detail.
 */
export function sidecarError(line: ErrorMessage, context: SidecarErrorContext = {}): EditorError {
  const m = { ...line, ...settingsFileFlag(line) };
  const words = SIDECAR_ERROR_WORDS[m.code] ?? SIDECAR_ERROR_WORDS.internal;
  const internalFlag = m.flag !== undefined && flagHome(m.flag) === undefined;
  const detail = inEditorTerms(
    // "--settings: /…/x.settings.json: env.A-B: …" names the extension's file: say the setting.
    m.flag !== line.flag
      ? m.message.replace(/^--settings: .*?: (?=(env|addressMap|target|relay)\b)/, `${m.flag}: `)
      : m.message,
  );
  const action = typeof words.action === 'string' ? words.action : words.action(m);
  // The headline is the extension's; the specifics (which workload, host, verb and resource) are
  // the sidecar's data, so its sentence follows, marked as its own (in English).
  // (A refusal's headline carries the controller's words already.)
  const specifics =
    m.controller === undefined && detail.trim() !== ''
      ? ` ${l10n.t('(The sidecar: {0})', detail.trim())}`
      : '';
  return {
    message: internalFlag ? l10n.t('The sidecar refused {0}.', INTERNAL) : `${words.headline(m)}${specifics}`,
    suggestedAction: internalFlag ? BUG : action,
    detail: `${detail}${m.suggestedAction !== '' ? ` ${inEditorTerms(m.suggestedAction)}` : ''}`,
    fixes: uniqueFixes(words.fixes(m, context)),
  };
}
