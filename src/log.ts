// A tiny leveled logger writing one line per record to stderr; tests run it silent.
const levels = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
export type LogLevel = keyof typeof levels;

let threshold: number = levels.info;

export function setLogLevel(level: LogLevel): void {
  threshold = levels[level];
}

function write(level: LogLevel, message: string, fields?: Record<string, unknown>): void {
  if (levels[level] < threshold) return;
  const extra = fields ? ' ' + JSON.stringify(fields) : '';
  process.stderr.write(`${new Date().toISOString()} ${level.toUpperCase()} ${message}${extra}\n`);
}

export const log = {
  debug: (m: string, f?: Record<string, unknown>) => write('debug', m, f),
  info: (m: string, f?: Record<string, unknown>) => write('info', m, f),
  warn: (m: string, f?: Record<string, unknown>) => write('warn', m, f),
  error: (m: string, f?: Record<string, unknown>) => write('error', m, f),
};
