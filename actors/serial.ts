// Actors that run the writes of one thing one at a time: a channel actor per channel in use (a
// message and a topic move there cannot interleave) and a user actor per active user (their read
// flags). Each write publishes its events before the next one starts, so every client sees them
// in commit order, also on PostgreSQL with many connections. Reads never queue here. An actor
// stops itself after a quiet spell and is spawned again by the next write.
// Group commit: requests of one kind (messages, reactions, flag changes) that arrive while their
// actor is writing wait in one batch, written and published together by the actor's next write.
// Each actor is an xstate machine whose context holds what it holds: its waiting jobs (a batch
// is one job), and for a channel its subscriber set (actors/channels.ts).
import { assign, createActor, setup, type ActorOptions, type AnyActorLogic } from 'xstate';
import { inCallersTransaction } from '../src/db/transaction.ts';

type Clock = NonNullable<ActorOptions<AnyActorLogic>['clock']>;

interface Job {
  run: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** Set for a batch's write: later items of its kind join it until it starts. */
  batch?: Batch;
}

interface Settle {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * The most items one batch takes; later ones open the next batch. Requests that pile up behind a
 * slow write (a flood into one channel) then go out as several statements of bounded size rather
 * than one whose arrays grow with the flood.
 */
export const MAX_BATCH_ITEMS = 500;

interface Batch {
  kind: string;
  items: unknown[];
  settles: Settle[];
  /** Its write started (past the cluster's lock, if any): later items open the next batch. */
  closed: boolean;
}

/**
 * Writes a whole batch in order; returns one result per item, or an Error for an item that failed
 * on its own (the others written). Throwing fails the whole batch: its items are then written one
 * at a time.
 */
export type BatchWriter<T, R> = (items: T[]) => Promise<(R | Error)[]>;

/** What a channel's or user's actor holds, in its machine's context. */
export interface ActorContext {
  /** Writes waiting, oldest first; while writing, the first is the one running. A batch waits as one job. */
  jobs: Job[];
  idleMs: number;
  /** The channel's subscriber set, held (or being read) while its actor lives; null when not held. */
  subscribers: Promise<readonly number[]> | null;
}

export type ActorEvent =
  | { type: 'RUN'; job: Job }
  | { type: 'LOAD'; set: Promise<readonly number[]> }
  | { type: 'LOADED'; set: Promise<readonly number[]> }
  | { type: 'LOAD_FAILED'; set: Promise<readonly number[]> }
  | { type: 'FORGET' }
  | { type: 'WRITTEN'; output: unknown }
  | { type: 'WRITE_FAILED'; error: unknown };

const actors = setup({
  types: {
    context: {} as ActorContext,
    events: {} as ActorEvent,
    input: {} as { idleMs: number },
  },
  actions: {
    enqueue: assign({ jobs: ({ context, event }) => [...context.jobs, (event as { job: Job }).job] }),
    /**
     * Starts the first job; its end comes back as WRITTEN or WRITE_FAILED. Not an invoked promise
     * actor: that spawns a child actor and an AbortController per job, which at 100 channels is
     * per message (bench/micro/send-steps.ts).
     */
    start: ({ context, self }) => {
      let running: Promise<unknown>;
      try {
        running = context.jobs[0]!.run();
      } catch (error) {
        running = Promise.reject(error);
      }
      // A stopped actor (the server stopping) takes no more events: its job's end is dropped.
      const tell = (event: ActorEvent) => self.getSnapshot().status === 'active' && self.send(event);
      running.then(
        (output) => tell({ type: 'WRITTEN', output }),
        (error: unknown) => tell({ type: 'WRITE_FAILED', error }),
      );
    },
    settle: ({ context, event }) => {
      if (event.type === 'WRITTEN') context.jobs[0]!.resolve(event.output);
      else if (event.type === 'WRITE_FAILED') context.jobs[0]!.reject(event.error);
    },
    dequeue: assign({ jobs: ({ context }) => context.jobs.slice(1) }),
    hold: assign({ subscribers: ({ event }) => (event as { set: Promise<readonly number[]> }).set }),
    drop: assign({ subscribers: null }),
  },
  guards: {
    hasJobs: ({ context }) => context.jobs.length > 0,
    /** The read that ended is the one held: a read dropped meanwhile changes nothing. */
    current: ({ context, event }) => (event as { set?: unknown }).set === context.subscribers,
  },
  delays: {
    idle: ({ context }) => context.idleMs,
  },
});

/** The writer's states, shared by both machines: it runs one job at a time, and stops after a quiet spell. */
const writerStates = (stopped: string) =>
  ({
    /** Nothing to write; the actor stops when this lasts its quiet spell. */
    idle: {
      always: { guard: 'hasJobs', target: 'writing' },
      on: { RUN: { actions: 'enqueue', target: 'writing' } },
      after: { idle: stopped },
    },
    /** The first job runs; what comes meanwhile waits behind it (a batch of its kind, or a job of its own). */
    writing: {
      entry: 'start',
      on: {
        RUN: { actions: 'enqueue' },
        WRITTEN: { actions: ['settle', 'dequeue'], target: 'idle' },
        WRITE_FAILED: { actions: ['settle', 'dequeue'], target: 'idle' },
      },
    },
  }) as const;

/** A user's actor: their flag writes, one at a time, those that wait batched. */
export const userMachine = actors.createMachine({
  id: 'user',
  context: ({ input }) => ({ jobs: [], idleMs: input.idleMs, subscribers: null }),
  initial: 'idle',
  states: {
    ...writerStates('stopped'),
    stopped: { type: 'final' },
  },
});

/**
 * A channel's actor: its writes as the user's, and beside them its subscriber set, read on first
 * use and dropped after a change of who subscribes.
 */
export const channelMachine = actors.createMachine({
  id: 'channel',
  context: ({ input }) => ({ jobs: [], idleMs: input.idleMs, subscribers: null }),
  initial: 'live',
  states: {
    live: {
      type: 'parallel',
      states: {
        writer: { initial: 'idle', states: writerStates('#channel.stopped') },
        subscribers: {
          initial: 'unknown',
          states: {
            /** Not held: the next message reads it. */
            unknown: { on: { LOAD: { target: 'loading', actions: 'hold' } } },
            /** Being read; callers meanwhile share the read. */
            loading: {
              on: {
                LOADED: { guard: 'current', target: 'held' },
                LOAD_FAILED: { guard: 'current', target: 'unknown', actions: 'drop' },
                FORGET: { target: 'unknown', actions: 'drop' },
              },
            },
            /** Held: messages to the channel read no subscription rows. */
            held: { on: { FORGET: { target: 'unknown', actions: 'drop' } } },
          },
        },
      },
    },
    /** After a quiet spell: the actor and all it held are gone; the next use spawns another. */
    stopped: { type: 'final' },
  },
});

/** A running channel or user actor, as SerialActors uses it. */
export interface WriterActor {
  send(event: ActorEvent): void;
  getSnapshot(): { context: ActorContext; value: unknown };
  subscribe(observer: { complete: () => void }): unknown;
  start(): unknown;
  stop(): unknown;
}

/** Wraps each write of one id, e.g. in a lock that makes the writes of a cluster's nodes take turns too. */
export type Turn = <T>(id: number, write: () => Promise<T>) => Promise<T>;

/** Finds or spawns the actor of a channel (or user) by id; an actor removes itself when it stops. */
export class SerialActors {
  protected readonly actors = new Map<number, WriterActor>();

