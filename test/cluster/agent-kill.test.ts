// test-order: first (up to three split lives with a kill in every phase)
// kill -9 of the queue-agent in every phase (docs/design.md §6 recovery; the lives themselves are
// test/support/crashLives.ts): the workload's queue-agent is SIGKILLed the moment each phase is
// persisted; it restarts and resumes from its checkpoints. It kills only the queue-agent of its
// own namespace, so it runs beside the other files; the controller's kills are serial
// (crash-recovery.test.ts).
import { test } from 'node:test';
import { clusterFixture } from '../support/clusterFixture';
import { KILL_TEST, killInEveryPhase } from '../support/crashLives';

const fx = clusterFixture('qs-agent-kill', { rabbitmq: true, kafka: true });

// One agent serving a Kafka topic, a RabbitMQ queue and an SQS queue: every kill interrupts all
// three engines, so each is killed in every phase here (an agent per provider would cost minutes
// more for the same kills; the controller's kills use a RabbitMQ-only subject). The SQS engine's
// successor waits out the fence's lock after each kill (--sqs-lock-timeout, 6 s in the test install).
test(
  'queue-agent kill -9 in every phase, one agent with a Kafka topic, a RabbitMQ queue and an SQS queue: it restarts, resumes from its checkpoints, and nothing is lost',
  KILL_TEST,
  async () => {
    await killInEveryPhase(fx, 'queue-agent', 'mixed');
  },
);
