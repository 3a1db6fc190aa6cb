// The sidecar command line the extension builds, checked against the real sidecar CLI: every
// flag must parse (the run then fails at the kubeconfig, not at the flags).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, test } from 'node:test';
import {
  preflightArgs,
  safeFileName,
  secretSettingsContent,
  settingsFileContent,
  sidecarArgs,
  sidecarKubeconfig,
  type SidecarLaunch,
} from '../../../extension/model/sidecarArgs';
import { parseSidecarLine, SECRET_SETTINGS_ENV } from '../../../core/sidecarProtocol';
import { sidecarBundle } from '../../support/sidecarBundle';

const repoRoot = path.resolve(__dirname, '../../..');
// Built once for the file (test/support/sidecarBundle.ts): each run below starts in a fraction of
// the time tsx takes to compile the sidecar's sources.
let bundle = '';
before(async () => {
  bundle = await sidecarBundle();
});

function launch(overrides: Partial<SidecarLaunch> = {}): SidecarLaunch {
  return {
    splitName: 'qs-split-alice-orders-abc',
    target: { context: 'dev', namespace: 'team-a' },
    kubeconfig: '/nonexistent/kubeconfig',
    mode: 'http',
    httpTarget: 'http://127.0.0.1:8080/',
    leaseSeconds: 60,
    readyTimeoutSeconds: 300,
    detachTimeoutSeconds: 120,
    stateFile: '/tmp/state.json',
    ...overrides,
  };
}

/** The real sidecar got past its flags: it stops at the (missing) kubeconfig, not at usage. */
function assertFlagsAccepted(args: string[], env: Record<string, string> = {}): void {
  const { code, lines } = runSidecar(args, env);
  const error = lines.find((m) => m?.type === 'error');
  assert.ok(error !== undefined && error.type === 'error', `no error line (exit ${code})`);
  assert.notEqual(error.code, 'usage', `the sidecar rejected a flag: ${error.message}`);
  assert.equal(error.code, 'kube-config');
}

