// Every failure class in editor words with the buttons that fix it (docs/extension-errors.md):
// Kubernetes API failures as @kubernetes/client-node really raises them (a closed loopback port,
// a credential plugin that is not there, one that fails; statuses and TLS verdicts by their
// shape), and every sidecar error code, including errors the sidecar's own code raises, without
// a sidecar flag left in what the user reads.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import {
  classifyKubeFailure,
  credentialPlugin,
  developerRoleBindingCommand,
  firstStderrLine,
  forbiddenSubject,
  redactCredentials,
} from '../../../core/kubeFailure';
import type { ErrorCode, ErrorMessage } from '../../../core/sidecarProtocol';
import { PROVIDER_NAMES } from '../../../core/providers';
import { kubeProblem, type KubeProblem } from '../../../extension/kube/errors';
import { MACHINE_SETTINGS, openSettingCommand, type Fix } from '../../../extension/model/fixes';
import {
  FLAG_HOMES,
  inEditorTerms,
  namesFlags,
  RELAY_FLAGS,
  SIDECAR_ERROR_WORDS,
  SIDECAR_FLAGS,
  sidecarError,
} from '../../../extension/model/sidecarErrors';
import { notifiesOf, viewStateOf, WELCOME_STATES } from '../../../extension/model/viewState';
import { sidecarProvider } from '../../../sidecar/providers/registry';
import { checkHttpTarget } from '../../../sidecar/modePreflight';
import { buildOptions, type RawOptions } from '../../../sidecar/options';
import { kubeError, loadKube } from '../../../laptop/kube';
import { SidecarError } from '../../../laptop/errors';
import { localizedManifest } from '../../support/manifest';

const repoRoot = path.resolve(__dirname, '../../..');
const packageJson = localizedManifest<{
  contributes: {
    commands: { command: string }[];
    viewsWelcome: { view: string; when: string; contents: string }[];
  };
}>();
const commandIds = new Set(packageJson.contributes.commands.map((c) => c.command));
const titles = (fixes: readonly Fix[]) => fixes.map((f) => f.title);

let dir: string;
before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-errors-'));
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function kubeconfig(server: string, user: Record<string, unknown>): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server } }],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'dev', context: { cluster: 'c', user: 'u', namespace: 'team-a' } }],
      'current-context': 'dev',
    }),
  );
  return kc;
}

/** The error @kubernetes/client-node raises for one list call with `kc`. */
async function clientError(kc: KubeConfig): Promise<unknown> {
  try {
    await kc.makeApiClient(CustomObjectsApi).listNamespacedCustomObject({
      group: 'queuesplit.dev',
      version: 'v1alpha1',
      namespace: 'team-a',
      plural: 'queuesplits',
    });
  } catch (err) {
    return err;
  }
  throw new Error('the call succeeded');
}

const op = (exec?: Record<string, unknown>) => ({
  verb: 'list',
  resource: 'queuesplits.queuesplit.dev',
  namespace: 'team-a',
  context: 'dev',
  kubeconfigFile: '/home/me/.kube/config',
  ...(exec !== undefined ? { exec } : {}),
});

const apiError = (code: number, message?: string) => ({
  code,
  body: JSON.stringify({ kind: 'Status', message, code }),
});

