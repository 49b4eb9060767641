// Actors that run the writes of one thing one at a time: a channel actor per channel in use (a
// message and a topic move there cannot interleave) and a user actor per active user (their read
// flags). Each write publishes its events before the next one starts, so every client sees them
// in commit order, also on PostgreSQL with many connections. Reads never queue here. An actor
// stops itself after a quiet spell and is spawned again by the next write.
// Group commit: requests of one kind (messages, reactions, flag changes) that arrive while their
// actor is writing wait in one batch, written and published together by the actor's next write.
import { AsyncLocalStorage } from 'node:async_hooks';
import { assign, createActor, fromPromise, setup, type ActorRefFrom } from 'xstate';

interface Job {
  run: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
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
}

/**
 * Writes a whole batch in order; returns one result per item, or an Error for an item that failed
 * on its own (the others written). Throwing fails the whole batch: its items are then written one
 * at a time.
 */
export type BatchWriter<T, R> = (items: T[]) => Promise<(R | Error)[]>;

export const serialMachine = setup({
  types: {
    context: {} as { jobs: Job[]; idleMs: number },
    events: {} as { type: 'RUN'; job: Job },
    input: {} as { idleMs: number },
  },
  actors: {
    runJob: fromPromise(({ input }: { input: { job: Job } }) => input.job.run()),
  },
  actions: {
    enqueue: assign({ jobs: ({ context, event }) => [...context.jobs, event.job] }),
    // The invoked write's done/error events carry `output` or `error`.
    settle: ({ context, event }) => {
      const done = event as unknown as { output?: unknown; error?: unknown };
      if ('output' in done) context.jobs[0]!.resolve(done.output);
      else context.jobs[0]!.reject(done.error);
    },
    dequeue: assign({ jobs: ({ context }) => context.jobs.slice(1) }),
  },
  guards: {
    hasJobs: ({ context }) => context.jobs.length > 0,
  },
  delays: {
    idle: ({ context }) => context.idleMs,
  },
}).createMachine({
  id: 'serial-writer',
  context: ({ input }) => ({ jobs: [], idleMs: input.idleMs }),
  initial: 'idle',
  states: {
    idle: {
      always: { guard: 'hasJobs', target: 'writing' },
      on: { RUN: { actions: 'enqueue', target: 'writing' } },
      after: { idle: 'stopped' },
    },
    writing: {
      invoke: {
        src: 'runJob',
        input: ({ context }) => ({ job: context.jobs[0]! }),
        onDone: { actions: ['settle', 'dequeue'], target: 'idle' },
        onError: { actions: ['settle', 'dequeue'], target: 'idle' },
      },
      on: { RUN: { actions: 'enqueue' } },
    },
    stopped: { type: 'final' },
  },
});

type SerialActor = ActorRefFrom<typeof serialMachine>;

/** Wraps each write of one id, e.g. in a lock that makes the writes of a cluster's nodes take turns too. */
export type Turn = <T>(id: number, write: () => Promise<T>) => Promise<T>;

/** Finds or spawns the actor of a channel (or user) by id; an actor removes itself when it stops. */
export class SerialActors {
  private readonly actors = new Map<number, SerialActor>();
  /** Per id, the batch queued behind its running write that later items of its kind may still join. */
  private readonly openBatches = new Map<number, Batch>();

  constructor(
    private readonly idleMs = 30_000,
    private readonly turn: Turn | null = null,
  ) {}

  get size(): number {
    return this.actors.size;
  }

  /**
   * Runs `write` after the earlier writes of `id` have finished; resolves with its result. It
   * closes the open batch of `id`: what is sent after it is written after it.
   */
  run<T>(id: number, write: () => Promise<T>): Promise<T> {
    this.openBatches.delete(id);
    return this.enqueue(id, write);
  }

  /**
   * Adds `item` to the open batch of `id` if it is of the same `kind`, or opens one queued behind
   * the earlier writes of `id` (an item of another kind closes the open batch, as `run` does; so
   * does a full one, at MAX_BATCH_ITEMS).
   * `writeAll` (the first item's: every batch of a kind comes from one caller) writes the batch.
   * When a batch fails as a whole, its items are written again one by one, so one bad item fails
   * only its own caller.
   */
  inBatch<T, R>(id: number, kind: string, item: T, writeAll: BatchWriter<T, R>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const open = this.openBatches.get(id);
      const settle = { resolve: resolve as (value: unknown) => void, reject };
      if (open?.kind === kind && open.items.length < MAX_BATCH_ITEMS) {
        open.items.push(item);
        open.settles.push(settle);
        return;
      }
      const batch: Batch = { kind, items: [item], settles: [settle] };
      this.openBatches.set(id, batch);
      this.enqueue(id, () => {
        if (this.openBatches.get(id) === batch) this.openBatches.delete(id);
        return writeBatch(batch, writeAll as BatchWriter<unknown, unknown>);
      }).catch((err: unknown) => {
        // The turn failed before the batch was written (a cluster lock not granted): all of it fails.
        if (this.openBatches.get(id) === batch) this.openBatches.delete(id);
        for (const s of batch.settles) s.reject(err);
      });
    });
  }

  protected enqueue<T>(id: number, write: () => Promise<T>): Promise<T> {
    const turn = this.turn;
    const job = turn ? () => turn(id, write) : write;
    return new Promise<T>((resolve, reject) => {
      // The write runs in its caller's async context, not in that of the write before it.
      this.actorFor(id).send({ type: 'RUN', job: { run: AsyncLocalStorage.bind(job), resolve: resolve as (v: unknown) => void, reject } });
    });
  }

  protected actorFor(id: number): SerialActor {
    const existing = this.actors.get(id);
    if (existing) return existing;
    const actor = createActor(serialMachine, { input: { idleMs: this.idleMs } });
    actor.subscribe({
      complete: () => {
        this.actors.delete(id);
        this.stopped(id);
      },
    });
    this.actors.set(id, actor);
    actor.start();
    return actor;
  }

  /** An actor stopped after its quiet spell: what it held goes with it. */
  protected stopped(_id: number): void {}

  stop(): void {
    for (const [id, actor] of this.actors) {
      actor.stop();
      this.stopped(id);
    }
    this.actors.clear();
    this.openBatches.clear();
  }
}

async function writeBatch(batch: Batch, writeAll: BatchWriter<unknown, unknown>): Promise<void> {
  let results: unknown[];
  try {
    results = await writeAll(batch.items);
  } catch (err) {
    if (batch.items.length === 1) return batch.settles[0]!.reject(err);
    for (const [i, item] of batch.items.entries()) await writeBatch({ kind: batch.kind, items: [item], settles: [batch.settles[i]!] }, writeAll);
    return;
  }
  batch.settles.forEach((s, i) => (results[i] instanceof Error ? s.reject(results[i]) : s.resolve(results[i])));
}
