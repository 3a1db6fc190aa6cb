// Runs test/support/boto3_sqs.py with Debian's python3-boto3 (test/env/install-system-deps.sh
// installs it): a second SQS client, on SQS's other wire protocol, so a test's traffic comes from
// a client this project did not write. A missing boto3 fails loudly with the fix.
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { loadServices } from './services';

const PYTHON = '/usr/bin/python3';

/** A message attribute as the script passes it: text, or bytes as base64. */
export type Boto3Attribute = { type: string; value: string } | { type: string; base64: string };

export interface Boto3Message {
  body: string;
  attributes?: Record<string, Boto3Attribute>;
  group?: string;
  dedup?: string;
  /** AWSTraceHeader, as received. */
  trace?: string;
}

async function run(args: readonly string[]): Promise<unknown> {
  const { endpoint, region } = loadServices().sqs;
  try {
    const { stdout } = await promisify(execFile)(
      PYTHON,
      [path.join(__dirname, 'boto3_sqs.py'), args[0]!, endpoint, region, ...args.slice(1)],
      { timeout: 60_000 },
    );
    return JSON.parse(stdout) as unknown;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new Error(
      `the boto3 client failed (${why}); it needs Debian's python3-boto3 at ${PYTHON}: run test/env/install-system-deps.sh as root`,
    );
  }
}

/** Sends `messages` to `queueUrl` with boto3; the message ids SQS gave them. */
export async function boto3Send(queueUrl: string, messages: readonly Boto3Message[]): Promise<string[]> {
  return (await run(['send', queueUrl, JSON.stringify(messages)])) as string[];
}

/** Receives and deletes up to `count` messages with boto3, for at most `seconds`. */
export async function boto3Receive(
  queueUrl: string,
  count: number,
  seconds: number,
): Promise<Boto3Message[]> {
  return (await run(['receive', queueUrl, String(count), String(seconds)])) as Boto3Message[];
}
