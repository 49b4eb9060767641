// Actors that run the writes of one thing one at a time: a channel actor per channel in use (a
// message and a topic move there cannot interleave) and a user actor per active user (their read
// flags). Each write publishes its events before the next one starts, so every client sees them
// in commit order, also on PostgreSQL with many connections. Reads never queue here. An actor
// stops itself after a quiet spell and is spawned again by the next write.
import { AsyncLocalStorage } from 'node:async_hooks';
import { assign, createActor, fromPromise, setup, type ActorRefFrom } from 'xstate';

interface Job {
  run: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

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

  constructor(
    private readonly idleMs = 30_000,
    private readonly turn: Turn | null = null,
  ) {}

  get size(): number {
    return this.actors.size;
  }

  /** Runs `write` after the earlier writes of `id` have finished; resolves with its result. */
  run<T>(id: number, write: () => Promise<T>): Promise<T> {
    return this.enqueue(id, write);
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
  }
}
