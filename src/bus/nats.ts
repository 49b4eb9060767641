// The bus of a cluster: every process publishes to one JetStream stream (subject
// `chat.<cluster>.events`) and reads all of it back through an ordered consumer, its own events
// included, so every process delivers every event in the one order the stream gives them: the
// order in which their publishers stored them. A channel's writers take turns (cluster/locks.ts)
// and each waits until its events are stored before the next one starts (`settled`), so each
// channel's events keep their commit order on every node.
//
// Publishing: events wait in an outbox and leave in frames (a JSON array of items), one frame in
// flight at a time, so a process's events are stored in the order it published them; each frame
// has a message id, so a frame sent again after a lost acknowledgment is stored once (and a
// reader drops any repeat it still sees). While NATS is down the outbox keeps everything and
// sends it, in order, once NATS is back: nothing published is dropped, and `settled` waits until
// then (callers answer their clients earlier: bus.ts, `storedOrLater`).
//
// Reading: the stream is file-backed and keeps events for a while (retentionMs), so a process
// that was cut off resumes where it stopped, and one that restarts resumes after the position it
// saved with its queues (`pause`, `resume`). If the stream lost events a process has not read
// (NATS lost its storage, or the process was away longer than the retention) the process tells
// its listeners (`lost`): the event queues end and their clients register again. A queue whose
// node died is rebuilt on another by replaying the stream from its checkpoint (`replay`).
import { randomBytes } from 'node:crypto';
import {
  DeliverPolicy,
  DiscardPolicy,
  Events,
  headers,
  nanos,
  StorageType,
  type Consumer,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
  type StreamInfo,
} from 'nats';
import { storedOrLater, type BusListener, type CacheChange, type EventBus, type EventEnvelope, type EventHandler, type StreamPlace } from './bus.ts';
import { log } from '../log.ts';

/** Items are gathered into frames of about this size; a bigger item is sent in several parts. */
const FRAME_BYTES = 256 * 1024;
const PUBLISH_TIMEOUT_MS = 2_000;
/** How long closing waits for NATS to store what is queued. */
const CLOSE_WAIT_MS = 5_000;
const RETRY_MAX_MS = 2_000;
/**
 * Outbox rows a reader remembers having delivered, so a row another node publishes again after its
 * writer died is dropped if the writer had stored it: recovery comes within seconds of the death,
 * far fewer rows than this later.
 */
const REMEMBERED_ROWS = 100_000;
/** Stream messages a replay fetches at a time. */
const REPLAY_BATCH = 500;
/** How long a replay waits for this process's reader to reach where the replay starts. */
const REPLAY_WAIT_MS = 10_000;

/** A replay found that the stream no longer holds where it was to start (it is kept retentionMs). */
export class StreamGap extends Error {}

export interface NatsBusOptions {
  connection: NatsConnection;
  /** Names the stream and its subject: the processes of one deployment share it, no other does. */
  clusterId: string;
  nodeId: string;
  /** How long the stream keeps events: a process cut off for longer loses some and starts over. */
  retentionMs?: number;
}

/** One item of a frame: an event (`o`: of that outbox row), or a cache change. */
type WireItem = { e: WireEnvelope; o?: number } | { c: CacheChange };
/** An envelope with its per-user additions grouped by value: most recipients of a message share one. */
type PerUser = NonNullable<EventEnvelope['perUser']>[number];
type WireEnvelope = Omit<EventEnvelope, 'perUser'> & { perUserGroups?: [PerUser, number[]][] };

/** Where `follow` starts reading: after `sequence` of the stream created at `created`, dropping the frames completed up to `deliveredThrough`. */
interface ResumeAt {
  created: string;
  sequence: number;
  deliveredThrough: number;
}

interface Waiter {
  upTo: number;
  resolve: () => void;
}

const isNotFound = (err: unknown) => (err as { api_error?: { err_code?: number } }).api_error?.err_code === 10059 || /stream not found/i.test(String(err));

/**
 * Frames as the stream's messages complete them: a frame sent in parts is put together (parts of
 * different origins may interleave), and a part sent again after a lost acknowledgment is dropped.
 */
class Frames {
  /** Parts of a big item, by origin, until its last part arrives. */
  private readonly parts = new Map<string, Uint8Array[]>();
  /** The stream sequence of each held frame's first part, by origin. */
  readonly partsFrom = new Map<string, number>();
  private readonly lastFrame = new Map<string, number>();

