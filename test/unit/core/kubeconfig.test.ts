// Which kubeconfig files are read (core/kubeconfig.ts) and how several merge, as kubectl (client-go
// clientcmd) does it: the first file that sets current-context decides it, the first definition
// of a name is kept whole, missing files are skipped, an empty file is an empty config. Also on
// real files through @kubernetes/client-node's parser (laptop/kubeconfigFiles.ts), and where that
// client's own loadFromDefault differs (the reason the merge is ours).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import {
  describeKubeconfigFiles,
  expandHome,
  mergeKubeconfigs,
  resolveKubeconfigFiles,
  KubeconfigMergeError,
} from '../../../core/kubeconfig';
import { KubeconfigLoadError, loadKubeconfigFiles } from '../../../laptop/kubeconfigFiles';

const HOME = '/home/dev';

describe('which kubeconfig files', () => {
  const resolve = (over: Partial<Parameters<typeof resolveKubeconfigFiles>[0]>) =>
    resolveKubeconfigFiles({ setting: '', env: undefined, home: HOME, delimiter: ':', sep: '/', ...over });

  test('a string setting is one file, explicit (like --kubeconfig), with ~ expanded', () => {
    assert.deepEqual(resolve({ setting: '~/.kube/work', env: '/a:/b' }), {
      files: ['/home/dev/.kube/work'],
      explicit: true,
      origin: 'setting',
    });
    assert.deepEqual(resolve({ setting: '  /etc/kube.yaml  ' }).files, ['/etc/kube.yaml']);
    assert.deepEqual(resolve({ setting: '~' }).files, [HOME]);
    // Not a home reference: kept as written.
    assert.deepEqual(resolve({ setting: '/x/~/y' }).files, ['/x/~/y']);
    assert.deepEqual(resolve({ setting: '~other/cfg' }).files, ['~other/cfg']);
  });

  test('a list setting is merged like $KUBECONFIG: ~ expanded, duplicates once, blanks dropped', () => {
    assert.deepEqual(resolve({ setting: ['~/.kube/a', '', '/b', '~/.kube/a', 7, '  '] }), {
      files: ['/home/dev/.kube/a', '/b'],
      explicit: false,
      origin: 'setting',
    });
  });

  test('relative setting paths resolve against the workspace folder', () => {
    assert.deepEqual(resolve({ setting: ['kube/dev', '/abs'], baseDir: '/ws' }).files, [
      '/ws/kube/dev',
      '/abs',
    ]);
    assert.deepEqual(resolve({ setting: 'kube/dev', baseDir: '/ws' }).files, ['/ws/kube/dev']);
  });

  test('empty setting: the Kubernetes extension, else $KUBECONFIG, else ~/.kube/config', () => {
    assert.deepEqual(resolve({ setting: [], kubernetesExtension: '/k8s/ext:/k8s/ext2', env: '/env' }), {
      files: ['/k8s/ext', '/k8s/ext2'],
      explicit: false,
      origin: 'kubernetes-extension',
    });
    assert.deepEqual(resolve({ env: '/a::/b:/a' }), { files: ['/a', '/b'], explicit: false, origin: 'env' });
    assert.deepEqual(resolve({ env: '' }), {
      files: ['/home/dev/.kube/config'],
      explicit: false,
      origin: 'default',
    });
    assert.deepEqual(resolve({ env: ':' }).origin, 'default');
    // A setting that is neither a string nor a list (a hand-edited settings.json) is not used.
    assert.deepEqual(resolve({ setting: { file: '/x' }, env: '/env' }).origin, 'env');
  });

  test('Windows: ; separates the list, ~\\ is the home folder', () => {
    const r = resolveKubeconfigFiles({
      setting: '',
      env: 'C:\\k\\a;C:\\k\\b',
      home: 'C:\\Users\\dev',
      delimiter: ';',
      sep: '\\',
    });
    assert.deepEqual(r.files, ['C:\\k\\a', 'C:\\k\\b']);
    assert.equal(expandHome('~\\.kube\\config', 'C:\\Users\\dev', '\\'), 'C:\\Users\\dev\\.kube\\config');
  });

  test('messages name the files and where they came from', () => {
    assert.equal(
      describeKubeconfigFiles({ files: ['/a', '/b'], explicit: false, origin: 'setting' }, ':'),
      '/a:/b (queueSplit.kubeconfig)',
    );
    assert.equal(
      describeKubeconfigFiles({ files: ['/a'], explicit: false, origin: 'env' }, ':'),
      '/a ($KUBECONFIG)',
    );
  });
});