function inTempDir(body: (dir: string) => void): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-args-'));
  try {
    body(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function runSidecar(
  args: string[],
  env: Record<string, string> = {},
): { code: number | null; lines: ReturnType<typeof parseSidecarLine>[] } {
  const result = spawnSync(process.execPath, [bundle, ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return {
    code: result.status,
    lines: result.stdout
      .split('\n')
      .map(parseSidecarLine)
      .filter((m) => m !== undefined),
  };
}

describe('sidecar command line', () => {
  test('adopts the split by name, in the selected context and namespace', () => {
    const args = sidecarArgs(launch());
    const flag = (name: string) => args[args.indexOf(name) + 1];
    assert.equal(flag('--split'), 'qs-split-alice-orders-abc');
    assert.equal(flag('--context'), 'dev');
    assert.equal(flag('--namespace'), 'team-a');
    assert.equal(flag('--target'), 'http://127.0.0.1:8080/');
    assert.ok(!args.includes('--workload'), '--split and --workload exclude each other');
  });

  test('credentials go on no command line and in no file: env overrides and relay brokers go in the environment', () => {
    const secret = secretSettingsContent({
      env: { AMQP_URL: 'amqp://u:secret@host' },
      relayBrokers: { kafka: '127.0.0.1:9092', rabbitmq: 'amqp://guest:pw@127.0.0.1' },
    });
    assert.deepEqual(JSON.parse(secret!), {
      env: { AMQP_URL: 'amqp://u:secret@host' },
      relay: { kafkaBrokers: '127.0.0.1:9092', amqpUrl: 'amqp://guest:pw@127.0.0.1' },
    });
    assert.equal(secretSettingsContent({ env: {} }), undefined);
    // The settings file keeps what holds no credential.
    const file = settingsFileContent({
      addressMap: { 'kafka.svc:9092': '127.0.0.1:19092' },
      relayTo: { orders: 'orders-local' },
    });
    assert.deepEqual(JSON.parse(file!), {
      addressMap: { 'kafka.svc:9092': '127.0.0.1:19092' },
      relay: { to: { orders: 'orders-local' } },
    });
    assert.equal(settingsFileContent({ addressMap: {} }), undefined);
    assert.equal(settingsFileContent({ addressMap: {}, relayTo: {} }), undefined);
    const args = sidecarArgs(launch({ mode: 'relay', settingsFile: '/x.json' })).join(' ');
    assert.ok(!args.includes('secret') && !args.includes('pw') && !args.includes('127.0.0.1:9092'));
  });

  test(`the sidecar takes relay brokers from ${SECRET_SETTINGS_ENV} over the settings file`, () => {
    inTempDir((dir) => {
      const settingsFile = path.join(dir, 'settings.json');
      fs.writeFileSync(settingsFile, settingsFileContent({ addressMap: {}, relayTo: { orders: 'x' } })!);
      const args = sidecarArgs(launch({ mode: 'relay', settingsFile, stateFile: path.join(dir, 's.json') }));
      // Without a relay broker the relay mode is refused at its flags; with one in the env it is not.
      const refused = runSidecar(args).lines.find((m) => m?.type === 'error');
      assert.ok(refused?.type === 'error' && refused.code === 'usage', 'relay without a broker is refused');
      assertFlagsAccepted(args, {
        [SECRET_SETTINGS_ENV]: secretSettingsContent({
          env: {},
          relayBrokers: { rabbitmq: 'amqp://guest:pw-123@127.0.0.1:5672' },
        })!,
      });
    });
  });

  test(`a malformed ${SECRET_SETTINGS_ENV} is refused by name, its value never echoed`, () => {
    const args = sidecarArgs(launch());
    for (const value of ['{"env": {"AMQP_URL": 42}}', 'not-json s3cret-value', '{"addressMap": {}}']) {
      const { code, lines } = runSidecar(args, { [SECRET_SETTINGS_ENV]: value });
      const error = lines.find((m) => m?.type === 'error');
      assert.ok(error?.type === 'error', `no error line (exit ${code})`);
      assert.equal(error.code, 'usage');
      assert.match(error.message, new RegExp(SECRET_SETTINGS_ENV));
      assert.ok(!JSON.stringify(lines).includes('s3cret'), 'the value is not echoed');
    }
  });

  test('file names are safe for any context name', () => {
    assert.equal(
      safeFileName('arn:aws:eks:eu-west-1:1234:cluster/prod'),
      'arn_aws_eks_eu-west-1_1234_cluster_prod',
    );
  });

  for (const mode of ['http', 'env', 'relay'] as const) {
    test(`the real sidecar CLI accepts the ${mode} command line`, () => {
      inTempDir((dir) => {
        const settingsFile = path.join(dir, 'settings.json');
        fs.writeFileSync(
          settingsFile,
          settingsFileContent({
            addressMap: { 'kafka.svc:9092': '127.0.0.1:19092' },
            relayTo: { orders: 'orders-local' },
          })!,
        );
        const credentials = secretSettingsContent({
          env: { AMQP_URL: 'amqp://127.0.0.1' },
          relayBrokers: { kafka: '127.0.0.1:9092', rabbitmq: 'amqp://127.0.0.1' },
        })!;
        const args = sidecarArgs(
          launch({
            mode,
            settingsFile,
            stateFile: path.join(dir, 'state.json'),
            // --reject-after in http and relay; the sidecar refuses it in env mode, so it is left out.
            rejectAfterAttempts: 8,
            ...(mode === 'env' ? { envOut: path.join(dir, 'x.env') } : {}),
          }),
        );
        assertFlagsAccepted(args, { [SECRET_SETTINGS_ENV]: credentials });
      });
    });
  }

  {
    // One mode is enough: preflightArgs shares the mode flags with sidecarArgs (tested above).
    const mode = 'relay';
    test('the real sidecar CLI accepts the relay preflight command line (workload, queues, owner; no split)', () => {
      inTempDir((dir) => {
        const settingsFile = path.join(dir, 'settings.json');
        fs.writeFileSync(settingsFile, settingsFileContent({ addressMap: {}, relayTo: { orders: 'o' } })!);
        const credentials = secretSettingsContent({ env: {}, relayBrokers: { kafka: '127.0.0.1:9092' } })!;
        const args = preflightArgs({
          workload: { kind: 'StatefulSet', name: 'billing' },
          queues: ['orders', 'invoices'],
          owner: 'alice',
          target: { context: 'dev', namespace: 'team-a' },
          kubeconfig: '/nonexistent/kubeconfig',
          mode,
          settingsFile,
        });
        const flag = (name: string) => args[args.indexOf(name) + 1];
        assert.equal(flag('--workload'), 'statefulset/billing');
        assert.equal(flag('--queue'), 'orders,invoices');
        assert.equal(flag('--owner'), 'alice');
        assert.ok(args.includes('--preflight-only') && !args.includes('--split'));
        assertFlagsAccepted(args, { [SECRET_SETTINGS_ENV]: credentials });
      });
    });
  }
});

describe('the kubeconfig the sidecar is given', () => {
  test('one file as --kubeconfig; a list (merged as kubectl does) as $KUBECONFIG', () => {
    assert.deepEqual(sidecarKubeconfig({ files: ['/k/one'], explicit: true, origin: 'setting' }, ':'), {
      kubeconfig: '/k/one',
      env: {},
    });
    assert.deepEqual(
      sidecarKubeconfig({ files: ['/k/a', '/k/b'], explicit: false, origin: 'setting' }, ':'),
      {
        env: { KUBECONFIG: '/k/a:/k/b' },
      },
    );
    assert.deepEqual(
      sidecarKubeconfig({ files: ['/ext/config'], explicit: false, origin: 'kubernetes-extension' }, ':'),
      { env: { KUBECONFIG: '/ext/config' } },
    );
    assert.deepEqual(sidecarKubeconfig(undefined), { env: {} });
  });

  test('the real sidecar merges a $KUBECONFIG list as kubectl does (first current-context)', () => {
    inTempDir((dir) => {
      const write = (name: string, server: string, current: string) => {
        const file = path.join(dir, name);
        fs.writeFileSync(
          file,
          JSON.stringify({
            clusters: [{ name: 'shared', cluster: { server } }],
            users: [{ name: 'shared', user: { token: 't' } }],
            contexts: [{ name: current, context: { cluster: 'shared', user: 'shared' } }],
            'current-context': current,
          }),
        );
        return file;
      };
      // Port 1 on loopback refuses at once: the sidecar gets past the kubeconfig to the API call.
      const a = write('a', 'https://127.0.0.1:1', 'ctx-a');
      const b = write('b', 'https://127.0.0.1:2', 'ctx-b');
      const { lines } = runSidecar(
        [
          ...['--preflight-only', '--workload', 'deployment/x', '--owner', 'alice'],
          ...['--mode', 'http', '--target', 'http://127.0.0.1:9/'],
        ],
        // A missing file is skipped; both define cluster "shared" (client-node alone would throw).
        { KUBECONFIG: [path.join(dir, 'missing'), a, b].join(path.delimiter) },
      );
      const error = lines.find((m) => m?.type === 'error');
      assert.ok(error !== undefined && error.type === 'error', 'an error line');
      assert.equal(error.code, 'kube-unreachable', error.message);
      assert.match(error.message, /context "ctx-a"/);
    });
  });
});
