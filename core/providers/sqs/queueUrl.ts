// An SQS queue URL as applications use it: `<endpoint>/<account>/<name>`. AWS's hosts name the
// region (sqs.<region>.amazonaws.com, its legacy and VPC endpoint forms); an endpoint override
// (ElasticMQ, LocalStack) names none. Pure: the core's resolution, ownership key and the
// override of the workload's env all read it.
import { normaliseHost } from '../../ownershipKey';
import { fail, fieldError, ok, type Result } from '../../result';

export interface SqsQueueUrl {
  /** Lowercase host without a trailing dot. */
  host: string;
  account: string;
  name: string;
  /** The region the host names; undefined for a host that is not AWS's. */
  region?: string;
  fifo: boolean;
}

/** SQS queue names: 1-80 of alphanumerics, hyphens and underscores; FIFO ones end in `.fifo`. */
const QUEUE_NAME = /^(?:[A-Za-z0-9_-]{1,80}|[A-Za-z0-9_-]{1,75}\.fifo)$/;

const AWS_HOSTS: readonly RegExp[] = [
  // sqs.us-east-1.amazonaws.com, sqs-fips.us-east-1.amazonaws.com, *.amazonaws.com.cn
  /^sqs(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/,
  // legacy: us-east-1.queue.amazonaws.com
  /^([a-z0-9-]+)\.queue\.amazonaws\.com(?:\.cn)?$/,
  // VPC interface endpoints: vpce-….sqs.us-east-1.vpce.amazonaws.com
  /\.sqs\.([a-z0-9-]+)\.vpce\.amazonaws\.com(?:\.cn)?$/,
];

/** The region an AWS SQS host names (`queue.amazonaws.com` is us-east-1's legacy host). */
export function regionOfHost(host: string): string | undefined {
  if (host === 'queue.amazonaws.com') return 'us-east-1';
  for (const pattern of AWS_HOSTS) {
    const match = pattern.exec(host);
    if (match) return match[1];
  }
  return undefined;
}

const FIX =
  'Use the queue URL as the application uses it: https://sqs.<region>.amazonaws.com/<account>/<queue name>.';

/** The parts of a queue URL; `path` names the field the URL came from. */
export function parseQueueUrl(text: string, path: string): Result<SqsQueueUrl> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail([fieldError(path, 'is not a URL.', FIX)]);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return fail([fieldError(path, `has scheme "${url.protocol}", not https: or http:.`, FIX)]);
  }
  const host = normaliseHost(url.hostname);
  if (host === '') return fail([fieldError(path, 'has no host.', FIX)]);
  const segments = url.pathname.split('/').filter((s) => s !== '');
  if (segments.length !== 2 || url.search !== '' || url.hash !== '') {
    return fail([fieldError(path, 'does not end in /<account>/<queue name>.', FIX)]);
  }
  const [account, name] = segments as [string, string];
  if (!QUEUE_NAME.test(name)) {
    return fail([
      fieldError(
        path,
        `ends in "${name}", which is not an SQS queue name.`,
        'Use 1-80 letters, digits, "-" or "_" (a FIFO queue ends in .fifo).',
      ),
    ]);
  }
  const region = regionOfHost(host);
  return ok({ host, account, name, fifo: name.endsWith('.fifo'), ...(region ? { region } : {}) });
}

/** The URL of the queue named `name` beside `queueUrl` (same endpoint and account). */
export function siblingQueueUrl(queueUrl: string, name: string): string {
  const path = queueUrl.replace(/[?#].*$/, '').replace(/\/+$/, '');
  return `${path.slice(0, path.lastIndexOf('/') + 1)}${name}`;
}

/** The SQS name of a shadow whose scheme name is `base`: a FIFO source's shadows are FIFO
 * queues, whose names SQS requires to end in `.fifo` (the name scheme carries no source kind). */
export function shadowQueueName(sourceQueueUrl: string, base: string): string {
  const source = sourceQueueUrl.replace(/[?#].*$/, '').replace(/\/+$/, '');
  return source.endsWith('.fifo') && !base.endsWith('.fifo') ? `${base}.fifo` : base;
}