describe("kubectl's merge", () => {
  const named = (...names: string[]) => names.map((name) => ({ name, from: '' }));
  const tag = (file: string, entries: { name: string; from: string }[]) =>
    entries.map((e) => ({ ...e, from: file }));

  test('the first file that sets current-context decides it', () => {
    const merged = mergeKubeconfigs([
      { clusters: [], users: [], contexts: [], currentContext: '' },
      { clusters: [], users: [], contexts: [], currentContext: 'second' },
      { clusters: [], users: [], contexts: [], currentContext: 'third' },
    ]);
    assert.equal(merged.currentContext, 'second');
    assert.equal(mergeKubeconfigs([{ clusters: [], users: [], contexts: [] }]).currentContext, undefined);
  });

  test('the first definition of a name wins, whole; the rest keep their order', () => {
    const merged = mergeKubeconfigs([
      {
        clusters: tag('a', named('c1')),
        users: tag('a', named('u1')),
        contexts: tag('a', named('x1', 'x2')),
      },
      {
        clusters: tag('b', named('c2', 'c1')),
        users: tag('b', named('u1', 'u2')),
        contexts: tag('b', named('x2', 'x3')),
      },
    ]);
    assert.deepEqual(
      merged.clusters.map((c) => `${c.name}@${c.from}`),
      ['c1@a', 'c2@b'],
    );
    assert.deepEqual(
      merged.users.map((c) => `${c.name}@${c.from}`),
      ['u1@a', 'u2@b'],
    );
    assert.deepEqual(
      merged.contexts.map((c) => `${c.name}@${c.from}`),
      ['x1@a', 'x2@a', 'x3@b'],
    );
  });

  test('a name twice in one file is an error naming the file (kubectl: duplicate name in list)', () => {
    assert.throws(
      () =>
        mergeKubeconfigs(
          [
            { clusters: named('c'), users: [], contexts: [] },
            { clusters: named('d', 'd'), users: [], contexts: [] },
          ],
          ['/one', '/two'],
        ),
      (err: Error) =>
        err instanceof KubeconfigMergeError && /\/two names cluster "d" twice/.test(err.message),
    );
  });
});

