// Launch configurations in the real VS Code (docs/launch-configurations.md), through the real
// `vscode` API in the extension host, on the local cluster and the real RabbitMQ:
// - launch.json as "Add Queue Split to Launch Configuration" and "Migrate Launch Configurations"
//   write it adds nothing to the Problems panel (the JSON language server's diagnostics) for
//   node, debugpy, go, java, cppdbg and a debugger nobody knows: node's is empty; the others show
//   exactly what VS Code shows for them without Queue Split (code-server has no extension for
//   them: "The debug type is not recognized", their own attributes checked against node's). The
//   old inline block is flagged "Property queueSplit is not allowed" first, proving the checker live;
// - the snippets are offered in launch.json and .vscode/queue-split.json, not in other jsonc files;
// - a restart of a real node debug session (js-debug) keeps the split Active, messages keep arriving;
// - cancelling a launch that waits for its split stops waiting at once and releases the split.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import type { QueueSplitApi } from '../../../extension/extension';
import { getSplit, pollUntil, prepareSplitFixture, type SplitFixture } from '../support/cluster';
import { activateExtension, HostSettings, launchNode, leaveHost } from '../support/host';
import { freePort } from '../../support/freePort';

let fixture: SplitFixture;
let api: QueueSplitApi;
let dir: string;
let folder: vscode.WorkspaceFolder;
const settings = new HostSettings();
const vscodeDir = () => path.join(folder.uri.fsPath, '.vscode');
const launchFile = () => path.join(vscodeDir(), 'launch.json');
const splitsFile = () => path.join(vscodeDir(), 'queue-split.json');

/** One configuration per debugger docs/launch-configurations.md names, plus one VS Code has never heard of. */
const DEBUGGERS: Record<string, unknown>[] = [
  { type: 'node', request: 'launch', name: 'node app', program: '${workspaceFolder}/app.js' },
  { type: 'debugpy', request: 'launch', name: 'python app', program: '${workspaceFolder}/app.py' },
  { type: 'go', request: 'launch', name: 'go app', mode: 'debug', program: '${workspaceFolder}' },
  { type: 'java', request: 'launch', name: 'java app', mainClass: 'app.Main' },
  // As the C/C++ extension's template writes it: with an (empty) environment list.
  {
    type: 'cppdbg',
    request: 'launch',
    name: 'c app',
    program: '${workspaceFolder}/a.out',
    cwd: '.',
    environment: [],
  },
  { type: 'never-heard-of-it', request: 'launch', name: 'other app' },
];

/**
 * Sets a file's text through its document (saved), so an open editor never shows stale text
 * and the language server sees exactly this content.
 */
async function setContent(file: string, text: string): Promise<vscode.TextDocument> {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (!fs.existsSync(file)) fs.writeFileSync(file, '');
  const document = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
  const edit = new vscode.WorkspaceEdit();
  edit.replace(
    document.uri,
    new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length)),
    text,
  );
  assert.ok(await vscode.workspace.applyEdit(edit), `${file} edited`);
  await document.save();
  assert.equal(document.getText(), text);
  return document;
}

const writeLaunch = (configurations: Record<string, unknown>[]) =>
  setContent(launchFile(), `${JSON.stringify({ version: '0.2.0', configurations }, null, 2)}\n`);

const describeDiagnostics = (list: readonly vscode.Diagnostic[]) =>
  list.map((d) => `${d.range.start.line + 1}:${d.range.start.character + 1} ${d.message}`).join('\n');

/** The Problems panel's entries for one file (what the JSON language server reported). */
const problemsOf = (file: string) => vscode.languages.getDiagnostics(vscode.Uri.file(file));

async function open(file: string): Promise<vscode.TextDocument> {
  const document = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
  await vscode.window.showTextDocument(document, { preview: false });
  return document;
}

/** The problems of a file as a sorted list of messages (lines move when a marker is added). */
const messagesOf = (file: string) =>
  problemsOf(file)
    .map((d) => d.message)
    .sort();

/**
 * Waits until the file's problems are exactly `expected` (sorted messages) and have stayed so for
 * a few seconds; returns the problems then, or the last ones seen after a minute (the caller's
 * assertion shows the difference). A settle on "no change for a while" is not enough: on a
 * loaded machine the JSON language server can take longer than that to report at all, and the
 * file's previous problems then looked settled (CI met it).
 */
