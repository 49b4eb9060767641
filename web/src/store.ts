// A value that views subscribe to; views re-render when it is replaced.
import { useEffect, useState } from 'preact/hooks';

export class Store<T> {
  private readonly listeners = new Set<() => void>();

  constructor(private value: T) {}

  get(): T {
    return this.value;
  }

  set(value: T): void {
    if (value === this.value) return;
    this.value = value;
    for (const listener of [...this.listeners]) listener();
  }

  update(change: (value: T) => T): void {
    this.set(change(this.value));
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

export function useStore<T>(store: Store<T>): T {
  const [, setVersion] = useState(0);
  useEffect(() => store.subscribe(() => setVersion((n) => n + 1)), [store]);
  return store.get();
}
