// One developer session, start to end: resolve the workload and broker connections, create or
// adopt the QueueSplit, wait for Active, deliver in the chosen mode while renewing the lease, and
// on SIGINT/SIGTERM stop consuming, delete the split and report the drain. Failures become one
// `error` line; after a failure the split is left to its lease (a quick restart adopts it),
// except a Rejected split, which can never become Active and is deleted.
import { PROVIDER_NAMES, PROVIDERS, sourceLabel, type Provider } from '../core/providers';
import * as path from 'node:path';
import { AppsV1Api } from '@kubernetes/client-node';
import type { QueueSplit, WorkloadRef } from '../core/crd/queueSplitSchema';
import { DEFAULT_FILTER_KEY, type HeaderFilter } from '../core/filter';
import type { WorkloadLike } from '../core/queueConfig/podTemplate';
import type { ResolvedQueue } from '../core/queueConfig/resolveQueues';
import { resolveWorkload, type ResolvedWorkload } from '../core/queueConfig/resolveWorkload';
import { withOriginalEnv } from '../core/queueConfig/originalEnv';
import { declaredConfigMaps } from '../laptop/declaredConfigMaps';
import { QUEUE_CONFIG_ANNOTATION } from '../core/queueConfig/schema';
import { formatFieldError } from '../core/result';
import { newSessionSecret, secretFits } from '../core/sessionSecret';
import { productVersion } from '../core/version';
import { fixedEndpoint, portForwardEndpoint } from './agentPortForward';
import { SplitChanges } from './splitChanges';
import { AgentStream } from './agentStream';
import { resolveConnections, type QueueConnection } from '../laptop/brokerConnection';
import type { EnvWarning } from '../laptop/providers/contract';
import { laptopProvider } from '../laptop/providers/registry';
import type { ShadowConsumer } from './consumers/types';
import { sessionEnv, writeEnvFile } from './delivery/env';
import { HttpDeliverer } from './delivery/http';
import { QueuePipeline, type RejectRules } from './delivery/pipeline';
import { RelayDeliverer, type RelayDestination } from './delivery/relay';
import { StopSignals } from './delivery/retry';
import type { Deliverer } from './delivery/types';
import { SidecarError, errorText, isAbort, usageError } from '../laptop/errors';
import { checkEnvBrokers, checkHttpTarget, preflightFailure } from './modePreflight';
import { followHandback, workloadStatusText } from './handback';
import { checkSessionAccess, kubeError, kubeStatus, loadKube, whoAmI, type KubeTarget } from '../laptop/kube';
import type { SidecarOptions } from './options';
import type { Reporter } from './output';
import {
  SIDECAR_EXIT_CODES,
  SIDECAR_PROTOCOL_VERSION,
  SESSION_SECRET_ENV,
  type BlockedMessageRequest,
  type PublishRequest,
  type ReadyQueue,
} from '../core/sidecarProtocol';
import {
  LeaseKeeper,
  QueueSplitApi,
  SplitMonitor,
  acquireSplit,
  detachSplit,
  splitRef,
  waitForActive,
  type SplitRequest,
} from './split';
import { sidecarProvider } from './providers/registry';
import { defaultStateFile, removeState, stateDirectory } from './state';
import { specFilter } from '../core/crd/validateQueueSplit';

export class Session {
  private readonly stopController = new AbortController();
  private readonly stopSignals = new StopSignals();
  /** http/relay through the queue-agent (core/sessionStream.ts). */
  private stream: AgentStream | undefined;
  /** http/relay: each queue's delivery pipeline, for the retry and reject requests on stdin. */
  private readonly pipelines = new Map<string, QueuePipeline>();
  private fatal: SidecarError | undefined;
  /** relay mode: opened by the preflight, delivers once the split is Active. */
  private relay: RelayDeliverer | undefined;
  private wake: () => void = () => undefined;
  private readonly ended = new Promise<void>((resolve) => {
    this.wake = resolve;
  });

  constructor(
    private readonly options: SidecarOptions,
    private readonly reporter: Reporter,
  ) {}

  get stopping(): boolean {
    return this.stopController.signal.aborted;
  }

