// test-group: serial (reinstalls the shared controller with other agent settings)
// A queue-agent that cannot start is never silent: an image that cannot be pulled and a crash
// loop each take the split to Degraded within a bounded time (the app was never quiesced: it
// keeps its messages), with the cause read from the agent pod's status and events and the safe
// next action. Fixing the cause and retrying (README "When a split is Degraded") ends the split
// cleanly: nothing was cut over. Both need a controller of their own settings; what a namespace
// alone causes (admission, a failing readiness probe) is agent-start-refused.test.ts.
import { test } from 'node:test';
import { installController, testInstall } from '../../deploy/install';
import { AgentStartFailures } from '../support/agentStartFailure';
import { clusterFixture } from '../support/clusterFixture';

const fx = clusterFixture('qs-agent-fail', { rabbitmq: true });
fx.defer(() => installController(fx.kc)); // the suite's controller for the files that follow
const failures = new AgentStartFailures(fx);

/** A controller whose queue-agents get `flags` (later flags win over testInstall's). */
const controllerWith = (...flags: string[]) =>
  installController(fx.kc, { ...testInstall, extraArgs: [...testInstall.extraArgs, ...flags] });

test('an agent image that cannot be pulled: Degraded at once naming ErrImagePull and --agent-image', async () => {
  // Installed with that agent image: the admission policy lets the controller run no other.
  await installController(fx.kc, { ...testInstall, agentImage: 'queuesplit/agent-missing:0' });
  const s = await failures.startSplit('pull');
  await failures.assertDegradedKeepingMessages(s, /ErrImagePull.*--agent-image/, 60_000);
  await installController(fx.kc);
  await failures.retryAndEnd(s);
});

test('a crash-looping agent: Degraded after the agent start timeout, naming the restarts and the logs', async () => {
  // A privileged port: the agent runs as uid 1000 with every capability dropped, so binding it
  // fails at start, again and again (the test node restarts it after at most 1 s, node.sh). The
  // start timeout is this controller's own (8 s, several restarts, rather than the suite's 45 s,
  // which allows for the kill -9 files' restarts): the wait is the same rule, only shorter.
  await controllerWith('--agent-metrics-port=80', '--agent-start-timeout=8');
  const s = await failures.startSplit('crashing');
  await failures.assertDegradedKeepingMessages(
    s,
    /keeps crashing \(\d+ restarts, last exit code 1.*logs/,
    120_000,
  );
  await installController(fx.kc);
  await failures.retryAndEnd(s);
});
