// Group commit across writers: requests that arrive while the database is busy with earlier ones
// go out together as one statement (one round trip, one commit, one WAL flush). The channel actors
// group a channel's messages; this groups the batches of many channels, which a busy server has
// ready at once, each from its own actor.

interface Waiting<In, Out> {
  input: In;
  resolve: (output: Out) => void;
  reject: (error: unknown) => void;
}

export class GroupCommit<In, Out> {
  private readonly waiting: Waiting<In, Out>[] = [];
  private running = 0;

  constructor(
    /** Writes the inputs in one statement; one output per input, in order. */
    private readonly writeAll: (inputs: In[]) => Promise<Out[]>,
    /** Statements in flight at once: a request starts one at once while fewer are running. */
    private readonly concurrency: number,
    /** The most inputs one statement takes. */
    private readonly maxInputs: number,
  ) {}

  write(input: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      if (this.running < this.concurrency) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running++;
    try {
      while (this.waiting.length > 0) {
        const group = this.waiting.splice(0, this.maxInputs);
        try {
          const outputs = await this.writeAll(group.map((w) => w.input));
          group.forEach((w, i) => w.resolve(outputs[i]!));
        } catch (err) {
          // Written alone, a bad input fails only its own writer.
          if (group.length === 1) group[0]!.reject(err);
          else for (const w of group) await this.writeAll([w.input]).then(([output]) => w.resolve(output!), w.reject);
        }
      }
    } finally {
      this.running--;
    }
  }
}