  /** First SIGINT/SIGTERM: stop consuming, detach, report the drain. */
  requestStop(reason: string): void {
    if (this.stopping) return;
    this.reporter.emit({
      type: 'progress',
      stage: 'stopping',
      message: `${reason}: stopping delivery, then detaching the split (press again to exit at once; the lease then drains it).`,
    });
    this.stopController.abort();
    this.stopSignals.stop(this.options.stopGraceMs);
    this.wake();
  }

  /** A failure after delivery started (consumer crash, split deleted): stop without detaching. */
  private fail(err: SidecarError): void {
    this.fatal ??= err;
    this.stopSignals.abortNow();
    this.wake();
  }

  async run(): Promise<number> {
    const { options, reporter } = this;
    reporter.emit({
      type: 'hello',
      protocol: SIDECAR_PROTOCOL_VERSION,
      version: productVersion,
      pid: process.pid,
      mode: options.mode,
    });
    let api: QueueSplitApi | undefined;
    let split: QueueSplit | undefined;
    let stateFile: string | undefined;
    let lease: LeaseKeeper | undefined;
    let monitor: SplitMonitor | undefined;
    const consumers: ShadowConsumer[] = [];
    let deliverer: Deliverer | undefined;
    const stopDelivery = async (): Promise<void> => {
      await this.stream?.stop();
      await Promise.all(consumers.map((c) => c.stop()));
      await deliverer?.close();
      await monitor?.stop();
      await lease?.stop();
    };
    // Credentials in URLs the user gave us never reach stdout/stderr, whatever prints them.
    for (const provider of PROVIDER_NAMES) {
      const text = options.relay.brokers[provider];
      if (text !== undefined) sidecarProvider(provider).relay.redact(text, reporter.redactor);
    }
    if (options.target !== undefined) reporter.redactor.addUrl(options.target.toString());
    try {
      const kube = loadKube(options);
      api = new QueueSplitApi(kube);
      const adoptTarget =
        options.split !== undefined ? await this.splitToAdopt(api, options.split) : undefined;
      // An adopted split keeps its owner; a new one is the caller's (the `queuesplit-owner`
      // admission policy checks), asked first so a refusal stops before anything is read.
      const owner = adoptTarget?.spec.owner ?? options.owner ?? (await whoAmI(kube));
      if (adoptTarget === undefined && options.owner === undefined)
        reporter.emit({
          type: 'progress',
          stage: 'resolving',
          message: `You are ${owner} (Kubernetes user of context ${kube.context}): the owner of this split.`,
        });
      const workloadRef: WorkloadRef | undefined = adoptTarget?.spec.workload ?? options.workload;
      if (workloadRef === undefined)
        throw usageError('--workload', 'is required.', 'Pass --workload deployment/<name>.');
      // http and relay (agent transport): the queue-agent streams the messages through the API
      // server; nothing on this machine reads a broker or a Secret (core/sessionStream.ts).
      const streams = options.mode !== 'env' && options.transport === 'agent';
      await checkSessionAccess(
        kube,
        workloadRef,
        // --agent-url: a port-forward the user runs; the sidecar opens none.
        { creates: adoptTarget === undefined, streams: streams && options.agentUrl === undefined },
        owner,
      );
      reporter.emit({
        type: 'progress',
        stage: 'resolving',
        message: `Reading ${workloadRef.kind}/${workloadRef.name} in namespace ${kube.namespace} (context ${kube.context}).`,
      });
      const workload = await readWorkload(kube, workloadRef);
      const queueNames = this.selectQueues(workload, adoptTarget?.spec.queues);
      const resolvedQueues = workload.queues.filter((q) => queueNames.includes(q.name));
      const connections = streams
        ? []
        : await resolveConnections(resolvedQueues, {
            kube,
            overrides: options.env,
            addressMap: options.addressMap,
            ...(options.tlsCaFile !== undefined ? { caFile: options.tlsCaFile } : {}),
            redactor: reporter.redactor,
          });
      this.warnUnusedOverrides(resolvedQueues, streams);
      for (const c of connections)
        reporter.emit({
          type: 'progress',
          stage: 'resolving',
          queue: c.queue.name,
          message: `Queue "${c.queue.name}": ${c.broker.display}.`,
        });
      if (streams)
        reporter.emit({
          type: 'progress',
          stage: 'resolving',
          message: `Queues ${queueNames.join(', ')}: your messages will come from the workload's queue-agent through the Kubernetes API (no broker connection from this machine).`,
        });
      const relayDestinations = options.mode === 'relay' ? this.relayDestinations(resolvedQueues) : [];
      // The mode's preflight (sidecar/modePreflight.ts): before the create rolls the team's workload.
      await this.preflight(connections, relayDestinations, (d) => (deliverer = d)).catch((err: unknown) => {
        throw preflightFailure(err, options.mode, adoptTarget === undefined);
      });
      if (options.preflightOnly) {
        await stopDelivery(); // the relay the preflight opened
        reporter.emit({
          type: 'progress',
          stage: 'resolving',
          message: `Preflight passed for ${options.mode} delivery of ${queueNames.join(', ')}; nothing was created (--preflight-only).`,
        });
        return SIDECAR_EXIT_CODES.ok;
      }

      const filter: HeaderFilter = (adoptTarget ? specFilter(adoptTarget.spec) : undefined) ??
        options.filter ?? { [DEFAULT_FILTER_KEY]: owner };
      const request: SplitRequest = {
        workload: workloadRef,
        queues: queueNames,
        filter,
        owner,
        leaseSeconds: options.leaseSeconds,
        mode: options.mode,
        // A new route's stream secret; the state file keeps it for a restart (adoption).
        ...(streams ? { sessionSecret: newSessionSecret() } : {}),
      };
      stateFile = options.stateFile ?? defaultStateFile(kube.context, kube.namespace, workloadRef);
      if (this.stopping) {
        await stopDelivery(); // the relay the preflight opened
        return SIDECAR_EXIT_CODES.ok;
      }
      const acquired = await acquireSplit({
        api,
        reporter,
        ...(options.split !== undefined ? { splitName: options.split } : {}),
        request,
        stateFile,
        timeoutMs: options.readyTimeoutMs,
        signal: this.stopController.signal,
      });
      split = acquired.split;
      const sessionSecret = streams ? this.sessionSecretFor(split, acquired.sessionSecret) : undefined;
      lease = new LeaseKeeper(api, reporter, split, options.leaseSeconds);
      lease.start();

      let active: QueueSplit;
      const changes = new SplitChanges(api.kube, split.metadata.name);
      try {
        active = await waitForActive(api, reporter, split, {
          timeoutMs: options.readyTimeoutMs,
          leaseSeconds: options.leaseSeconds,
          pollMs: options.pollMs,
          signal: this.stopController.signal,
          changes,
        });
      } catch (err) {
        if (isAbort(err)) return await this.detach(api, split, stateFile, stopDelivery);
        if (err instanceof SidecarError && err.code === 'split-rejected') {
          await lease.stop();
          await api.delete(split.metadata.name, split.metadata.uid);
          if (options.split === undefined) removeState(stateFile);
        }
        throw err;
      } finally {
        changes.stop();
      }
      split = active;
      reporter.emit({
        type: 'progress',
        stage: 'active',
        split: splitRef(active),
        phase: 'Active',
        message: `QueueSplit ${active.metadata.name} is Active.`,
      });

      const readyQueues =
        sessionSecret !== undefined
          ? await this.startStream(kube, active, resolvedQueues, sessionSecret, (d) => (deliverer = d))
          : await this.startDelivery(active, connections, consumers, (d) => (deliverer = d));
      monitor = new SplitMonitor(api, reporter, active, Math.max(options.pollMs, 2_000), {
        onGone: (err) => this.fail(err),
        streamCounts: () => ({ ...(this.stream?.counts ?? { parked: 0, unreadableFrames: 0, replaced: 0 }) }),
      });
      monitor.start();
      if (this.fatal === undefined && !this.stopping)
        this.emitReady(active, connections, readyQueues, stateFile);

      await this.ended;
      if (this.fatal !== undefined) throw this.fatal;
      return await this.detach(api, active, stateFile, stopDelivery);
    } catch (err) {
      if (isAbort(err) && this.stopping) {
        await stopDelivery();
        if (api !== undefined && split !== undefined && stateFile !== undefined)
          return await this.detach(api, split, stateFile, async () => undefined);
        return SIDECAR_EXIT_CODES.ok;
      }
      this.stopSignals.abortNow();
      await stopDelivery().catch(() => undefined);
      const failure =
        err instanceof SidecarError
          ? err
          : new SidecarError(
              'internal',
              `Unexpected failure: ${errorText(err)}`,
              'Report this with the sidecar log (stderr).',
            );
      const leaseNote =
        split !== undefined && failure.code !== 'split-deleted' && failure.code !== 'split-rejected'
          ? ` Your split ${split.metadata.name} stays attached until its lease runs out (${options.leaseSeconds}s); start again within that time to adopt it.`
          : '';
      reporter.emit({
        type: 'error',
        code: failure.code,
        message: failure.message,
        suggestedAction: `${failure.suggestedAction}${leaseNote}`,
        ...(failure.flag !== undefined ? { flag: failure.flag } : {}),
        ...(failure.controller !== undefined ? { controller: failure.controller } : {}),
      });
      return failure.code === 'usage' ? SIDECAR_EXIT_CODES.usage : SIDECAR_EXIT_CODES.error;
    }
  }

