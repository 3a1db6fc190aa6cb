// e2e-host: first (it checks what activation loads into a fresh extension host)
// The extension, installed from this checkout's dist/queue-split.vsix (`code-server
// --install-extension`, test/e2e/harness/installedExtension.ts), inside a real VS Code extension
// host: it is found, activates fast on its own events only, registers every contributed command,
// and its debug configuration provider guards launches — all through the real `vscode` API.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { describe, it } from 'mocha';
import * as vscode from 'vscode';
import type { QueueSplitApi } from '../../../extension/extension';

const extensionId = 'queuesplit.queue-split';
// This bundle lives in <repo>/dist-test/e2e-host/.
const repoRoot = path.resolve(__dirname, '..', '..');

interface PackageJson {
  activationEvents: string[];
  icon: string;
  contributes: {
    commands: { command: string }[];
    viewsContainers: { activitybar: { icon: string }[] };
    walkthroughs: { steps: { media: { markdown: string } }[] }[];
    jsonValidation: { url: string }[];
  };
}

type ExtensionApi = QueueSplitApi;

function extension(): vscode.Extension<ExtensionApi> {
  const ext = vscode.extensions.getExtension<ExtensionApi>(extensionId);
  assert.ok(
    ext,
    `${extensionId} is not installed: the workbench's extensions folder should hold dist/queue-split.vsix`,
  );
  return ext;
}

const manifest = () => extension().packageJSON as PackageJson;