describe('kubeconfig files on disk', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qs-kubeconfig-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, config: unknown): string => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, typeof config === 'string' ? config : stringify(config));
    return p;
  };
  const config = (prefix: string, current: string | undefined, server: string) => ({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'shared', cluster: { server, 'certificate-authority': 'ca.crt' } },
      { name: `${prefix}-cluster`, cluster: { server } },
    ],
    users: [{ name: 'shared', user: { token: `${prefix}-token` } }],
    contexts: [
      { name: 'shared', context: { cluster: 'shared', user: 'shared', namespace: `${prefix}-ns` } },
      { name: `${prefix}-ctx`, context: { cluster: `${prefix}-cluster`, user: 'shared' } },
    ],
    ...(current !== undefined ? { 'current-context': current } : {}),
  });

  const none = file('none', config('none', undefined, 'https://none:6443'));
  const first = file('first', config('first', 'first-ctx', 'https://first:6443'));
  fs.mkdirSync(path.join(dir, 'sub'));
  const second = file(path.join('sub', 'second'), config('second', 'second-ctx', 'https://second:6443'));
  const empty = file('empty', '');
  const missing = path.join(dir, 'missing');

  test('merged as kubectl: first current-context, first definitions, missing and empty files skipped', () => {
    const { kc, missing: skipped } = loadKubeconfigFiles({
      files: [missing, none, empty, first, second],
      explicit: false,
    });
    assert.deepEqual(skipped, [missing]);
    assert.equal(kc.getCurrentContext(), 'first-ctx');
    assert.deepEqual(
      kc.getContexts().map((c) => c.name),
      ['shared', 'none-ctx', 'first-ctx', 'second-ctx'],
    );
    // "shared" is the first file's, whole: its server, its namespace, its token.
    assert.equal(kc.getCluster('shared')?.server, 'https://none:6443');
    assert.equal(kc.getContextObject('shared')?.namespace, 'none-ns');
    assert.equal(kc.getUser('shared')?.token, 'none-token');
    // Relative file references resolve against the file that names them.
    assert.equal(kc.getCluster('shared')?.caFile, path.join(dir, 'ca.crt'));
    const again = loadKubeconfigFiles({ files: [second, first], explicit: false }).kc;
    assert.equal(again.getCurrentContext(), 'second-ctx');
    assert.equal(again.getCluster('shared')?.caFile, path.join(dir, 'sub', 'ca.crt'));
  });

  test("@kubernetes/client-node's own loadFromDefault differs: the last current-context, throws on shared names", () => {
    const saved = process.env.KUBECONFIG;
    try {
      process.env.KUBECONFIG = [first, file('other', config('other', 'other-ctx', 'https://o:6443'))].join(
        path.delimiter,
      );
      // Names shared between the files: client-node refuses what kubectl merges.
      assert.throws(() => new KubeConfig().loadFromDefault(), /Duplicate/);
      const alone = file('alone', {
        ...config('alone', 'alone-ctx', 'https://a:6443'),
        clusters: [{ name: 'alone-cluster', cluster: { server: 'https://a:6443' } }],
        users: [{ name: 'alone-user', user: {} }],
        contexts: [{ name: 'alone-ctx', context: { cluster: 'alone-cluster', user: 'alone-user' } }],
      });
      const other = file('other2', {
        apiVersion: 'v1',
        clusters: [{ name: 'o-cluster', cluster: { server: 'https://o:6443' } }],
        users: [{ name: 'o-user', user: {} }],
        contexts: [{ name: 'o-ctx', context: { cluster: 'o-cluster', user: 'o-user' } }],
        'current-context': 'o-ctx',
      });
      process.env.KUBECONFIG = [alone, other].join(path.delimiter);
      const theirs = new KubeConfig();
      theirs.loadFromDefault();
      assert.equal(theirs.getCurrentContext(), 'o-ctx', 'client-node: the last file wins');
      assert.equal(
        loadKubeconfigFiles({ files: [alone, other], explicit: false }).kc.getCurrentContext(),
        'alone-ctx',
        'kubectl: the first file wins',
      );
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
  });

  test('an explicit file must exist; a list of missing files loads nothing', () => {
    assert.throws(
      () => loadKubeconfigFiles({ files: [missing], explicit: true }),
      (err: Error) => err instanceof KubeconfigLoadError && err.message === `${missing} does not exist`,
    );
    const { kc, missing: skipped } = loadKubeconfigFiles({ files: [missing], explicit: false });
    assert.deepEqual(skipped, [missing]);
    assert.deepEqual(kc.getContexts(), []);
  });

  test('a file that does not parse is an error naming it', () => {
    const bad = file('bad', 'clusters: [\n');
    assert.throws(
      () => loadKubeconfigFiles({ files: [first, bad], explicit: false }),
      (err: Error) => err instanceof KubeconfigLoadError && err.message.startsWith(`${bad}: `),
    );
    const noServer = file('noserver', { clusters: [{ name: 'x', cluster: {} }] });
    assert.throws(
      () => loadKubeconfigFiles({ files: [noServer], explicit: false }),
      /noserver: clusters\[0\]\.cluster\.server is missing/,
    );
  });
});