  private async splitToAdopt(api: QueueSplitApi, name: string): Promise<QueueSplit> {
    const existing = await api.get(name);
    if (existing === undefined) {
      throw new SidecarError(
        'split-conflict',
        `QueueSplit ${name} does not exist in namespace ${api.kube.namespace}.`,
        `Check the name with \`kubectl get queuesplits -n ${api.kube.namespace}\`.`,
        '--split',
      );
    }
    return existing;
  }

  private selectQueues(workload: ResolvedWorkload, fromSplit: readonly string[] | undefined): string[] {
    const declared = workload.queues.map((q) => q.name);
    const wanted =
      fromSplit !== undefined
        ? [...fromSplit]
        : this.options.queues.length > 0
          ? this.options.queues
          : declared;
    const unknown = wanted.filter((q) => !declared.includes(q));
    if (unknown.length > 0) {
      throw usageError(
        '--queue',
        `${workload.kind}/${workload.name} declares no queue named ${unknown.map((q) => `"${q}"`).join(', ')} (it declares ${declared.join(', ')}).`,
        `Pick from: ${declared.join(', ')}.`,
      );
    }
    return wanted;
  }

  private warnUnusedOverrides(queues: readonly ResolvedQueue[], streams: boolean): void {
    const used = new Set(streams ? [] : queues.flatMap((q) => q.env.map((e) => e.name)));
    for (const name of this.options.env.keys()) {
      if (streams) {
        this.reporter.emit({
          type: 'warning',
          code: 'unused-override',
          message: `--env ${name} is ignored: with ${this.options.mode} delivery the queue-agent connects to the brokers, not this machine.`,
          suggestedAction: 'Leave --env out (or use --transport broker to read the brokers from here).',
        });
      } else if (!used.has(name)) {
        this.reporter.emit({
          type: 'warning',
          code: 'unused-override',
          message: `--env ${name} is not a connection variable of the selected queues; it is ignored.`,
          suggestedAction: `Connection variables: ${[...used].join(', ') || 'none'}.`,
        });
      }
    }
  }

