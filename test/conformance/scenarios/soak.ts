// The soak: three route slots attach and detach at random while a foreign producer
// sends records with random headers, null and binary values, repeated keys and large bodies.
// One engine crash is injected at the start (the crash child, docs/design.md §5.2). At the end every id
// was acknowledged at least once, never in two destinations, twice only for the crash victim,
// and every route shadow holds only records its filter matches.
//
// Seeded: the plan (actions, records, pauses) comes from QS_SOAK_SEED or a fresh seed, printed
// at the start and in every failure; rerun with QS_SOAK_SEED=<seed> to replay the same plan.
import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import { test } from 'node:test';
import { sleep } from '../../support/poll';
import fc from 'fast-check';
import type { RouteSpec } from '../../../agent/engine/contract';
import type { ConsumerHandle, ProviderHarness } from '../harness';
import { foreignProducer, type ForeignCaps, type SoakRecord } from '../soak/foreign';
import { assertDelivery, USER } from '../delivery';
import { done, untilDone } from '../steps';
import { testLogger, waitFor, withSplit } from '../support';
import { crashChildAt } from './crash';

const SLOTS = 3;
const STEPS = 8;
/** Users 0..2 match the slots' filters; user 3 matches none; -1 sends no user header. */
const userOf = (lane: number): string | undefined => (lane < 0 ? undefined : `soak-user-${lane}`);
/** The consumers ack everything; a huge "ack first" count means exactly that. */
const ACK_ALL = Number.MAX_SAFE_INTEGER;

interface PlannedRecord {
  readonly lane: number;
  readonly key: string | null;
  readonly body: { kind: 'null' } | { kind: 'text'; size: number } | { kind: 'bytes'; bytes: Uint8Array };
  readonly extra: readonly (readonly [string, string])[];
  readonly rawHeader: Uint8Array | null;
  readonly nullHeader: boolean;
  readonly repeatHeader: boolean;
  readonly ccSource: boolean;
}

interface Step {
  /** Toggles that slot (attach when free, detach when attached); -1 changes nothing. */
  readonly toggle: number;
  readonly records: readonly PlannedRecord[];
  readonly pauseMs: number;
}

const headerText = fc.string({ unit: fc.constantFrom(...'abcxyz019 ✓üé名'), maxLength: 12 });

function planArbitrary(caps: ForeignCaps): fc.Arbitrary<Step[]> {
  const body = fc.oneof(
    { weight: 2, arbitrary: fc.constant({ kind: 'null' as const }) },
    {
      weight: 10,
      arbitrary: fc.integer({ min: 0, max: 200 }).map((size) => ({ kind: 'text' as const, size })),
    },
    // Large bodies: up to 300 kB, under the brokers' default message size limits.
    {
      weight: 2,
      arbitrary: fc.integer({ min: 50_000, max: 300_000 }).map((size) => ({ kind: 'text' as const, size })),
    },
    ...(caps.binaryBodies
      ? [
          {
            weight: 4,
            arbitrary: fc
              .uint8Array({ minLength: 1, maxLength: 64 })
              .map((bytes) => ({ kind: 'bytes' as const, bytes })),
          },
        ]
      : []),
  );
  const record: fc.Arbitrary<PlannedRecord> = fc.record({
    lane: fc.integer({ min: -1, max: SLOTS }),
    key: fc.option(fc.constantFrom('k0', 'k1', 'k2'), { nil: null }), // keys repeat on purpose
    body,
    extra: fc.array(fc.tuple(fc.constantFrom('x-soak-a', 'x-soak-b', 'x-soak-c'), headerText), {
      maxLength: 3,
    }),
    rawHeader: caps.rawHeaders
      ? fc.option(fc.uint8Array({ minLength: 1, maxLength: 16 }), { nil: null })
      : fc.constant(null),
    nullHeader: caps.rawHeaders ? fc.boolean() : fc.constant(false),
    repeatHeader: caps.rawHeaders ? fc.boolean() : fc.constant(false),
    // About one record in ten.
    ccSource: caps.ccHeaders ? fc.integer({ min: 0, max: 9 }).map((n) => n === 0) : fc.constant(false),
  });
  const step = fc.record({
    toggle: fc.integer({ min: -1, max: SLOTS - 1 }),
    records: fc.array(record, { minLength: 5, maxLength: 25 }),
    pauseMs: fc.integer({ min: 0, max: 400 }),
  });
  return fc.array(step, { minLength: STEPS, maxLength: STEPS });
}

function toRecord(p: PlannedRecord, id: string): SoakRecord {
  const user = userOf(p.lane);
  const headers: [string, string | Buffer | null][] = [];
  // Extra headers with the same name as the filter key would make the match ambiguous; the
  // random names never collide with it.
  for (const [k, v] of p.extra) {
    if (p.repeatHeader || !headers.some(([name]) => name === k)) headers.push([k, v]);
  }
  if (p.rawHeader) headers.push(['x-soak-raw', Buffer.from(p.rawHeader)]);
  if (p.nullHeader) headers.push(['x-soak-null', null]);
  if (user !== undefined) headers.push([USER, user]);
  const body =
    p.body.kind === 'null'
      ? null
      : p.body.kind === 'bytes'
        ? Buffer.from(p.body.bytes)
        : `${id} `.padEnd(p.body.size, 'soak ');
  return { id, lane: Math.max(p.lane, 0), key: p.key, body, headers, ccSource: p.ccSource };
}

