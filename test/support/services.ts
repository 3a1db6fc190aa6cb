// Loads the addresses `npm run env:up` wrote (fixtures/env/services.ts, shared with the demo) and
// registers their credentials for the leak scan. Suites that need real services import this
// first; when the environment is not up they fail loudly with the fix, never skip.
import { readServices, type Services } from '../../fixtures/env/services';
import { registerUrlCredentials } from './secrets';

export type { Services };

export function loadServices(): Services {
  const services = readServices();
  // Every suite gets the broker credentials here, so the leak scan always knows them.
  registerUrlCredentials(services.amqpUrl, 'AMQP_URL');
  registerUrlCredentials(services.rabbitManagementUrl, 'RABBITMQ_MANAGEMENT_URL');
  registerUrlCredentials(services.inCluster.amqpUrl, 'AMQP_POD_URL');
  registerUrlCredentials(services.inCluster.rabbitManagementUrl, 'RABBITMQ_POD_MANAGEMENT_URL');
  return services;
}

/** A name no earlier run used, so reruns against a long-lived broker never see old data. */
export const uniqueName = (prefix: string) =>
  `${prefix}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