  private relayDestinations(queues: readonly ResolvedQueue[]): RelayDestination[] {
    const { relay } = this.options;
    for (const name of relay.to.keys()) {
      if (!queues.some((q) => q.name === name)) {
        throw usageError(
          '--relay-to',
          `"${name}" is not one of the selected queues (${queues.map((q) => q.name).join(', ')}).`,
          'Use --relay-to <queue>=<local topic or queue>.',
        );
      }
    }
    return queues.map((q) => {
      const local = sidecarProvider(q.provider).relay;
      if (relay.brokers[q.provider] === undefined) {
        const { label } = PROVIDERS[q.provider];
        throw usageError(
          local.flag,
          `is required: queue "${q.name}" is a ${sourceLabel(q.provider)} and relays into a local ${label}.`,
          `e.g. ${local.flag} ${local.example}.`,
        );
      }
      return { queue: q.name, provider: q.provider, name: relay.to.get(q.name) ?? q.source };
    });
  }

  /**
   * The secret this sidecar proves to the queue-agent: the one it made when it created the split
   * (kept in its state file), or, adopting a split the extension created, the one the extension
   * passed in QUEUE_SPLIT_SESSION_SECRET. It must fit the split's spec.session.publicKey.
   */
  private sessionSecretFor(split: QueueSplit, own: string | undefined): string {
    const secret = own ?? process.env[SESSION_SECRET_ENV];
    const publicKey = split.spec.session?.publicKey;
    if (publicKey === undefined) {
      throw new SidecarError(
        'session-refused',
        `QueueSplit ${split.metadata.name} has no session secret (it was created for env delivery, or by an older version), so the queue-agent streams its messages to nobody.`,
        'Stop it and start a new split with http or relay delivery (or use --mode env, or --transport broker).',
      );
    }
    if (secret === undefined || !secretFits(secret, publicKey)) {
      throw new SidecarError(
        'session-refused',
        `This sidecar does not hold the session secret of QueueSplit ${split.metadata.name}: only the sidecar (or VS Code window) that created it may receive its messages.`,
        secret === undefined
          ? `Start it from the machine that created it (its state file keeps the secret), or pass the secret in ${SESSION_SECRET_ENV}.`
          : 'The secret given does not match the split; start a new split instead.',
      );
    }
    return secret;
  }

