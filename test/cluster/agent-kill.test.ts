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

// One agent serving a Kafka topic and a RabbitMQ queue: every kill interrupts both engines, so the
// RabbitMQ engine is killed in every phase here too (a RabbitMQ-only agent's lives would cost
// minutes more for the same kills; the controller's kills use that subject).
test(
  'queue-agent kill -9 in every phase, one agent with a Kafka topic and a RabbitMQ queue: it restarts, resumes from its checkpoints, and nothing is lost',
  KILL_TEST,
  async () => {
    await killInEveryPhase(fx, 'queue-agent', 'mixed');
  },
);
