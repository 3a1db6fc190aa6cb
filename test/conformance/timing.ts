// Engine timings for the conformance suite. The test broker emits statistics every second
// (test/env/rabbitmq.ts) yet they still reach the management API up to ~5 s late (quorum
// queues report on a 5 s tick): quiescence windows stay short, because removals prove
// emptiness against statistics fresher than their own consume, and deadlines stay generous.
export const testTiming = {
  stepTimeoutMs: 20_000,
  quiesceMs: 1_200,
  statisticsLagMs: 6_000,
  pollIntervalMs: 200,
  ownershipPollMs: 1_000,
  reconnectInitialMs: 200,
  reconnectMaxMs: 2_000,
  retryInitialMs: 100,
  retryMaxMs: 1_000,
};