  /** http/relay through the queue-agent: one stream for all queues, each with its pipeline. */
  private async startStream(
    kube: KubeTarget,
    split: QueueSplit,
    queues: readonly ResolvedQueue[],
    secret: string,
    setDeliverer: (d: Deliverer) => void,
  ): Promise<ReadyQueue[]> {
    const { options, reporter } = this;
    const deliverer = this.deliverer(split);
    setDeliverer(deliverer);
    const handlers = new Map(
      queues.map((q) => [
        q.name,
        this.pipeline(q.name, q.provider, specFilter(split.spec), deliverer, () =>
          this.stream?.rejectUnavailable(),
        ),
      ]),
    );
    const endpoint =
      options.agentUrl !== undefined
        ? fixedEndpoint(options.agentUrl)
        : portForwardEndpoint(kube, split.spec.workload);
    this.stream = new AgentStream({
      routeId: split.spec.routeId,
      secret,
      endpoint,
      handlers,
      reporter,
      onFatal: (err) => this.fail(err),
      startTimeoutMs: options.readyTimeoutMs,
    });
    await this.stream.start();
    const statuses = split.status?.queues ?? [];
    return queues.map((q) => {
      const shadow = statuses.find((s) => s.name === q.name)?.shadow ?? {};
      reporter.emit({
        type: 'progress',
        stage: 'consuming',
        queue: q.name,
        message: `Receiving ${q.name} from the queue-agent (session shadow ${shadow.source ?? '?'}) → ${deliverer.describe(q.name)}.`,
      });
      return {
        name: q.name,
        provider: q.provider,
        via: 'agent' as const,
        shadow: shadow.source ?? '',
        ...(shadow.group !== undefined ? { group: shadow.group } : {}),
        deliversTo: deliverer.describe(q.name),
      };
    });
  }

  private pipeline(
    queue: string,
    provider: Provider,
    filter: HeaderFilter,
    deliverer: Deliverer,
    cannotReject: RejectRules['cannotReject'],
  ): QueuePipeline {
    const { options } = this;
    const pipeline = new QueuePipeline(
      queue,
      filter,
      deliverer,
      this.reporter,
      options.retry,
      this.stopSignals,
      {
        provider,
        ...(options.rejectAfter !== undefined ? { rejectAfter: options.rejectAfter } : {}),
        cannotReject,
      },
    );
    this.pipelines.set(queue, pipeline);
    return pipeline;
  }

  /** A `retry` or `reject` request from stdin: the queue's pipeline acts on it, or says why not. */
  blockedRequest(request: BlockedMessageRequest): void {
    const pipeline = this.pipelines.get(request.queue);
    if (pipeline !== undefined) {
      pipeline.request(request);
      return;
    }
    const why =
      this.options.mode === 'env'
        ? 'with env delivery your process consumes the session shadow itself: the sidecar delivers nothing, so nothing is blocked in it'
        : this.pipelines.size === 0
          ? 'delivery has not started yet'
          : `"${request.queue}" is not a queue of this split (its queues: ${[...this.pipelines.keys()].join(', ')})`;
    this.reporter.emit({
      type: 'warning',
      code: 'request-ignored',
      queue: request.queue,
      message: `${request.type === 'retry' ? 'Retry' : 'Reject'} of message ${request.messageId} of ${request.queue} ignored: ${why}. Nothing was changed.`,
      suggestedAction: 'Name a queue and the message its latest "failed" line names.',
    });
  }

