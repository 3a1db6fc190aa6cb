// What the queue-agent's identity may do on the source, asked without changing it
// (docs/providers/sqs.md "The preflight"): SQS authorizes a call before it looks at its receipt
// handle, so a DeleteMessage or ChangeMessageVisibility with a handle no message has answers
// ReceiptHandleIsInvalid when allowed and AccessDenied when not. The pump needs both on the source
// (it deletes each message once its copy is confirmed, and extends a slow one), and a refusal found
// only after the application was redirected would leave copies undeleted.
import { ChangeMessageVisibilityCommand, DeleteMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { errorName } from './errors';

/** A receipt handle no message ever had. */
const PROBE_HANDLE = 'queuesplit-rights-probe';

/** The SQS actions the pump needs on the source that this identity is refused. */
export async function deniedOnSource(client: Pick<SQSClient, 'send'>, queueUrl: string): Promise<string[]> {
  const probes: [string, () => Promise<unknown>][] = [
    [
      'sqs:DeleteMessage',
      () => client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: PROBE_HANDLE })),
    ],
    [
      'sqs:ChangeMessageVisibility',
      () =>
        client.send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: queueUrl,
            ReceiptHandle: PROBE_HANDLE,
            VisibilityTimeout: 0,
          }),
        ),
    ],
  ];
  const denied: string[] = [];
  for (const [action, probe] of probes) {
    try {
      await probe();
    } catch (err) {
      if (isAccessDenied(err)) denied.push(action);
      // Anything else (the handle refused, as expected) says the call was allowed.
    }
  }
  return denied;
}

export function isAccessDenied(err: unknown): boolean {
  const status = (err as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
  return /AccessDenied|NotAuthorized|AuthorizationError/.test(errorName(err)) || status === 403;
}
