// SQS's ownership key (core/sourceOwnership.ts): one queue of one account in one region — the
// queue URL's account, region and name. An endpoint override names no region in its host; the
// host stands for it there (one endpoint is one broker). Scheme and port are dropped.
import { ownershipKey } from '../../ownershipKey';
import { fail, ok, type Result } from '../../result';
import { parseQueueUrl } from './queueUrl';

export function sqsOwnershipKey(queueUrl: string): Result<string> {
  const parsed = parseQueueUrl(queueUrl, 'queueUrl');
  if (!parsed.ok) return fail(parsed.errors);
  const { account, name, region, host } = parsed.value;
  return ok(ownershipKey(['sqs', region ?? `endpoint:${host}`, account, name]));
}