  /** The http deliverer, or the relay the preflight opened. */
  private deliverer(split: QueueSplit): Deliverer {
    const { options, reporter } = this;
    if (options.mode === 'http') {
      if (options.target === undefined)
        throw usageError('--target', 'is required with --mode http.', 'Pass --target <url>.');
      const workloadName = split.spec.workload.name;
      const namespace = split.metadata.namespace ?? '';
      return new HttpDeliverer({
        target: options.target,
        source: (queue) => ({ namespace, workload: workloadName, queue }),
        timeoutMs: options.httpTimeoutMs,
        reporter,
      });
    }
    if (this.relay === undefined) throw new Error('the relay is opened by the preflight');
    return this.relay;
  }

  /** A `publish` request from stdin (Send Test Message), answered with one `publish-result` line. */
  async publish(request: PublishRequest): Promise<void> {
    const answer = (published: boolean, detail: { reason?: string; messageId?: string } = {}) =>
      this.reporter.emit({
        type: 'publish-result',
        id: request.id,
        queue: request.queue,
        published,
        ...detail,
      });
    if (this.stream === undefined) {
      answer(false, {
        reason:
          this.options.mode === 'env' || this.options.transport === 'broker'
            ? 'test messages go through the queue-agent, which this session does not use (env mode or --transport broker)'
            : 'the session is not streaming yet',
      });
      return;
    }
    const outcome = await this.stream.publish({
      requestId: request.id,
      queue: request.queue,
      headers: request.headers,
      body: Buffer.from(request.body, 'utf8'),
      ...(request.contentType !== undefined ? { contentType: request.contentType } : {}),
      ...(request.key !== undefined ? { key: request.key } : {}),
    });
    answer(
      outcome.published,
      outcome.published ? { messageId: outcome.messageId } : { reason: outcome.reason },
    );
  }

  /**
   * What the mode needs from this machine, checked before the QueueSplit is created (a failure
   * creates nothing). relay opens its deliverer here — reach, credentials and destinations — and
   * keeps it for the delivery.
   */
  private async preflight(
    connections: readonly QueueConnection[],
    relayDestinations: readonly RelayDestination[],
    setDeliverer: (d: Deliverer) => void,
  ): Promise<void> {
    const { options, reporter } = this;
    reporter.emit({
      type: 'progress',
      stage: 'resolving',
      message: `Preflight: checking what ${options.mode} delivery needs from this machine before creating the split.`,
    });
    if (options.mode === 'http') {
      if (options.target === undefined)
        throw usageError('--target', 'is required with --mode http.', 'Pass --target <url>.');
      // Adopting (--split), the split exists already and its creator (the extension) starts the
      // debuggee, which is the target, only after the sidecar (docs/launch-configurations.md
      // "Lifecycle"): a target not up yet is then expected, and delivery retries until it is.
      if (options.split === undefined) await checkHttpTarget(options.target);
    } else if (options.mode === 'relay') {
      const relay = new RelayDeliverer({
        brokers: options.relay.brokers,
        destinations: relayDestinations,
        reporter,
      });
      setDeliverer(relay);
      await relay.open();
      this.relay = relay;
    } else {
      await checkEnvBrokers(connections, options.addressMap);
    }
  }