  clear(): void {
    this.parts.clear();
    this.partsFrom.clear();
  }

  /** The frame `m` completes, with the stream sequence of its first part; null while parts are missing, or for a repeat. */
  take(m: JsMsg): { origin: string; seq: number; data: Buffer } | null {
    const origin = m.headers?.get('Chat-Origin') ?? '';
    const frame = Number(m.headers?.get('Chat-Frame'));
    if (frame <= (this.lastFrame.get(origin) ?? -1)) return null;
    this.lastFrame.set(origin, frame);
    const held = this.parts.get(origin);
    if (m.headers?.has('Chat-More')) {
      if (held) held.push(m.data);
      else {
        this.parts.set(origin, [m.data]);
        this.partsFrom.set(origin, m.seq);
      }
      return null;
    }
    const seq = held ? this.partsFrom.get(origin)! : m.seq;
    this.parts.delete(origin);
    this.partsFrom.delete(origin);
    return { origin, seq, data: Buffer.concat([...(held ?? []), m.data]) };
  }
}

export class NatsBus implements EventBus {
  private readonly handlers = new Set<EventHandler>();
  private readonly listeners = new Set<BusListener>();
  private readonly js: JetStreamClient;
  private readonly subject: string;
  private readonly stream: string;
  /** This process's run (NODE_ID.random): frames are numbered per run. */
  readonly origin: string;
  private readonly retentionMs: number;
  // Publishing.
  private outbox: string[] = [];
  private queued = 0;
  private stored = 0;
  private waiters: Waiter[] = [];
  private pumping = false;
  private frameNumber = 0;
  // Reading.
  private consumer: ConsumerMessages | null = null;
  /** Between `resume` and `pause`. */
  private reading = false;
  /** The stream's creation time as last seen: another one means NATS lost the stream. */
  private streamCreated = '';
  private nextSequence = 0;
  /** Frames completed up to this sequence were delivered before the restart this reader resumed from. */
  private deliveredThrough = 0;
  private following: Promise<void> = Promise.resolve();
  private readonly frames = new Frames();
  /**
   * Outbox rows delivered lately, with the stream sequence of the frame that delivered each, oldest
   * first (a Map iterates in insertion order); a replay delivers a row from the same frame.
   */
  private readonly deliveredRows = new Map<number, number>();
  private closed = false;
  /** Whether the connection to NATS is up (it reconnects by itself after a loss). */
  private online = true;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    opts: NatsBusOptions,
  ) {
    this.js = nc.jetstream();
    this.subject = `chat.${opts.clusterId}.events`;
    this.stream = `chat_${opts.clusterId}`;
    this.origin = `${opts.nodeId}.${randomBytes(6).toString('hex')}`;
    this.retentionMs = opts.retentionMs ?? 10 * 60_000;
  }

  /** Connects to the cluster's stream, creating it if needed; delivery starts with `resume`. */
  static async open(opts: NatsBusOptions): Promise<NatsBus> {
    const bus = new NatsBus(opts.connection, await opts.connection.jetstreamManager(), opts);
    await bus.streamInfo();
    void bus.watchConnection();
    return bus;
  }

  async resume(position: string | null): Promise<void> {
    this.reading = true;
    const place = position === null ? { afterSeq: 0, deliveredThrough: 0 } : positionPlace(position);
    await this.follow({ created: position?.split('|')[0] ?? '', sequence: place.afterSeq, deliveredThrough: place.deliveredThrough });
  }

  async pause(): Promise<string> {
    this.reading = false;
    this.consumer?.stop();
    this.consumer = null;
    await this.following.catch((err: unknown) => log.error('could not follow the event stream', { error: String(err) }));
    // Before a frame still incomplete, so that reading again gets it whole.
    const place = this.readPosition();
    return `${this.streamCreated}|${place.afterSeq}|${place.deliveredThrough}`;
  }

  publish(envelope: EventEnvelope): void {
    this.enqueue(JSON.stringify({ e: toWire(envelope) }));
  }

  publishAll(envelopes: readonly EventEnvelope[], outboxRow?: number): void {
    if (envelopes.length === 0) return;
    const extra = outboxRow === undefined ? '' : `,"o":${outboxRow}`;
    // One outbox entry, so never split between frames.
    this.enqueue(envelopes.map((e) => `{"e":${JSON.stringify(toWire(e))}${extra}}`).join(','));
  }

  announce(change: CacheChange): void {
    this.enqueue(JSON.stringify({ c: change }));
  }

  subscribe(handler: EventHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  listen(listener: BusListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  connected(): boolean {
    return this.online && !this.closed && !this.nc.isClosed();
  }

  settled(): Promise<void> | null {
    if (this.stored === this.queued) return null;
    return new Promise((resolve) => this.waiters.push({ upTo: this.queued, resolve }));
  }

  /** Sends what is queued (for a few seconds at most), then stops reading. The connection stays open. */
  async close(): Promise<void> {
    if (this.closed) return;
    await storedOrLater(this, CLOSE_WAIT_MS);
    this.closed = true;
    this.consumer?.stop();
    for (const w of this.waiters) w.resolve();
    this.waiters = [];
    this.handlers.clear();
    this.listeners.clear();
  }

  /** Removes the stream (tests, and a deployment being taken down). */
  async destroy(): Promise<void> {
    await this.close();
    await this.jsm.streams.delete(this.stream).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  }

  private enqueue(item: string): void {
    if (this.closed) return void log.warn('an event published after the bus closed is dropped');
    this.outbox.push(item);
    this.queued++;
    if (!this.pumping) {
      this.pumping = true;
      // Everything published in the same tick (a batch of messages) leaves in one frame.
      queueMicrotask(() => void this.pump());
    }
  }

  private async pump(): Promise<void> {
    let failures = 0;
    while (this.outbox.length > 0 && !this.closed) {
      const { chunks, count } = this.nextFrame();
      for (let i = 0; i < chunks.length && !this.closed; ) {
        const h = headers();
        h.set('Chat-Origin', this.origin);
        h.set('Chat-Frame', String(this.frameNumber));
        if (i < chunks.length - 1) h.set('Chat-More', '1');
        try {
          await this.js.publish(this.subject, chunks[i], { msgID: `${this.origin}.${this.frameNumber}`, headers: h, timeout: PUBLISH_TIMEOUT_MS });
          this.frameNumber++;
          i++;
          if (failures > 0) log.info('NATS stores events again', { after: failures });
          failures = 0;
        } catch (err) {
          if (failures++ === 0) log.warn('NATS did not store events; retrying', { error: String(err) });
          // No stream (NATS lost it): make it again, and read the new one.
          if (/503|no responders/i.test(String(err)) || isNotFound(err)) {
            await this.follow().catch((e: unknown) => log.warn('could not make the event stream again yet', { error: String(e) }));
          }
          await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** failures, RETRY_MAX_MS)));
        }
      }
      this.stored += count;
      while (this.waiters.length > 0 && this.waiters[0]!.upTo <= this.stored) this.waiters.shift()!.resolve();
    }
    this.pumping = false;
  }

  /** Takes the next items off the outbox: one frame, in parts when one item is too big for a message. */
  private nextFrame(): { chunks: Uint8Array[]; count: number } {
    let bytes = 0;
    let count = 0;
    while (count < this.outbox.length && (count === 0 || bytes + this.outbox[count]!.length < FRAME_BYTES)) bytes += this.outbox[count++]!.length;
    const data = Buffer.from(`[${this.outbox.splice(0, count).join(',')}]`);
    // Room for the headers under the server's largest message.
    const limit = Math.max(1024, (this.nc.info?.max_payload ?? 1024 * 1024) - 4096);
    const chunks: Uint8Array[] = [];
    for (let at = 0; at < data.length; at += limit) chunks.push(data.subarray(at, at + limit));
    return { chunks, count };
  }

  /**
   * Starts reading at `resumeAt` (after that sequence, if the stream is still the one it names;
   * else after the stream's end, and the events in between are lost), or, after a reconnection or
   * when publishing found no stream, starts over if NATS lost the stream we were reading.
   */
  private follow(resumeAt?: ResumeAt): Promise<void> {
    this.following = this.following.then(
      () => this.followNow(resumeAt),
      () => this.followNow(resumeAt),
    );
    return this.following;
  }

  private async followNow(resumeAt?: ResumeAt): Promise<void> {
    if (this.closed || !this.reading) return;
    const info = await this.streamInfo();
    if (!resumeAt && info.created === this.streamCreated) return;
    const replaced = this.streamCreated !== '' && info.created !== this.streamCreated;
    const continues = resumeAt?.created === info.created;
    this.streamCreated = info.created;
    this.consumer?.stop();
    this.nextSequence = continues ? resumeAt!.sequence + 1 : info.state.last_seq + 1;
    this.deliveredThrough = continues ? resumeAt!.deliveredThrough : 0;
    this.frames.clear();
    const consumer = await this.js.consumers.get(this.stream, { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: this.nextSequence });
    this.consumer = await consumer.consume({ callback: (m) => this.receive(m), max_messages: 1000 });
    if (replaced) this.reportLoss('NATS lost the event stream; it was made again');
    else if (resumeAt?.created && !continues) this.reportLoss('the stream the saved queues were reading is gone');
  }

  private async streamInfo(): Promise<StreamInfo> {
    try {
      return await this.jsm.streams.info(this.stream);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    return this.jsm.streams.add({
      name: this.stream,
      subjects: [this.subject],
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      max_age: nanos(this.retentionMs),
      duplicate_window: nanos(this.retentionMs),
    });
  }

  private async watchConnection(): Promise<void> {
    for await (const status of this.nc.status()) {
      if (this.closed) return;
      if (status.type === Events.Disconnect) {
        this.online = false;
        log.warn('lost the connection to NATS; reconnecting', { server: String(status.data) });
      }
      if (status.type === Events.Reconnect) {
        this.online = true;
        log.info('reconnected to NATS', { server: String(status.data) });
        for (const listener of this.listeners) listener.reconnected?.();
        this.follow().catch((err: unknown) => log.error('could not follow the event stream after reconnecting', { error: String(err) }));
      }
    }
  }

  /**
   * Where a reader starting now gets every envelope this process has not delivered yet: after the
   * last sequence read, or before the first part of a frame still incomplete, dropping the frames
   * completed up to the last sequence read.
   */
  readPosition(): StreamPlace {
    // Also the frames delivered before a restart that a reader reading them again after it skips.
    return { afterSeq: startOf(this.nextSequence, this.frames) - 1, deliveredThrough: Math.max(this.nextSequence - 1, this.deliveredThrough) };
  }

  private reportLoss(reason: string): void {
    log.warn('events may have been lost; event queues start over', { reason });
    for (const listener of this.listeners) listener.lost?.();
  }

  private receive(m: JsMsg): void {
    if (!this.reading || m.seq < this.nextSequence) return;
    if (m.seq > this.nextSequence) {
      this.frames.clear();
      this.reportLoss(`stream messages ${this.nextSequence}-${m.seq - 1} expired before this process read them`);
    }
    this.nextSequence = m.seq + 1;
    const frame = this.frames.take(m);
    // A frame completed before the saved queues were saved, read again for one in parts: delivered then.
    if (!frame || m.seq <= this.deliveredThrough) return;
    let items: WireItem[];
    try {
      items = JSON.parse(frame.data.toString('utf8')) as WireItem[];
    } catch (err) {
      log.error('unreadable frame on the event stream', { origin: frame.origin, error: String(err) });
      return this.reportLoss('an unreadable frame');
    }
    const own = frame.origin === this.origin;
    const place = { seq: startOf(frame.seq, this.frames), endSeq: m.seq };
    // A row's events are consecutive in one frame: decided on at its first.
    let row: number | undefined;
    let deliverRow = true;
    for (const item of items) {
      if ('c' in item) {
        if (!own) for (const listener of this.listeners) listener.changed?.(item.c);
        continue;
      }
      if (item.o !== undefined && item.o !== row) {
        row = item.o;
        deliverRow = this.firstOfRow(item.o, frame.seq);
      }
      if (item.o === undefined || deliverRow) this.deliver(fromWire(item.e, place));
    }
  }

  /** Whether a row's events are to be delivered: not when another node publishes again a row its writer had stored. */
  private firstOfRow(row: number, seq: number): boolean {
    if (this.deliveredRows.has(row)) return false;
    this.deliveredRows.set(row, seq);
    if (this.deliveredRows.size > REMEMBERED_ROWS) this.deliveredRows.delete(this.deliveredRows.keys().next().value!);
    return true;
  }

  /**
   * Hands `deliver` again, in order, the envelopes this process's reader delivered after `from`
   * (a queue rebuilt from its checkpoint, gateway/queue-takeover.ts): reading the stream after
   * `from.afterSeq`, the frames completed after `from.deliveredThrough`. Then calls `caughtUp` in
   * the same tick as the last: what the reader delivers from then on is what follows. Frames the
   * reader still holds parts of are left to it. Rejects with StreamGap when the stream no longer
   * holds `from.afterSeq + 1`.
   */
  async replay(from: StreamPlace, deliver: (envelope: EventEnvelope) => void, caughtUp: () => void): Promise<void> {
    const afterSeq = from.afterSeq;
    const frames = new Frames();
    /** Rows this process has forgotten (REMEMBERED_ROWS), delivered at their first frame here. */
    const rows = new Set<number>();
    const waitUntil = Date.now() + REPLAY_WAIT_MS;
    let next = afterSeq + 1;
    let consumer: Consumer | null = null;
    for (;;) {
      const end = this.nextSequence - 1;
      if (next - 1 === end) return caughtUp();
      // The checkpoint's node had read further than this one: wait for this reader to get there.
      if (next - 1 > end) {
        if (Date.now() > waitUntil) throw new Error(`this node's reader is behind the checkpoint (${end} < ${next - 1})`);
        await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      consumer ??= await this.js.consumers.get(this.stream, { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: next });
      const batch = await consumer.fetch({ max_messages: Math.min(REPLAY_BATCH, end - next + 1), expires: 5_000 });
      for await (const m of batch) {
        if (m.seq !== next) throw new StreamGap(`the event stream no longer holds sequence ${next}`);
        next++;
        const frame = frames.take(m);
        if (!frame) continue;
        let items: WireItem[];
        try {
          items = JSON.parse(frame.data.toString('utf8')) as WireItem[];
        } catch {
          // The end of a frame in parts whose beginning came before `afterSeq`: delivered before the checkpoint.
          continue;
        }
        // Completed before the checkpoint (a frame sent in parts completes after its first part): delivered then.
        const before = m.seq <= from.deliveredThrough;
        const place = { seq: startOf(frame.seq, frames), endSeq: m.seq };
        let row: number | undefined;
        let deliverRow = true;
        for (const item of items) {
          if ('c' in item) continue;
          if (item.o !== undefined && item.o !== row) {
            row = item.o;
            const first = this.deliveredRows.get(row);
            if (first !== undefined) deliverRow = first === frame.seq;
            else {
              deliverRow = !rows.has(row);
              rows.add(row);
            }
          }
          if (!before && (item.o === undefined || deliverRow)) deliver(fromWire(item.e, place));
        }
      }
    }
  }

  private deliver(envelope: EventEnvelope): void {
    for (const handler of this.handlers) {
      try {
        handler(envelope);
      } catch (err) {
        log.error('event handler failed', { error: String(err), type: envelope.event.type });
      }
    }
  }
}

/** Where reading resumes from a position `pause` returned (one without its third part: after its sequence). */
export function positionPlace(position: string): StreamPlace {
  const [, afterSeq, deliveredThrough] = position.split('|');
  return { afterSeq: Number(afterSeq ?? 0), deliveredThrough: Number(deliveredThrough ?? afterSeq ?? 0) };
}

function toWire(envelope: EventEnvelope): WireEnvelope {
  const { perUser, ...rest } = envelope;
  if (!perUser) return rest;
  const groups = new Map<string, [PerUser, number[]]>();
  for (const [id, extra] of Object.entries(perUser)) {
    const key = JSON.stringify(extra);
    const group = groups.get(key);
    if (group) group[1].push(Number(id));
    else groups.set(key, [extra, [Number(id)]]);
  }
  return { ...rest, perUserGroups: [...groups.values()] };
}

function fromWire(wire: WireEnvelope, place: { seq: number; endSeq: number }): EventEnvelope {
  const { perUserGroups, ...rest } = wire;
  if (!perUserGroups) return { ...rest, ...place };
  const perUser: Record<number, PerUser> = {};
  for (const [extra, ids] of perUserGroups) for (const id of ids) perUser[id] = extra;
  return { ...rest, perUser, ...place };
}

/**
 * Where a reader must start to be given again the frame whose first part is `first`, completed
 * just now: at that part, or earlier at the first part of a frame still incomplete, which it
 * delivers later.
 */
function startOf(first: number, frames: Frames): number {
  let start = first;
  for (const held of frames.partsFrom.values()) start = Math.min(start, held);
  return start;
}