describe('Kubernetes API failures in editor words', () => {
  test('unreachable: a closed loopback port says the API does not answer, Retry and Select Context', async () => {
    const err = await clientError(kubeconfig(`https://127.0.0.1:${await closedPort()}`, { token: 'x' }));
    const p = kubeProblem(err, op());
    assert.equal(p.kind, 'unreachable');
    assert.match(p.message, /context "dev" does not answer \(ECONNREFUSED\)/);
    assert.deepEqual(titles(p.fixes), ['Retry', 'Select Context…']);
    assert.equal(viewStateOf(p.kind), 'unreachable');
  });

  test('TLS: a CA that did not sign the server, a name mismatch, plain http: not trusted, Open Kubeconfig', () => {
    for (const [code, reason] of [
      ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', /not signed by the certificate authority in the kubeconfig/],
      ['SELF_SIGNED_CERT_IN_CHAIN', /not signed by the certificate authority/],
      ['ERR_TLS_CERT_ALTNAME_INVALID', /not issued for the address in the kubeconfig/],
      ['CERT_HAS_EXPIRED', /expired/],
      ['EPROTO', /does not speak TLS/],
    ] as const) {
      const err = Object.assign(new Error(`request to https://x failed, reason: ${code}`), {
        name: 'FetchError',
        type: 'system',
        code,
        errno: code,
      });
      const p = kubeProblem(err, op());
      assert.equal(p.kind, 'tls', code);
      assert.match(p.message, /context "dev" is not trusted/);
      assert.match(p.message, reason);
      assert.doesNotMatch(p.suggestedAction, /VPN/);
      assert.deepEqual(titles(p.fixes), ['Open Kubeconfig', 'Retry']);
      assert.equal(viewStateOf(p.kind), 'tlsUntrusted');
    }
  });

  test('401: an expired login, with the login command of a known plugin', () => {
    const plain = kubeProblem(apiError(401, 'Unauthorized'), op());
    assert.equal(plain.kind, 'unauthorized');
    assert.match(plain.message, /login to the cluster of context "dev" has expired or was refused \(401/);
    assert.deepEqual(titles(plain.fixes), ['Open Kubeconfig', 'Retry']);
    const aws = kubeProblem(
      apiError(401),
      op({ command: 'aws', args: ['eks', 'get-token', '--cluster-name', 'c', '--profile', 'dev-admin'] }),
    );
    assert.match(aws.suggestedAction, /aws sso login --profile dev-admin/);
    assert.deepEqual(titles(aws.fixes), ['Copy Login Command', 'Retry']);
    assert.deepEqual(aws.fixes[0], {
      kind: 'copy',
      copies: 'login',
      title: 'Copy Login Command',
      text: 'aws sso login --profile dev-admin',
      what: 'the login command',
    });
  });

  test('403: names the user, verb, resource and namespace, and offers the RoleBinding command', () => {
    const message =
      'queuesplits.queuesplit.dev is forbidden: User "alice" cannot list resource "queuesplits" in API group "queuesplit.dev" in the namespace "team-a"';
    const p = kubeProblem(apiError(403, message), op());
    assert.equal(p.kind, 'forbidden');
    assert.equal(
      p.message,
      'Your Kubernetes user alice (context "dev") may not list queuesplits.queuesplit.dev in namespace team-a.',
    );
    const command =
      'kubectl create rolebinding queuesplit-developer-alice --clusterrole=queuesplit-developer --user=alice -n team-a';
    assert.deepEqual(p.fixes[0], {
      kind: 'copy',
      copies: 'roleBinding',
      title: 'Copy RoleBinding Command',
      text: command,
      what: 'the RoleBinding command (for your cluster admin)',
    });
    assert.equal(p.fixes[1]?.title, 'Retry');
    const sa = forbiddenSubject('x is forbidden: User "system:serviceaccount:ci:deployer" cannot get');
    assert.deepEqual(sa, { kind: 'ServiceAccount', namespace: 'ci', name: 'deployer' });
    assert.equal(
      developerRoleBindingCommand('team-a', sa!),
      'kubectl create rolebinding queuesplit-developer-deployer --clusterrole=queuesplit-developer --serviceaccount=ci:deployer -n team-a',
    );
    assert.equal(
      developerRoleBindingCommand('team-a', { kind: 'User', name: 'Bob Smith' }),
      "kubectl create rolebinding queuesplit-developer-bob-smith --clusterrole=queuesplit-developer --user='Bob Smith' -n team-a",
    );
  });

  test('a credential plugin that is not on the PATH: named, with what installs it', async () => {
    // The plugin's own env decides where spawn looks: an empty PATH, so none is found here either.
    const exec = {
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      command: 'gke-gcloud-auth-plugin',
      env: [{ name: 'PATH', value: dir }],
      interactiveMode: 'Never',
    };
    const err = await clientError(kubeconfig(`https://127.0.0.1:${await closedPort()}`, { exec }));
    const p = kubeProblem(err, op(exec));
    assert.equal(p.kind, 'credential-plugin-missing');
    assert.match(
      p.message,
      /credential plugin gke-gcloud-auth-plugin, which is not installed: VS Code finds no gke-gcloud-auth-plugin on its PATH/,
    );
    assert.match(p.suggestedAction, /gcloud components install gke-gcloud-auth-plugin/);
    assert.doesNotMatch(`${p.message} ${p.suggestedAction}`, /VPN|does not answer/);
    assert.deepEqual(titles(p.fixes), ['Retry', 'Open Kubeconfig']);
    assert.equal(viewStateOf(p.kind), 'credentialPluginMissing');
    // Without the kubeconfig's exec at hand, spawn's error alone still names it.
    assert.equal(classifyKubeFailure(err).kind, 'exec-missing');
  });

  test('a credential plugin that fails: its stderr first line, tokens masked', async () => {
    const script = path.join(dir, 'failing-plugin.sh');
    fs.writeFileSync(
      script,
      '#!/bin/sh\necho "" >&2\necho "error: refresh failed for token=s3cr3t-t0ken-value (Bearer abcdef1234567890abcdef)" >&2\necho "second line" >&2\nexit 1\n',
      { mode: 0o755 },
    );
    const exec = {
      apiVersion: 'client.authentication.k8s.io/v1beta1',
      command: script,
      interactiveMode: 'Never',
    };
    const err = await clientError(kubeconfig(`https://127.0.0.1:${await closedPort()}`, { exec }));
    const p = kubeProblem(err, op(exec));
    assert.equal(p.kind, 'credential-plugin-failed');
    assert.equal(
      p.message,
      'The credential plugin failing-plugin.sh of context "dev" failed: error: refresh failed for token=*** (Bearer ***)',
    );
    assert.doesNotMatch(p.message, /s3cr3t|abcdef1234|second line/);
    assert.deepEqual(titles(p.fixes), ['Open Kubeconfig', 'Retry']);
    assert.equal(viewStateOf(p.kind), 'credentialPluginFailed');
    // A known plugin's failure offers its login.
    const gke = kubeProblem(
      new Error('F1206 cred.go:145] print credential failed with error: Failed to retrieve access token'),
      op({ command: '/usr/bin/gke-gcloud-auth-plugin' }),
    );
    assert.equal(gke.kind, 'credential-plugin-failed');
    assert.deepEqual(titles(gke.fixes), ['Copy Login Command', 'Retry']);
    // One that prints no credential JSON.
    const silent = kubeProblem(new SyntaxError('Unexpected token'), op({ command: 'kubelogin' }));
    assert.match(silent.message, /kubelogin of context "dev" failed: it printed no credential/);
  });

  test('redaction of what a plugin prints', () => {
    assert.equal(redactCredentials('got eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl ok'), 'got *** ok');
    assert.equal(redactCredentials('password: hunter22; next'), 'password: ***; next');
    assert.equal(redactCredentials('access_token="abc.def"'), 'access_token="***"');
    assert.equal(redactCredentials('see https://bob:pw@example.com/x'), 'see https://bob:***@example.com/x');
    assert.equal(redactCredentials('blob AKIAABCDEFGHIJKLMNOP1234567890abcdef end'), 'blob *** end');
    assert.equal(redactCredentials('plain words stay'), 'plain words stay');
    assert.equal(redactCredentials('x'.repeat(500)).length, 200);
    assert.equal(firstStderrLine('\n\n  first  \nsecond'), 'first');
  });

  test('known plugins and their logins', () => {
    assert.equal(credentialPlugin('/opt/bin/kubelogin').login, 'az login');
    assert.equal(
      credentialPlugin('kubectl', { args: ['oidc-login', 'get-token'] }).binary,
      'kubectl oidc-login',
    );
    assert.equal(
      credentialPlugin('aws', { env: [{ name: 'AWS_PROFILE', value: 'prod; rm -rf /' }] }).login,
      'aws sso login',
      'a profile that is not a plain name is left out of a command to paste',
    );
    assert.equal(credentialPlugin('my-sso-helper').installedBy, undefined);
  });

  test('the rest keep their kinds: crd missing, not found, conflict, owner policy', () => {
    const crd = kubeProblem(apiError(404, 'the server could not find the requested resource'), op());
    assert.equal(crd.kind, 'crd-missing');
    assert.deepEqual(titles(crd.fixes), ['Install Controller…', 'Select Context…']);
    assert.equal(
      kubeProblem(apiError(404, 'queuesplits "x" not found'), { ...op(), name: 'x' }).kind,
      'not-found',
    );
    assert.equal(kubeProblem(apiError(409, 'conflict'), op()).kind, 'conflict');
    const owner = kubeProblem(
      apiError(403, "ValidatingAdmissionPolicy 'queuesplit-owner' with binding denied request"),
      op(),
    );
    assert.deepEqual(titles(owner.fixes), ['Open Setting']);
  });

  test('every fix that runs a command runs one the extension contributes (or VS Code has)', () => {
    const problems: KubeProblem[] = [
      kubeProblem(apiError(401), op({ command: 'aws' })),
      kubeProblem(apiError(403, 'User "a" cannot list'), op()),
      kubeProblem(apiError(404, 'the server could not find the requested resource'), op()),
      kubeProblem(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }), op()),
    ];
    const sidecar = (Object.keys(SIDECAR_ERROR_WORDS) as ErrorCode[]).flatMap(
      (code) => sidecarError(line(code, 'm', 'a')).fixes,
    );
    for (const f of [...problems.flatMap((p) => p.fixes), ...sidecar]) {
      if (f.kind !== 'command') continue;
      assert.ok(
        commandIds.has(f.command) ||
          f.command.startsWith('workbench.') ||
          f.command === 'queueSplit.splits.focus',
        `${f.title} runs ${f.command}`,
      );
    }
  });
});