async function problemsBecome(file: string, expected: readonly string[]): Promise<vscode.Diagnostic[]> {
  const want = JSON.stringify([...expected].sort());
  let since: number | undefined;
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (JSON.stringify(messagesOf(file)) !== want) since = undefined;
    else if (since === undefined) since = Date.now();
    else if (Date.now() - since > 3_000) break;
    await sleep(250);
  }
  return [...problemsOf(file)];
}

/** Waits until the file's problems stop changing for a few seconds; returns them. */
async function settledProblems(file: string): Promise<vscode.Diagnostic[]> {
  let last = '';
  let since = Date.now();
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const now = JSON.stringify(messagesOf(file));
    if (now !== last) [last, since] = [now, Date.now()];
    else if (Date.now() - since > 3_000) break;
    await sleep(250);
  }
  return [...problemsOf(file)];
}

/** The configurations of DEBUGGERS VS Code has no debugger for: it flags each one's type. */
const UNKNOWN_TYPES = DEBUGGERS.filter((c) => c.type !== 'node').length;

describe('launch configurations every debugger accepts (real VS Code, real cluster)', function () {
  this.timeout(600_000);

  before(async () => {
    api = await activateExtension();
    const first = vscode.workspace.workspaceFolders?.[0];
    assert.ok(first, 'the harness opens a folder');
    folder = first;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-e2e-launch-'));
  });

  after(async function () {
    this.timeout(120_000);
    await leaveHost({ settings, closeEditors: true, remove: [launchFile(), splitsFile(), dir], fixture });
  });

  it('launch.json written by Migrate and by Add Queue Split has an empty Problems panel for node, debugpy, go, java, cppdbg and an unknown debugger', async () => {
    fs.rmSync(splitsFile(), { force: true });
    // What VS Code shows for these configurations without Queue Split: nothing for node.
    await writeLaunch(DEBUGGERS);
    await open(launchFile());
    // Complete once VS Code flagged the type of every configuration it has no debugger for (then
    // the language server has validated this text), and unchanged for a few seconds after.
    await pollUntil(
      'VS Code flags the debuggers it lacks',
      async () => messagesOf(launchFile()),
      (list) => list.filter((m) => /debug type is not recognized/.test(m)).length >= UNKNOWN_TYPES,
      60_000,
    );
    const baseline = await settledProblems(launchFile());
    const lines = () => fs.readFileSync(launchFile(), 'utf8').split('\n');
    const nodeLine = (d: vscode.Diagnostic) => d.range.start.line < lines().indexOf('    {', 4);
    assert.deepEqual(
      baseline.filter(nodeLine).map((d) => d.message),
      [],
      'node: no problems to begin with',
    );
    const expected = baseline.map((d) => d.message).sort();
    console.log(
      `      without Queue Split: ${expected.length} problem(s) VS Code has for the debuggers it lacks`,
    );

    // Today's inline form: flagged for every configuration (node's schema forbids unknown properties).
    const block = { workload: 'deployment/orders-app', queues: ['orders'], delivery: 'env' };
    await writeLaunch(DEBUGGERS.map((c) => ({ ...c, queueSplit: block })));
    const flagged = await pollUntil(
      'the old inline block is flagged',
      async () => problemsOf(launchFile()),
      (list) => list.filter((d) => /Property queueSplit is not allowed/.test(d.message)).length >= 1,
      60_000,
    );
    console.log(`      old form:\n${describeDiagnostics(flagged).replace(/^/gm, '        ')}`);
    assert.ok(
      flagged.some((d) => nodeLine(d) && /Property queueSplit is not allowed/.test(d.message)),
      'node flags the old block',
    );

    await vscode.commands.executeCommand('queueSplit.migrateLaunchConfigs', folder.uri);
    assert.doesNotMatch(fs.readFileSync(launchFile(), 'utf8'), /queueSplit/, 'migrated');
    assert.deepEqual(
      (await problemsBecome(launchFile(), expected)).map((d) => d.message).sort(),
      expected,
      `after Migrate: exactly the problems without Queue Split\n${describeDiagnostics(problemsOf(launchFile()))}`,
    );
    const migrated = JSON.parse(fs.readFileSync(splitsFile(), 'utf8')) as { splits: Record<string, unknown> };
    assert.equal(
      Object.keys(migrated.splits).length,
      DEBUGGERS.length,
      fs.readFileSync(splitsFile(), 'utf8'),
    );

    // The command writes the new form for each debugger into a launch.json without any.
    fs.rmSync(splitsFile(), { force: true });
    await writeLaunch(DEBUGGERS);
    for (const c of DEBUGGERS)
      await vscode.commands.executeCommand('queueSplit.addToLaunchConfig', { configuration: c.name });
    const written = fs.readFileSync(launchFile(), 'utf8');
    assert.doesNotMatch(written, /queueSplit/, 'no inline block written');
    const configurations = (JSON.parse(written) as { configurations: Record<string, unknown>[] })
      .configurations;
    for (const c of configurations) {
      const named =
        c.type === 'cppdbg'
          ? (c.environment as { name: string; value: string }[] | undefined)?.find(
              (e) => e.name === 'QUEUE_SPLIT',
            )?.value
          : (c.env as Record<string, string> | undefined)?.QUEUE_SPLIT;
      assert.ok(named, `${String(c.type)}: names its split\n${written}`);
    }
    await open(launchFile());
    const after = await problemsBecome(launchFile(), expected);
    assert.deepEqual(
      after.map((d) => d.message).sort(),
      expected,
      `after Add Queue Split: exactly the problems without Queue Split\n${describeDiagnostics(after)}\n${written}`,
    );
    assert.deepEqual(
      after.filter(nodeLine).map((d) => d.message),
      [],
      'node: an empty Problems panel',
    );
    console.log(
      `      new form: node 0 problems; the others exactly their ${expected.length} without Queue Split`,
    );
    await open(splitsFile());
    assert.deepEqual(
      (await problemsBecome(splitsFile(), [])).map((d) => d.message),
      [],
      'queue-split.json validates against its schema',
    );

    // A filter in any form validates: text (prefix, alternatives, my OpenTelemetry routing key), a
    // clause map of predicates, anyOf.
    const editor = vscode.window.activeTextEditor;
    assert.ok(editor);
    const file = JSON.parse(editor.document.getText()) as { splits: Record<string, Record<string, unknown>> };
    const forms: unknown[] = [
      'tenant^=alice- or baggage:queue-split-user=alice',
      { tenant: { regex: '(dev|qa)-[0-9]+' }, 'body:$.customer.id': { in: ['c-1', 'c-2'] } },
      { anyOf: [{ tenant: 'alice' }, { 'x-queue-split-user': { exists: true } }] },
      ['x-queue-split-user=alice', 'team=red'],
    ];
    Object.values(file.splits).forEach((split, i) => {
      delete split.headers;
      split.filter = forms[i % forms.length];
    });
    const withFilters = `${JSON.stringify(file, null, 2)}\n`;
    await editor.edit((e) =>
      e.replace(
        new vscode.Range(
          editor.document.positionAt(0),
          editor.document.positionAt(editor.document.getText().length),
        ),
        withFilters,
      ),
    );
    assert.deepEqual(
      (await problemsBecome(splitsFile(), [])).map((d) => d.message),
      [],
      `every filter form validates against the schema\n${withFilters}`,
    );

    // The splits file's own schema is live: a bad delivery is flagged there.
    const text = editor.document.getText();
    const at = text.indexOf('"env"');
    await editor.edit((e) =>
      e.replace(
        new vscode.Range(editor.document.positionAt(at), editor.document.positionAt(at + 5)),
        '"pigeon"',
      ),
    );
    await pollUntil(
      'a bad delivery is flagged in queue-split.json',
      async () => problemsOf(splitsFile()),
      (list) => list.length > 0,
      30_000,
    );
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });

  it('Migrate refuses while launch.json has unsaved changes, and keeps them', async () => {
    const block = { workload: 'deployment/orders-app', queues: ['orders'], delivery: 'env' };
    const document = await writeLaunch([{ ...DEBUGGERS[0], queueSplit: block }]);
    const saved = fs.readFileSync(launchFile(), 'utf8');
    const splitsBefore = fs.existsSync(splitsFile()) ? fs.readFileSync(splitsFile(), 'utf8') : undefined;
    const editor = await vscode.window.showTextDocument(document, { preview: false });
    await editor.edit((e) => e.insert(document.positionAt(saved.lastIndexOf('}')), '  // mine, unsaved\n'));
    assert.ok(document.isDirty, 'an unsaved edit');
    await vscode.commands.executeCommand('queueSplit.migrateLaunchConfigs', folder.uri);
    assert.equal(fs.readFileSync(launchFile(), 'utf8'), saved, 'launch.json on disk unchanged');
    assert.equal(
      fs.existsSync(splitsFile()) ? fs.readFileSync(splitsFile(), 'utf8') : undefined,
      splitsBefore,
      'queue-split.json unchanged',
    );
    assert.ok(document.isDirty && document.getText().includes('// mine, unsaved'), 'the unsaved edit kept');
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });

  it('snippets are offered in launch.json and queue-split.json, not in other jsonc files', async () => {
    const labels = async (file: string, text: string, marker: string, expect: boolean) => {
      const document = await setContent(file, text.replace(marker, ''));
      await vscode.window.showTextDocument(document, { preview: false });
      const position = document.positionAt(text.indexOf(marker));
      // The JSON language server may answer before it has loaded the schemas: ask until it offers
      // JSON completions (a property or a snippet), then look at them.
      const list = await pollUntil(
        `completions in ${path.basename(file)}`,
        async () =>
          (
            await vscode.commands.executeCommand<vscode.CompletionList>(
              'vscode.executeCompletionItemProvider',
              document.uri,
              position,
            )
          ).items.map((i) => (typeof i.label === 'string' ? i.label : i.label.label)),
        (items) => !expect || items.some((l) => /Queue Split/.test(l)),
        20_000,
      ).catch(() => [] as string[]);
      return list;
    };
    const inLaunch = await labels(
      launchFile(),
      '{\n  "version": "0.2.0",\n  "configurations": [\n    |\n  ]\n}\n',
      '|',
      true,
    );
    assert.ok(
      inLaunch.some((l) => /Queue Split/.test(l)),
      `launch.json offers the Queue Split launch snippet: ${inLaunch.join(', ')}`,
    );
    // The value of a split: the split snippets of the splits file's schema.
    const inSplits = await labels(splitsFile(), '{\n  "splits": {\n    "orders": |\n  }\n}\n', '|', true);
    assert.ok(
      inSplits.some((l) => /Queue Split/.test(l)),
      `queue-split.json: ${inSplits.join(', ')}`,
    );
    const other = path.join(folder.uri.fsPath, 'tsconfig.json');
    try {
      const inOther = await labels(other, '{\n  |\n}\n', '|', false);
      assert.equal(
        inOther.filter((l) => /queue ?split/i.test(l)).length,
        0,
        `tsconfig.json offers no Queue Split snippet: ${inOther.join(', ')}`,
      );
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      fs.rmSync(other, { force: true });
    }
  });

  describe('with a split on the cluster', () => {
    before(async function () {
      this.timeout(300_000);
      fixture = await prepareSplitFixture('qs-e2e-launch', { install: false });
      await settings.forCluster(fixture);
    });

    it('a restart of a node debug session, twice, keeps the split Active and its messages arriving', async () => {
      const port = await freePort();
      const received = path.join(dir, 'received.jsonl');
      const program = path.join(dir, 'receiver.js');
      fs.writeFileSync(
        program,
        [
          "const http = require('http');",
          "const fs = require('fs');",
          'http.createServer((req, res) => {',
          "  req.resume().on('end', () => {",
          `    fs.appendFileSync(${JSON.stringify(received)}, String(req.headers['ce-id']) + '\\n');`,
          '    res.statusCode = 204;',
          '    res.end();',
          '  });',
          `}).listen(${port}, '127.0.0.1');`,
        ].join('\n'),
      );
      fs.writeFileSync(
        splitsFile(),
        JSON.stringify({
          splits: {
            restarts: {
              workload: `deployment/${fixture.workload}`,
              queues: ['orders'],
              delivery: 'http',
              target: `http://127.0.0.1:${port}/events`,
            },
          },
        }),
      );
      const arrived = () =>
        fs.existsSync(received)
          ? new Set(fs.readFileSync(received, 'utf8').split('\n').filter(Boolean))
          : new Set<string>();
      const events: string[] = [];
      const listeners = [
        vscode.debug.onDidStartDebugSession((s) =>
          events.push(`start ${s.name}${s.parentSession ? ' (child)' : ''}`),
        ),
        vscode.debug.onDidTerminateDebugSession((s) =>
          events.push(`end ${s.name}${s.parentSession ? ' (child)' : ''}`),
        ),
      ];
      try {
        const ok = await launchNode(
          'receiver with restarts',
          program,
          { env: { QUEUE_SPLIT: 'restarts' } },
          folder,
        );
        assert.equal(ok, true);
        const [name] = await pollUntil(
          'one split',
          () => fixture.splits(),
          (n) => n.length === 1,
          60_000,
        );
        await pollUntil(
          'the split is Active',
          () => getSplit(fixture.admin, fixture.namespace, name!),
          (s) => s?.status?.phase === 'Active',
          180_000,
        );
        for (const round of [0, 1, 2]) {
          if (round > 0) {
            const before = events.length;
            await vscode.commands.executeCommand('workbench.action.debug.restart');
            // js-debug restarts its process target: a session ends and one starts again.
            await pollUntil(
              `restart ${round}: a debug session ended and one started again (${events.join('; ')})`,
              async () => events.slice(before),
              (e) => e.some((x) => x.startsWith('end')) && e.some((x) => x.startsWith('start')),
              60_000,
            );
            await sleep(8_000); // well past the 3 s release grace that stopped the split before linger
            const split = await getSplit(fixture.admin, fixture.namespace, name!);
            assert.equal(
              split?.metadata.deletionTimestamp,
              undefined,
              `restart ${round}: nobody deleted the split (${events.join('; ')})`,
            );
            assert.equal(split?.status?.phase, 'Active', `restart ${round}: the split stays Active`);
          }
          const ids = [`restart-${round}-${fixture.owner}-a`, `restart-${round}-${fixture.owner}-b`];
          await fixture.publish(ids, fixture.owner);
          await pollUntil(
            `round ${round}: my messages reach the debuggee`,
            async () => arrived(),
            (got) => ids.every((i) => got.has(i)),
            60_000,
          );
        }
        console.log(`      debug session events: ${events.join('; ')}`);
        // The restarts above ran with the default linger; the end need not wait it out
        // (split-linger.test.ts covers the linger itself).
        await settings.set({ linger: 0 });
        await vscode.debug.stopDebugging();
        await fixture.waitForNoSplits();
      } finally {
        listeners.forEach((l) => l.dispose());
      }
    });

    it('cancelling a launch that waits for its split stops waiting at once and releases the split', async () => {
      const program = path.join(dir, 'never-runs.js');
      fs.writeFileSync(program, 'setInterval(() => undefined, 1000);\n');
      fs.writeFileSync(
        splitsFile(),
        JSON.stringify({
          splits: {
            cancelled: { workload: `deployment/${fixture.workload}`, queues: ['orders'], delivery: 'env' },
          },
        }),
      );
      const started: string[] = [];
      const listener = vscode.debug.onDidStartDebugSession((s) => started.push(s.name));
      try {
        const launching = launchNode(
          'cancelled while starting',
          program,
          { env: { QUEUE_SPLIT: 'cancelled' } },
          folder,
        );
        let settled = false;
        void launching.then(() => (settled = true));
        // The launch first waits for the previous split of this workload to finish its handback
        // (its cleanup proves each RabbitMQ shadow empty against fresh broker statistics, so
        // tens of seconds after its QueueSplit is gone), then creates the new one.
        const [name] = await pollUntil(
          'the split is created',
          () => fixture.splits(),
          (n) => n.length === 1,
          180_000,
        );
        const phase = (await getSplit(fixture.admin, fixture.namespace, name!))?.status?.phase;
        assert.notEqual(phase, 'Active', 'cancelled while it still waited');
        const cancelledAt = Date.now();
        await vscode.debug.stopDebugging(); // the debug toolbar's stop while a launch is starting
        await pollUntil(
          'the launch gives up',
          async () => settled,
          (s) => s,
          5_000,
        );
        assert.equal(await launching, false, 'the launch did not start');
        console.log(`      cancel → launch settled: ${((Date.now() - cancelledAt) / 1000).toFixed(1)}s`);
        // Released at once (the split is deleted now), not at the 120 s start deadline.
        await pollUntil(
          'the split is being deleted',
          () => getSplit(fixture.admin, fixture.namespace, name!),
          (s) => s === undefined || s.metadata.deletionTimestamp !== undefined,
          30_000,
        );
        console.log(
          `      cancel → split deletion requested: ${((Date.now() - cancelledAt) / 1000).toFixed(1)}s`,
        );
        assert.deepEqual(started, [], 'no debug session started');
        await fixture.waitForNoSplits();
        await pollUntil(
          'its sidecar exited',
          async () => api.services.sessions.list().some((s) => s.live),
          (live) => !live,
          30_000,
        );
      } finally {
        listener.dispose();
      }
    });
  });
});
