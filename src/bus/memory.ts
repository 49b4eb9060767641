import type { BusListener, EventBus, EventEnvelope, EventHandler } from './bus.ts';
import { log } from '../log.ts';

/**
 * The single-process bus: delivery is a direct call, so ordering is publication order, nothing
 * is lost, and there is no other process to tell of cache changes.
 */
export class MemoryBus implements EventBus {
  private readonly handlers = new Set<EventHandler>();

  publish(envelope: EventEnvelope): void {
    for (const handler of this.handlers) {
      try {
        handler(envelope);
      } catch (err) {
        log.error('event handler failed', { error: String(err), type: envelope.event.type });
      }
    }
  }

  publishAll(envelopes: readonly EventEnvelope[]): void {
    for (const envelope of envelopes) this.publish(envelope);
  }

  subscribe(handler: EventHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  announce(): void {}

  listen(_listener: BusListener): () => void {
    return () => {};
  }

  async resume(): Promise<void> {}

  async pause(): Promise<null> {
    return null;
  }

  settled(): null {
    return null;
  }

  connected(): boolean {
    return true;
  }

  async close(): Promise<void> {
    this.handlers.clear();
  }
}