describe('settings buttons', () => {
  test('machine settings open in the Remote tab of a remote window (where the Settings editor lists them)', () => {
    const properties = (
      JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
        contributes: { configuration: { properties: Record<string, { scope?: string }> } };
      }
    ).contributes.configuration.properties;
    const machine = Object.entries(properties)
      .filter(([, p]) => p.scope === 'machine' || p.scope === 'machine-overridable')
      .map(([key]) => key);
    assert.deepEqual([...MACHINE_SETTINGS].sort(), machine.sort());
    assert.deepEqual(openSettingCommand('queueSplit.delivery.relayAmqpUrl', true), {
      command: 'workbench.action.openRemoteSettings',
      arg: { query: 'queueSplit.delivery.relayAmqpUrl' },
    });
    assert.deepEqual(openSettingCommand('queueSplit.delivery.relayAmqpUrl', false), {
      command: 'workbench.action.openSettings',
      arg: 'queueSplit.delivery.relayAmqpUrl',
    });
    assert.deepEqual(openSettingCommand('queueSplit.linger', true), {
      command: 'workbench.action.openSettings',
      arg: 'queueSplit.linger',
    });
  });
});

describe('the Queues Splits view: a welcome view per failure class', () => {
  test('every welcome state has its text and buttons in package.json, and only failures notify', () => {
    const welcome = packageJson.contributes.viewsWelcome;
    for (const state of WELCOME_STATES) {
      const entries = welcome.filter((w) => w.when === `queueSplit.state == ${state}`);
      assert.equal(entries.length, 1, `one welcome text for ${state}`);
      assert.match(entries[0]!.contents, /\]\(command:/, `${state} has a button`);
    }
    for (const w of welcome)
      for (const [, command] of w.contents.matchAll(/\(command:([\w.]+)/g))
        assert.ok(commandIds.has(command!) || command!.startsWith('workbench.'), `${w.when}: ${command}`);
    assert.equal(notifiesOf('unauthorized'), true);
    assert.equal(notifiesOf('noCluster'), false);
    assert.equal(notifiesOf('controllerMissing'), false);
    assert.equal(viewStateOf('config'), 'noCluster');
    assert.equal(viewStateOf('no-such-kind'), 'failed');
    assert.equal(viewStateOf(undefined), 'failed');
  });
});

function line(code: ErrorCode, message: string, suggestedAction: string, flag?: string): ErrorMessage {
  return {
    type: 'error',
    time: '2026-12-06T00:00:00Z',
    code,
    message,
    suggestedAction,
    ...(flag ? { flag } : {}),
  };
}

/** The codes `export type ErrorCode = ...` lists in core/sidecarProtocol.ts. */
function protocolCodes(): string[] {
  const text = fs.readFileSync(path.join(repoRoot, 'core', 'sidecarProtocol.ts'), 'utf8');
  const bare = text.replace(/\/\*\*[\s\S]*?\*\//g, '');
  const union = /export type ErrorCode =([\s\S]*?);/.exec(bare)?.[1] ?? '';
  return [...union.matchAll(/'([a-z-]+)'/g)].map((m) => m[1]!);
}

/** The codes the sidecar's sources raise (`new SidecarError('code'` and usageError). */
function raisedCodes(): Set<string> {
  const codes = new Set<string>(['usage', 'internal']);
  for (const root of ['sidecar', 'laptop']) {
    for (const file of fs.readdirSync(path.join(repoRoot, root), { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts')) continue;
      const text = fs.readFileSync(path.join(repoRoot, root, file), 'utf8');
      for (const m of text.matchAll(/SidecarError\(\s*'([a-z-]+)'/g)) codes.add(m[1]!);
      for (const m of text.matchAll(/\?\s*'([a-z-]+)'\s*:\s*'([a-z-]+)'/g)) {
        if (protocolCodes().includes(m[1]!)) codes.add(m[1]!);
        if (protocolCodes().includes(m[2]!)) codes.add(m[2]!);
      }
    }
  }
  return codes;
}

describe('sidecar error codes in editor words', () => {
  test('the mapping is total over the protocol’s codes, and those the sidecar raises', () => {
    const codes = protocolCodes();
    assert.ok(codes.length >= 20, `read the ErrorCode union: ${codes.join(', ')}`);
    assert.deepEqual(Object.keys(SIDECAR_ERROR_WORDS).sort(), [...codes].sort());
    for (const code of raisedCodes()) assert.ok(codes.includes(code), `the sidecar raises ${code}`);
  });

  test('every code: an action without sidecar flags, and its buttons', () => {
    for (const code of Object.keys(SIDECAR_ERROR_WORDS) as ErrorCode[]) {
      const shown = sidecarError(line(code, 'Something failed.', 'Pass --frobnicate to fix it.'));
      assert.ok(shown.suggestedAction.length > 20, code);
      assert.equal(namesFlags(shown.suggestedAction), false, `${code}: ${shown.suggestedAction}`);
      const expectsButton = code !== 'internal' && code !== 'agent-impostor' && code !== 'usage';
      if (expectsButton) assert.ok(shown.fixes.length > 0, `${code} has a button`);
    }
  });

  test('the list of sidecar flags is the sidecar’s, and relay flags are its providers’', () => {
    const main = fs.readFileSync(path.join(repoRoot, 'sidecar', 'main.ts'), 'utf8');
    const declared = new Set(
      [...main.matchAll(/(?:option\(|new Option\()\s*'(?:-\w, )?(--[a-z-]+)/g)].map((m) => m[1]!),
    );
    for (const provider of PROVIDER_NAMES) declared.add(sidecarProvider(provider).relay.flag);
    declared.add('--help');
    declared.add('--version');
    assert.deepEqual([...SIDECAR_FLAGS].sort(), [...declared].sort());
    for (const provider of PROVIDER_NAMES)
      assert.equal(RELAY_FLAGS[provider], sidecarProvider(provider).relay.flag, provider);
    for (const [flag, home] of Object.entries(FLAG_HOMES)) {
      assert.ok(SIDECAR_FLAGS.has(flag.split(' ')[0]!), flag);
      if (home.fix?.kind === 'setting')
        assert.ok(
          (
            JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {
              contributes: { configuration: { properties: Record<string, unknown> } };
            }
          ).contributes.configuration.properties[home.fix.setting] !== undefined,
          `${flag} → ${home.fix.setting} is a setting`,
        );
    }
  });

  test('hints in flags become settings; kubectl’s own flags stay', () => {
    assert.equal(
      inEditorTerms('Supply it locally with --env AMQP_URL=amqp://host:5672.'),
      'Supply it locally with the queueSplit.env setting ("AMQP_URL": "amqp://host:5672").',
    );
    assert.equal(
      inEditorTerms(
        'Forward the AMQP port and map the address: --map-address <in-cluster-host:port>=127.0.0.1:<local port> (or --env <url env>=<reachable URL>).',
      ),
      'Forward the AMQP port and map the address: the queueSplit.addressMap setting ("<in-cluster-host:port>": "127.0.0.1:<local port>") (or the queueSplit.env setting ("<url env>": "<reachable URL>")).',
    );
    assert.equal(
      inEditorTerms(
        'fix the queueSplit.delivery.httpTarget setting (sidecar: --target), then start the split again.',
      ),
      'fix the queueSplit.delivery.httpTarget setting, then start the split again.',
    );
    assert.equal(
      inEditorTerms('set working ones (the queueSplit.env setting; sidecar: --env), or not'),
      'set working ones (the queueSplit.env setting), or not',
    );
    assert.equal(
      inEditorTerms('--env AMQP_URL is ignored: with http delivery the queue-agent connects to the brokers.'),
      'the queueSplit.env entry "AMQP_URL" is ignored: with http delivery the queue-agent connects to the brokers.',
    );
    const kubectl = 'kubectl create rolebinding x --clusterrole=queuesplit-developer --user=alice -n a';
    assert.equal(inEditorTerms(kubectl), kubectl);
    assert.equal(namesFlags(kubectl), false);
    assert.equal(
      inEditorTerms('--target: "ftp:" is not http: or https:.'),
      'The queueSplit.delivery.httpTarget setting: "ftp:" is not http: or https:.',
    );
  });

  test('the forbidden code offers the RoleBinding command the sidecar names, or one for the user', () => {
    const given = sidecarError(
      line(
        'forbidden',
        'Your Kubernetes credentials (user alice, context "dev") may not, in namespace a: create queuesplits. Nothing was created.',
        'Ask your cluster admin to bind the queuesplit-developer ClusterRole to you in namespace a: kubectl create rolebinding queuesplit-developer-alice --clusterrole=queuesplit-developer --user=alice -n a',
      ),
    );
    assert.deepEqual(given.fixes[0], {
      kind: 'copy',
      copies: 'roleBinding',
      title: 'Copy RoleBinding Command',
      text: 'kubectl create rolebinding queuesplit-developer-alice --clusterrole=queuesplit-developer --user=alice -n a',
      what: 'the RoleBinding command (for your cluster admin)',
    });
    const built = sidecarError(line('forbidden', 'm', 'Ask your admin.'), { namespace: 'b', user: 'bob' });
    assert.equal(
      (built.fixes[0] as { text?: string }).text,
      'kubectl create rolebinding queuesplit-developer-bob --clusterrole=queuesplit-developer --user=bob -n b',
    );
  });

  test('a usage error names the setting and opens it; an internal flag is a bug of the extension', () => {
    const target = sidecarError(
      line(
        'usage',
        '--target: "x" is not a URL.',
        'Give the full URL, e.g. --target http://127.0.0.1:8080/.',
        '--target',
      ),
    );
    // The headline is the code's, in the user's language; the sidecar's sentence is the log's detail.
    assert.equal(
      target.message,
      'The sidecar did not accept the queueSplit.delivery.httpTarget setting. (The sidecar: The queueSplit.delivery.httpTarget setting: "x" is not a URL.)',
    );
    assert.match(target.detail, /^The queueSplit\.delivery\.httpTarget setting: "x" is not a URL\. /);
    assert.equal(
      target.suggestedAction,
      'Fix the queueSplit.delivery.httpTarget setting, then start the split again.',
    );
    assert.deepEqual(target.fixes, [
      { kind: 'setting', title: 'Open Setting', setting: 'queueSplit.delivery.httpTarget' },
    ]);
    const state = sidecarError(
      line('usage', '--state-file: cannot write', 'Pass another --state-file.', '--state-file'),
    );
    assert.equal(state.message, 'The sidecar refused an argument the extension passes to the sidecar.');
    assert.match(state.detail, /^An argument the extension passes to the sidecar: cannot write/);
    assert.match(state.suggestedAction, /bug of the extension/);
    const settingsEnv = sidecarError(
      line(
        'usage',
        '--settings: /tmp/x.settings.json: env.MY-VAR: Invalid key in record.',
        'Allowed keys: env …',
        '--settings',
      ),
    );
    assert.equal(
      settingsEnv.message,
      'The sidecar did not accept the queueSplit.env setting. (The sidecar: The queueSplit.env setting: env.MY-VAR: Invalid key in record.)',
    );
    assert.match(settingsEnv.detail, /^The queueSplit\.env setting: env\.MY-VAR: Invalid key in record\./);
    assert.deepEqual(titles(settingsEnv.fixes), ['Open Setting']);
  });
});

describe('what the real sidecar says, as the extension shows it', () => {
  const raw = (overrides: Partial<RawOptions>): RawOptions => ({
    workload: 'deployment/orders',
    mode: 'http',
    transport: 'agent',
    target: 'http://127.0.0.1:8080/',
    httpTimeout: 30,
    retryMaxDelay: 30000,
    leaseSeconds: 60,
    readyTimeout: 300,
    detachTimeout: 120,
    pollInterval: 1000,
    stopGrace: 10,
    ...overrides,
  });
  const caught = (f: () => unknown): ErrorMessage => {
    try {
      f();
    } catch (err) {
      assert.ok(err instanceof SidecarError, String(err));
      return line(err.code, err.message, err.suggestedAction, err.flag);
    }
    throw new Error('no error');
  };
  const noFlags = (m: ErrorMessage) => {
    const shown = sidecarError(m, { namespace: 'team-a', user: 'alice' });
    assert.equal(namesFlags(shown.message), false, shown.message);
    assert.equal(namesFlags(shown.suggestedAction), false, shown.suggestedAction);
    return shown;
  };

  test('option errors', () => {
    for (const overrides of [
      { target: 'ftp://x' },
      { target: 'not a url' },
      { mode: 'bogus' },
      { mode: 'relay' },
      { env: ['NOEQUALS'] },
      { relayTo: ['x'] },
      { rejectAfter: 'many' },
      { owner: ' ' },
      { workload: 'cronjob/x' },
    ] as Partial<RawOptions>[]) {
      const shown = noFlags(caught(() => buildOptions(raw(overrides))));
      assert.ok(shown.fixes.length > 0, `${JSON.stringify(overrides)}: ${shown.message}`);
    }
  });

  test('kube errors: kubeconfig, unreachable, statuses', async () => {
    noFlags(caught(() => loadKube({ kubeconfig: path.join(dir, 'missing') })));
    const kc = path.join(dir, 'kubeconfig');
    fs.writeFileSync(
      kc,
      stringify({ apiVersion: 'v1', kind: 'Config', clusters: [], users: [], contexts: [] }),
    );
    noFlags(caught(() => loadKube({ kubeconfig: kc, context: 'nope' })));
    for (const err of [
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      apiError(401),
      apiError(403, 'User "alice" cannot get resource "secrets"'),
      apiError(403, "ValidatingAdmissionPolicy 'queuesplit-owner' denied"),
      apiError(404, 'the server could not find the requested resource'),
      apiError(500, 'boom'),
    ]) {
      const e = kubeError(
        err,
        { verb: 'get', resource: 'queuesplits.queuesplit.dev', namespace: 'team-a' },
        'dev',
      );
      noFlags(line(e.code, e.message, e.suggestedAction, e.flag));
    }
    const forbidden = kubeError(
      apiError(403, 'User "alice" cannot get resource "secrets"'),
      { verb: 'get', resource: 'secrets', namespace: 'team-a' },
      'dev',
    );
    assert.equal(
      sidecarError(line(forbidden.code, forbidden.message, forbidden.suggestedAction)).fixes[0]?.title,
      'Copy RoleBinding Command',
    );
  });

  test('the http target preflight', async () => {
    try {
      await checkHttpTarget(new URL(`http://127.0.0.1:${await closedPort()}/`), 2_000);
      assert.fail('connected');
    } catch (err) {
      assert.ok(err instanceof SidecarError);
      const shown = noFlags(line(err.code, err.message, err.suggestedAction, err.flag));
      assert.deepEqual(shown.fixes, [
        { kind: 'setting', title: 'Open Setting', setting: 'queueSplit.delivery.httpTarget' },
      ]);
    }
  });

  test('the sidecar’s kube client: a credential plugin that is missing, one that fails', async () => {
    const write = (exec: Record<string, unknown>, port: number) => {
      const file = path.join(dir, `plugin-${port}.kubeconfig`);
      fs.writeFileSync(
        file,
        stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 'c', cluster: { server: `https://127.0.0.1:${port}` } }],
          users: [{ name: 'u', user: { exec } }],
          contexts: [{ name: 'dev', context: { cluster: 'c', user: 'u', namespace: 'team-a' } }],
          'current-context': 'dev',
        }),
      );
      return file;
    };
    const attempt = async (exec: Record<string, unknown>) => {
      const kube = loadKube({ kubeconfig: write(exec, await closedPort()) });
      const err = await clientError(kube.kc);
      const e = kubeError(
        err,
        { verb: 'list', resource: 'queuesplits.queuesplit.dev', namespace: 'team-a' },
        kube.context,
      );
      return line(e.code, e.message, e.suggestedAction, e.flag);
    };
    const base = { apiVersion: 'client.authentication.k8s.io/v1beta1', interactiveMode: 'Never' };
    const missing = await attempt({ ...base, command: 'kubelogin', env: [{ name: 'PATH', value: dir }] });
    assert.equal(missing.code, 'kube-config', missing.message);
    assert.match(missing.message, /credential plugin kubelogin, which is not installed/);
    assert.deepEqual(titles(noFlags(missing).fixes), ['Open Setting', 'Select Context…']);
    const script = path.join(dir, 'sidecar-failing-plugin.sh');
    fs.writeFileSync(script, '#!/bin/sh\necho "login expired; token=abcdef0123456789" >&2\nexit 1\n', {
      mode: 0o755,
    });
    const failing = await attempt({ ...base, command: script });
    assert.equal(failing.code, 'kube-unauthorized', failing.message);
    assert.match(
      failing.message,
      /sidecar-failing-plugin\.sh of context "dev" failed: login expired; token=\*\*\*/,
    );
    assert.deepEqual(titles(noFlags(failing).fixes), ['Open Kubeconfig', 'Select Context…']);
  });
});

describe('docs/extension-errors.md', () => {
  test('lists every sidecar error code and every welcome state, and its screenshots exist', () => {
    const doc = fs.readFileSync(path.join(repoRoot, 'docs', 'extension-errors.md'), 'utf8');
    for (const code of Object.keys(SIDECAR_ERROR_WORDS))
      assert.match(doc, new RegExp(`^\\| \`${code}\` \\|`, 'm'), code);
    for (const state of WELCOME_STATES) assert.ok(doc.includes(`\`${state}\``), state);
    for (const [, image] of doc.matchAll(/\]\((images\/extension\/[^)]+\.png)\)/g))
      assert.ok(fs.existsSync(path.join(repoRoot, 'docs', image!)), image);
    const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
    assert.ok(readme.includes('(docs/extension-errors.md)'), 'README links it');
  });
});