  /** Starts consumers (http/relay) — env mode consumes nothing. Returns the `ready` queue list. */
  private async startDelivery(
    split: QueueSplit,
    connections: readonly QueueConnection[],
    consumers: ShadowConsumer[],
    setDeliverer: (d: Deliverer) => void,
  ): Promise<ReadyQueue[]> {
    const { options, reporter } = this;
    const statuses = split.status?.queues ?? [];
    const shadowOf = (queue: string) => statuses.find((s) => s.name === queue)?.shadow ?? {};
    if (options.mode === 'env') {
      return connections.map((c) => ({
        name: c.queue.name,
        provider: c.queue.provider,
        shadow: shadowOf(c.queue.name).source ?? '',
        ...(shadowOf(c.queue.name).group !== undefined
          ? { group: shadowOf(c.queue.name).group as string }
          : {}),
        deliversTo: 'env',
      }));
    }
    const deliverer = this.deliverer(split);
    setDeliverer(deliverer);
    const ready: ReadyQueue[] = [];
    for (const c of connections) {
      const shadow = shadowOf(c.queue.name);
      const source = shadow.source ?? '';
      // Reading the broker itself, this sidecar can always reject (consumers/*.ts).
      const pipeline = this.pipeline(
        c.queue.name,
        c.queue.provider,
        specFilter(split.spec),
        deliverer,
        () => undefined,
      );
      const consumer = sidecarProvider(c.broker.provider).consumer({
        queue: c.queue.name,
        shadow: { source, ...(shadow.group !== undefined ? { group: shadow.group } : {}) },
        connection: c.broker,
        addressMap: options.addressMap,
        reporter,
        splitName: split.metadata.name,
        onFatal: (err) => this.fail(err),
      });
      consumers.push(consumer);
      await consumer.start(pipeline);
      reporter.emit({
        type: 'progress',
        stage: 'consuming',
        queue: c.queue.name,
        message: `Consuming ${source}${shadow.group !== undefined ? ` (group ${shadow.group})` : ''} → ${deliverer.describe(c.queue.name)}.`,
      });
      ready.push({
        name: c.queue.name,
        provider: c.queue.provider,
        shadow: source,
        ...(shadow.group !== undefined ? { group: shadow.group } : {}),
        deliversTo: deliverer.describe(c.queue.name),
      });
    }
    return ready;
  }

  private emitReady(
    split: QueueSplit,
    connections: readonly QueueConnection[],
    queues: ReadyQueue[],
    stateFile: string,
  ): void {
    const { options, reporter } = this;
    if (options.mode !== 'env') {
      reporter.emit({
        type: 'ready',
        mode: options.mode,
        split: splitRef(split),
        queues,
        env: {},
        secretEnv: [],
      });
      return;
    }
    const env = sessionEnv(connections, split.status?.queues ?? [], reporter);
    const envFile =
      options.envFile ?? path.join(stateDirectory(), `${path.basename(stateFile, '.json')}.env`);
    writeEnvFile(envFile, env.all);
    // What the debugged process cannot do with a connection as resolved here, once per kind.
    const warnings = new Map<string, EnvWarning>();
    for (const c of connections) {
      const warning = laptopProvider(c.broker.provider).envWarning(c.broker);
      if (warning !== undefined && !warnings.has(warning.code)) warnings.set(warning.code, warning);
    }
    for (const warning of warnings.values()) reporter.emit({ type: 'warning', ...warning });
    // A queue whose workload reads its source from a mounted file: no env var can point the
    // debugged process at its session shadow; the user sets the same key in their local config.
    for (const q of split.status?.queues ?? []) {
      if (!q.fileOverrides?.length) continue;
      const keys = q.fileOverrides.map((f) => `${f.key}=${f.value}`).join(', ');
      reporter.emit({
        type: 'warning',
        code: 'file-settings',
        queue: q.name,
        message: `Queue "${q.name}" is named in a config file (${q.fileOverrides.map((f) => `${f.key} in ${f.path}`).join(', ')}), which no env var sets: until your process reads ${keys}, it consumes the real source beside the split.`,
        suggestedAction: `Set ${keys} in the config your debugged process reads (Spring Boot: or the matching env var), or use http delivery, where the sidecar consumes the session shadow for it.`,
      });
    }
    const visible = Object.fromEntries(Object.entries(env.all).filter(([name]) => !env.secret.has(name)));
    reporter.emit({
      type: 'ready',
      mode: 'env',
      split: splitRef(split),
      queues,
      env: visible,
      secretEnv: [...env.secret].sort(),
      envFile,
    });
    reporter.log(
      `env for your debug launch (secrets only in ${envFile}):\n${Object.entries(visible)
        .map(([k, v]) => `  ${k}=${v}`)
        .join('\n')}`,
    );
  }

