// Preloaded (--import) into every server process the bench starts, so the bench can read the
// server's heap after a full GC over the IPC channel. Not loaded when pointing at a --url server.
// Plain JavaScript: the server runs as `npm start` runs it, without the TypeScript loader.

if (process.send) {
  process.on('message', (msg) => {
    if (msg !== 'memory?') return;
    const gc = globalThis.gc;
    gc?.();
    gc?.();
    process.send({ memory: process.memoryUsage() });
  });
  process.channel?.unref(); // the probe must not keep a server alive
}