describe('Queue Split extension in the extension host', () => {
  it('is the .vsix of this checkout, installed (not the checkout loaded as a development extension)', () => {
    const installed = extension().extensionPath;
    assert.notEqual(installed, repoRoot);
    assert.match(installed, /queuesplit\.queue-split-[0-9.]+$/, `installed in ${installed}`);
    assert.equal(
      (extension().packageJSON as { version: string }).version,
      (JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string })
        .version,
    );
    // This build's bundles, byte for byte.
    for (const bundle of ['extension.js', 'sidecar.js'])
      assert.ok(
        fs
          .readFileSync(path.join(installed, 'dist', bundle))
          .equals(fs.readFileSync(path.join(repoRoot, 'dist', bundle))),
        `the installed dist/${bundle} is not this checkout's`,
      );
  });

  it('activates only on its own events (never "*")', () => {
    const events = manifest().activationEvents;
    assert.ok(!events.includes('*'), `activationEvents: ${JSON.stringify(events)}`);
    assert.deepEqual(
      events,
      ['onDebug'],
      'views and commands are implied; onDebug is for the "*" debug provider',
    );
  });

  it('activates', async () => {
    const ext = extension();
    const wasActive = ext.isActive;
    const started = performance.now();
    const api = await ext.activate();
    const ms = performance.now() - started;
    assert.equal(ext.isActive, true);
    console.log(
      wasActive
        ? `activation: already active before the test asked; activate() itself took ${api.activationMs.toFixed(1)} ms`
        : `activation: ${ms.toFixed(1)} ms (load dist/extension.js + activate()); activate() itself ${api.activationMs.toFixed(1)} ms`,
    );
    assert.ok(api.activationMs < 200, `activate() took ${api.activationMs} ms`);
  });

  it('loads its heavy bundles (Kubernetes client, kafkajs, amqplib) only when first needed', async () => {
    const api = await extension().activate();
    const dist = path.join(extension().extensionPath, 'dist');
    const loaded = () => Object.keys(require.cache).filter((f) => f.startsWith(dist));
    const activationBundle = fs.statSync(path.join(dist, 'extension.js')).size;
    console.log(`activation bundle dist/extension.js: ${(activationBundle / 1024).toFixed(0)} KiB`);
    assert.ok(activationBundle < 300 * 1024, `dist/extension.js is ${activationBundle} bytes`);
    for (const lazy of [
      'extension-kube.js',
      'extension-publish.js',
      'extension-manifests.js',
      'extension-annotation.js',
    ]) {
      assert.ok(fs.existsSync(path.join(dist, lazy)), `dist/${lazy} is built`);
      assert.ok(
        !loaded().includes(path.join(dist, lazy)),
        `activation loaded dist/${lazy}: ${loaded().join(', ')}`,
      );
    }
    // First use: the Kubernetes bundle loads from beside dist/extension.js and works.
    await api.services.cluster.kube();
    assert.ok(loaded().includes(path.join(dist, 'extension-kube.js')), loaded().join(', '));
  });

  it('registers every command it contributes', async () => {
    const commands = new Set(await vscode.commands.getCommands(true));
    const missing = manifest()
      .contributes.commands.map((c) => c.command)
      .filter((c) => !commands.has(c));
    assert.deepEqual(missing, []);
  });

  it('ships every file its manifest names (icons, walkthrough, schemas)', () => {
    const m = manifest();
    const files = [
      m.icon,
      ...m.contributes.viewsContainers.activitybar.map((c) => c.icon),
      ...m.contributes.walkthroughs.flatMap((w) => w.steps.map((s) => s.media.markdown)),
      ...m.contributes.jsonValidation.map((j) => j.url),
    ];
    // In the installed copy: the .vsix carries them (.vscodeignore lets them through).
    const installed = extension().extensionPath;
    for (const file of files)
      assert.ok(fs.existsSync(path.join(installed, file)), `${file} is not in the .vsix`);
  });

  it('runs queueSplit.showLogs', async () => {
    await vscode.commands.executeCommand('queueSplit.showLogs');
  });

  it('aborts a launch whose queueSplit block is invalid, before any debugger starts', async () => {
    const started: string[] = [];
    const listener = vscode.debug.onDidStartDebugSession((s) => started.push(s.name));
    try {
      const ok = await vscode.debug.startDebugging(undefined, {
        type: 'node',
        request: 'launch',
        name: 'invalid queueSplit block',
        program: path.join(repoRoot, 'does-not-matter.js'),
        queueSplit: { delivery: 'carrier-pigeon', workload: 'job/x' },
      });
      assert.equal(ok, false);
      assert.deepEqual(started, []);
    } finally {
      listener.dispose();
    }
  });

  it('passes through a configuration it already resolved (double resolution guard)', async () => {
    // Launched with the marker set and no cluster configured: if the guard failed, the provider
    // would try the cluster and abort the launch.
    const program = path.join(repoRoot, 'dist-test', 'e2e-host', 'exit-at-once.js');
    fs.writeFileSync(program, 'process.exit(0);\n');
    let sawMarker = false;
    const listener = vscode.debug.onDidStartDebugSession((s) => {
      sawMarker ||=
        (s.configuration as { __queueSplitSession?: { key?: string } }).__queueSplitSession?.key === 'k';
    });
    const ended = new Promise<void>((resolve) => {
      const done = vscode.debug.onDidTerminateDebugSession(() => {
        done.dispose();
        resolve();
      });
    });
    try {
      const ok = await vscode.debug.startDebugging(undefined, {
        type: 'node',
        request: 'launch',
        name: 'already resolved',
        program,
        queueSplit: { workload: 'deployment/nothing-here' },
        __queueSplitSession: { key: 'k', split: 'qs-split-x' },
      });
      assert.equal(ok, true, 'the launch went through untouched');
      assert.equal(sawMarker, true);
      await ended;
    } finally {
      listener.dispose();
    }
  });

  it('adds a split to launch.json (creating it): the env names it, .vscode/queue-split.json defines it', async () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, 'the harness opens a folder');
    await vscode.commands.executeCommand('queueSplit.addToLaunchConfig');
    const file = path.join(folder.uri.fsPath, '.vscode', 'launch.json');
    const launch = JSON.parse(fs.readFileSync(file, 'utf8')) as {
      configurations: { env?: Record<string, string>; queueSplit?: unknown }[];
    };
    const name = launch.configurations[0]?.env?.QUEUE_SPLIT;
    assert.ok(name, fs.readFileSync(file, 'utf8'));
    assert.equal(launch.configurations[0]?.queueSplit, undefined, 'no inline block');
    const splits = JSON.parse(
      fs.readFileSync(path.join(folder.uri.fsPath, '.vscode', 'queue-split.json'), 'utf8'),
    ) as {
      splits: Record<string, { workload?: string; headers?: Record<string, string>; delivery?: string }>;
    };
    const block = splits.splits[name];
    assert.ok(block, JSON.stringify(splits));
    assert.equal(block.delivery, 'env');
    assert.ok(block.headers?.['x-queue-split-user'], 'the default filter header');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
});
