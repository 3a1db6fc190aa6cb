// The demo's names for the sample shop service (fixtures/shop.ts), new on every run.
import type { V1Deployment } from '@kubernetes/client-node';
import { shopDeployment, type ShopNames, type ShopPayments } from '../fixtures/shop';

// Names per run: a demo interrupted halfway never blocks the next one.
const run = Date.now().toString(36);
export const demoNamespace = `queuesplit-demo-${run}`;
export const workloadName = 'shop';
export const ordersTopic = `demo-orders-${run}`;
export const appGroup = `shop-orders-${run}`;
export const invoicesQueue = `demo-invoices-${run}`;
export const paymentsQueue = `demo-payments-${run}`;
/** The Secret with the SQS keys of the payments consumer (ElasticMQ takes any). */
export const awsSecret = 'shop-aws';

const demoNames: ShopNames = {
  namespace: demoNamespace,
  name: workloadName,
  ordersTopic,
  appGroup,
  invoicesQueue,
};

/** The demo's shop, in the demo namespace. */
export function demoShop(env: {
  kafkaBrokers: string;
  amqpUrl: string;
  managementUrl: string;
  payments: ShopPayments;
}): V1Deployment {
  return shopDeployment(env, demoNames);
}