  private async detach(
    api: QueueSplitApi,
    split: QueueSplit,
    stateFile: string,
    stopDelivery: () => Promise<void>,
  ): Promise<number> {
    const { options, reporter } = this;
    await stopDelivery();
    const ref = splitRef(split);
    reporter.emit({
      type: 'progress',
      stage: 'draining',
      split: ref,
      message: `Deleting QueueSplit ${ref.name}; its unconsumed messages go back to the app.`,
    });
    const statusBefore = await workloadStatusText(api.kube, split.spec.workload);
    // A fresh signal: the stop signal is already aborted, and this wait is bounded by its own timeout.
    const changes = new SplitChanges(api.kube, ref.name);
    const result = await detachSplit(api, reporter, split, {
      timeoutMs: options.detachTimeoutMs,
      signal: new AbortController().signal,
      changes,
      pollMs: Math.max(options.pollMs, 1_000),
    }).finally(() => changes.stop());
    if (result.drained) {
      removeState(stateFile);
      // Drained is about the route; whether the workload is handed back is the controller's
      // next step, reported on the workload (sidecar/handback.ts).
      const handback = await followHandback({
        kube: api.kube,
        workload: split.spec.workload,
        split: ref,
        before: statusBefore,
        timeoutMs: options.detachTimeoutMs - result.waitedMs,
        reporter,
      });
      if (handback.pending) reporter.emit({ type: 'warning', code: 'handback-pending', ...handback.pending });
      reporter.emit({
        type: 'detached',
        split: ref,
        drained: true,
        waitedMs: result.waitedMs,
        message: handback.message,
        ...(handback.status
          ? {
              handback: {
                phase: handback.status.phase,
                message: handback.status.message,
                ...(handback.status.nextAction !== undefined
                  ? { nextAction: handback.status.nextAction }
                  : {}),
              },
            }
          : {}),
      });
    } else {
      reporter.emit({
        type: 'warning',
        code: 'detach-timeout',
        message: `QueueSplit ${ref.name} is still draining after ${Math.round(result.waitedMs / 1000)}s.`,
        suggestedAction: `Nothing is lost: the controller finishes the drain without the sidecar. Watch it with \`kubectl get queuesplit ${ref.name} -n ${ref.namespace}\`.`,
      });
      reporter.emit({
        type: 'detached',
        split: ref,
        drained: false,
        waitedMs: result.waitedMs,
        message: `Delete requested; ${ref.name} was still draining when the sidecar exited.`,
      });
    }
    return SIDECAR_EXIT_CODES.ok;
  }
}

/** The workload as the developer's credentials see it, through both validation stages. */
async function readWorkload(kube: KubeTarget, ref: WorkloadRef): Promise<ResolvedWorkload> {
  const apps = kube.kc.makeApiClient(AppsV1Api);
  let object: WorkloadLike;
  try {
    const read =
      ref.kind === 'Deployment'
        ? await apps.readNamespacedDeployment({ name: ref.name, namespace: kube.namespace })
        : await apps.readNamespacedStatefulSet({ name: ref.name, namespace: kube.namespace });
    object = { ...(read as WorkloadLike), kind: ref.kind };
  } catch (err) {
    if (kubeStatus(err) === 404) {
      throw new SidecarError(
        'workload-not-found',
        `There is no ${ref.kind} ${ref.name} in namespace ${kube.namespace} (context ${kube.context}).`,
        'Check --workload, --namespace and --context.',
      );
    }
    throw kubeError(
      err,
      {
        verb: 'get',
        resource: ref.kind === 'Deployment' ? 'deployments.apps' : 'statefulsets.apps',
        namespace: kube.namespace,
        name: ref.name,
        purpose: 'to read its queue declaration',
      },
      kube.context,
    );
  }
  // A queue named in a mounted file is read from the ConfigMap the volume named before any split
  // (a split points it at a copy holding the application shadow).
  const declared = withOriginalEnv(object);
  const configMaps = await declaredConfigMaps(kube, declared);
  const resolved = configMaps.size > 0 ? resolveWorkload(declared, configMaps) : resolveWorkload(object);
  if (!resolved.ok) {
    throw new SidecarError(
      'declaration-invalid',
      `${ref.kind}/${ref.name} has no usable queue declaration: ${resolved.errors.map(formatFieldError).join(' | ')}`,
      `Fix the ${QUEUE_CONFIG_ANNOTATION} annotation (or the env it names) on ${ref.kind}/${ref.name}, then start again.`,
    );
  }
  return resolved.value;
}
