// ElasticMQ, an SQS-compatible server, on loopback: the environment's Amazon SQS. It runs on the
// machine's Java 17 from the jars on Maven Central, fetched once by Maven into the cache, keyed by
// the version pinned in elasticmq/pom.xml. It would bind every address by default; the config
// below binds loopback, and pods reach it through the real node's gateway (node.sh's DNAT) as
// they reach the other brokers.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gatewayPorts, podGateway } from './k8s/node/podNetwork';
import { cacheDir, runDir } from './paths';
import { portOpen, runningPid, startDetached, stop, waitFor } from './processes';

const pom = path.join(__dirname, 'elasticmq', 'pom.xml');
export const elasticMqVersion = /<elasticmq\.version>([^<]+)<\/elasticmq\.version>/.exec(
  fs.readFileSync(pom, 'utf8'),
)?.[1];
const port = 9324;
const home = path.join(runDir, 'elasticmq');
export const elasticMqLibs = path.join(cacheDir, `elasticmq-${elasticMqVersion}`, 'libs');
/** The account and region ElasticMQ puts in queue URLs and ARNs. */
export const sqsAccountId = '000000000000';
export const sqsRegion = 'us-east-1';

export function ensureJars(): void {
  if (fs.existsSync(path.join(elasticMqLibs, `elasticmq-server_2.13-${elasticMqVersion}.jar`))) return;
  console.log(`elasticmq: fetching ElasticMQ ${elasticMqVersion} jars from Maven Central (once)...`);
  const tmp = `${elasticMqLibs}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  execFileSync(
    'mvn',
    [
      '-q',
      '-B',
      '-f',
      pom,
      'dependency:copy-dependencies',
      '-DincludeScope=runtime',
      `-DoutputDirectory=${tmp}`,
    ],
    { stdio: 'inherit' },
  );
  fs.rmSync(elasticMqLibs, { recursive: true, force: true });
  fs.renameSync(tmp, elasticMqLibs); // atomic: an interrupted fetch never leaves a half cache
}

/** Writes elasticmq.conf into the server's home; returns its path (the container backend mounts
 * it at /opt/elasticmq.conf, where the images read it). */
export function writeConfig(bindHost = '127.0.0.1'): string {
  fs.mkdirSync(home, { recursive: true });
  const file = path.join(home, 'elasticmq.conf');
  fs.writeFileSync(
    file,
    [
      'include classpath("application.conf")',
      // The address queue URLs carry; clients of the suites name an endpoint, which wins over it.
      `node-address { protocol = http, host = "127.0.0.1", port = ${port}, context-path = "" }`,
      'generate-node-address = false',
      // strict: the limits AWS enforces (message size, batch sizes, attribute counts).
      `rest-sqs { enabled = true, bind-port = ${port}, bind-hostname = "${bindHost}", sqs-limits = strict }`,
      'rest-stats { enabled = false }',
      `aws { region = ${sqsRegion}, accountId = "${sqsAccountId}" }`,
      '',
    ].join('\n'),
  );
  return file;
}

/** Answers an SQS `ListQueues` (the JSON protocol the AWS SDK v3 speaks). */
export async function answers(): Promise<boolean> {
  const res = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.ListQueues' },
    body: '{}',
    signal: AbortSignal.timeout(2000),
  });
  return res.ok;
}

/** What the environment's ElasticMQ adds to test.env, whichever backend runs it. */
export function elasticMqEnv(): Record<string, string> {
  return {
    SQS_ENDPOINT: `http://127.0.0.1:${port}`,
    // The same server at the real node's gateway, for workloads' env (test/env/k8s/node/podNetwork.ts).
    SQS_POD_ENDPOINT: `http://${podGateway}:${gatewayPorts.sqs}`,
    SQS_REGION: sqsRegion,
  };
}

export const elasticMqPort = port;

export async function startElasticMq(): Promise<Record<string, string>> {
  const env = elasticMqEnv();
  if (runningPid('elasticmq') !== undefined && (await portOpen(port))) {
    console.log(`elasticmq: already running on ${port}`);
    return env;
  }
  if (await portOpen(port)) {
    throw new Error(
      `elasticmq: port ${port} is taken by a process this environment did not start; stop it first.`,
    );
  }
  ensureJars();
  const config = writeConfig();
  const proc = startDetached(
    'elasticmq',
    'java',
    ['-Xmx256m', `-Dconfig.file=${config}`, '-cp', `${elasticMqLibs}/*`, 'org.elasticmq.server.Main'],
    { cwd: home },
  );
  await waitFor('ElasticMQ', answers, {
    timeoutMs: 60_000,
    logFile: proc.logFile,
    pid: proc.pid,
    hint: `Free port ${port}; or \`npm run env:down\` and remove ${home}.`,
  });
  console.log(`elasticmq: started ElasticMQ ${elasticMqVersion} (SQS) on 127.0.0.1:${port}, pid ${proc.pid}`);
  return env;
}

export async function stopElasticMq(): Promise<boolean> {
  return stop('elasticmq', 15_000);
}