  constructor(
    private readonly idleMs = 30_000,
    private readonly turn: Turn | null = null,
    private readonly machine: typeof userMachine | typeof channelMachine = userMachine,
    /** Whose time the quiet spell is counted in: a test's simulated clock, or the real one. */
    private readonly clock?: Clock,
  ) {}

  get size(): number {
    return this.actors.size;
  }

  /**
   * Runs `write` after the earlier writes of `id` have finished; resolves with its result. It
   * closes the open batch of `id`: what is sent after it is written after it.
   */
  run<T>(id: number, write: () => Promise<T>): Promise<T> {
    return this.enqueue(id, write);
  }

  /**
   * Adds `item` to the open batch of `id` if it is of the same `kind`, or opens one queued behind
   * the earlier writes of `id` (an item of another kind closes the open batch, as `run` does; so
   * does a full one, at MAX_BATCH_ITEMS). The open batch is the actor's last job, in its context,
   * until its write starts; joining it adds to it in place, without an event (the send path).
   * `writeAll` (the first item's: every batch of a kind comes from one caller) writes the batch.
   * When a batch fails as a whole, its items are written again one by one, so one bad item fails
   * only its own caller.
   */
  inBatch<T, R>(id: number, kind: string, item: T, writeAll: BatchWriter<T, R>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const actor = this.actorFor(id);
      const jobs = actor.getSnapshot().context.jobs;
      const open = jobs[jobs.length - 1]?.batch;
      const settle = { resolve: resolve as (value: unknown) => void, reject };
      if (open !== undefined && !open.closed && open.kind === kind && open.items.length < MAX_BATCH_ITEMS) {
        open.items.push(item);
        open.settles.push(settle);
        return;
      }
      const batch: Batch = { kind, items: [item], settles: [settle], closed: false };
      this.enqueue(
        id,
        () => {
          batch.closed = true;
          return writeBatch(batch, writeAll as BatchWriter<unknown, unknown>);
        },
        batch,
      ).catch((err: unknown) => {
        // The turn failed before the batch was written (a cluster lock not granted): all of it fails.
        batch.closed = true;
        for (const s of batch.settles) s.reject(err);
      });
    });
  }

  protected enqueue<T>(id: number, write: () => Promise<T>, batch?: Batch): Promise<T> {
    const turn = this.turn;
    const job = turn ? () => turn(id, write) : write;
    return new Promise<T>((resolve, reject) => {
      // The write runs in its caller's transaction (or in none), not in that of the write before it.
      this.actorFor(id).send({ type: 'RUN', job: { run: inCallersTransaction(job), resolve: resolve as (v: unknown) => void, reject, batch } });
    });
  }

  protected actorFor(id: number): WriterActor {
    const existing = this.actors.get(id);
    if (existing) return existing;
    const actor = createActor(this.machine, { input: { idleMs: this.idleMs }, ...(this.clock && { clock: this.clock }) }) as unknown as WriterActor;
    actor.subscribe({ complete: () => this.actors.delete(id) });
    this.actors.set(id, actor);
    actor.start();
    return actor;
  }

  stop(): void {
    for (const actor of this.actors.values()) actor.stop();
    this.actors.clear();
  }
}

async function writeBatch(batch: Batch, writeAll: BatchWriter<unknown, unknown>): Promise<void> {
  let results: unknown[];
  try {
    results = await writeAll(batch.items);
  } catch (err) {
    if (batch.items.length === 1) return batch.settles[0]!.reject(err);
    for (const [i, item] of batch.items.entries()) await writeBatch({ kind: batch.kind, items: [item], settles: [batch.settles[i]!], closed: true }, writeAll);
    return;
  }
  batch.settles.forEach((s, i) => (results[i] instanceof Error ? s.reject(results[i]) : s.resolve(results[i])));
}