export function soakScenarios(h: ProviderHarness): void {
  test('soak: random route attach/detach under foreign traffic, one crash, no loss', () =>
    withSplit(h, async (t, engines) => {
      const producer = foreignProducer(h);
      const seed = process.env.QS_SOAK_SEED ? Number(process.env.QS_SOAK_SEED) : randomInt(2 ** 31);
      const [plan] = fc.sample(planArbitrary(producer.caps), { seed, numRuns: 1 });
      if (!plan) throw new Error('soak: no plan');
      const started = Date.now();
      console.log(`soak ${h.name}: seed ${seed} (rerun with QS_SOAK_SEED=${seed})`);
      const run = randomBytes(3).toString('hex');
      const sent = new Map<string, number>(); // id -> lane
      const make = (step: number, records: readonly PlannedRecord[]): SoakRecord[] =>
        records.map((p, i) => {
          const r = toRecord(p, `soak-${run}-${step}-${i}`);
          sent.set(r.id, p.lane);
          return r;
        });

      // Routes: slot s has filter user=soak-user-s; every attach makes a new route (and shadow).
      const attached = new Map<number, RouteSpec>();
      const slotOf = new Map<string, number>(); // shadow -> slot
      const consumers = new Map<string, ConsumerHandle>(); // destination -> its consumer
      let attaches = 0;
      const newRoute = (slot: number): RouteSpec => {
        const r = t.route(`s${slot}-${attaches++}`, { [USER]: userOf(slot)! });
        slotOf.set(r.shadow, slot);
        return r;
      };
      const table = () => [...attached.values()];

      // The crash: a child engine copies the first batch under generation 1 with slot 0
      // attached and is killed between the victim's shadow publish and its source ack.
      attached.set(0, newRoute(0));
      const first = make(0, [{ ...plan[0]!.records[0]!, lane: 0 }, ...plan[0]!.records.slice(1)]);
      const victim = first[0]!.id;
      await producer.send(t, first);
      const checkpoint = await crashChildAt(h.childSpec(t, 1, table(), { prefetch: 1 }), victim);
      const e = engines.track(h.engine(t, { logger: testLogger() }));
      await untilDone(() => e.recover(checkpoint), 'recover');
      let generation = 1;
      consumers.set(t.appShadow, await h.consume(t.appShadow, { prefetch: 50, ackFirst: ACK_ALL }));
      const s0 = attached.get(0)!.shadow;
      consumers.set(s0, await h.consume(s0, { prefetch: 50, ackFirst: ACK_ALL }));
      // Its second copy goes where the first went (the route table is unchanged until then).
      await waitFor(
        `seed ${seed}: the crash victim delivered twice to ${s0}`,
        async () => consumers.get(s0)!.acked.filter((id) => id === victim).length,
        (n) => n >= 2,
        60_000,
      );

      for (const [i, step] of plan.entries()) {
        if (i > 0) await producer.send(t, make(i, step.records));
        await sleep(step.pauseMs);
        if (step.toggle < 0) continue;
        const slot = step.toggle;
        const leaving = attached.get(slot);
        if (leaving) attached.delete(slot);
        else attached.set(slot, newRoute(slot));
        done(await e.reconcileRoutes(++generation, table()), `seed ${seed}: reconcileRoutes ${generation}`);
        if (leaving) {
          // The developer's session ends: its consumer goes, the residue moves to the app shadow.
          await consumers.get(leaving.shadow)?.kill();
          await untilDone(() => e.drainRoute(leaving), `seed ${seed}: drainRoute ${leaving.routeId}`, 60_000);
        } else {
          const shadow = attached.get(slot)!.shadow;
          consumers.set(shadow, await h.consume(shadow, { prefetch: 50, ackFirst: ACK_ALL }));
        }
      }

      const acked = () => {
        const all = new Set<string>();
        for (const c of consumers.values()) for (const id of c.acked) all.add(id);
        return all;
      };
      await waitFor(
        `seed ${seed}: every sent id acknowledged somewhere`,
        async () => [...sent.keys()].filter((id) => !acked().has(id)).length,
        (missing) => missing === 0,
        90_000,
      ).catch((err: unknown) => {
        const missing = [...sent.keys()].filter((id) => !acked().has(id));
        throw new Error(
          `seed ${seed}: ${missing.length} ids never acknowledged, e.g. ${missing.slice(0, 5).join(', ')}`,
          {
            cause: err,
          },
        );
      });
      await sleep(1_500); // late duplicates or strays would arrive now
      for (const c of consumers.values()) await c.kill();

      const destinations = Object.fromEntries([...consumers].map(([dest, c]) => [dest, c.acked]));
      try {
        assertDelivery({ inputs: [...sent.keys()], destinations, mayDuplicate: [victim] });
        for (const [shadow, slot] of slotOf) {
          const foreign = (destinations[shadow] ?? []).filter((id) => sent.get(id) !== slot);
          assert.deepEqual(foreign, [], `${shadow} (slot ${slot}) got records its filter does not match`);
        }
        assert.equal(e.status().health, 'ok', JSON.stringify(e.status().conditions));
      } catch (err) {
        throw new Error(`soak ${h.name} seed ${seed}: ${err instanceof Error ? err.message : String(err)}`, {
          cause: err,
        });
      }
      console.log(
        `soak ${h.name}: seed ${seed}, ${sent.size} records, ${attaches} attaches, generation ${generation}, ` +
          `${Math.round((Date.now() - started) / 1000)} s`,
      );
    }));
}
