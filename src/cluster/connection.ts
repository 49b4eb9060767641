// The NATS connection of a cluster node: one per process, shared by the event bus, the node's
// requests (queue proxying) and its gossip (liveness, rate limits). It retries for ever once
// connected: a NATS restart pauses the cluster's traffic instead of ending the process.
import { connect, type NatsConnection } from 'nats';
import { errorText } from '../log.ts';

export async function connectNats(servers: string, name: string): Promise<NatsConnection> {
  try {
    return await connect({
      servers: servers
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      pingInterval: 5_000,
      maxPingOut: 2,
    });
  } catch (err) {
    throw new Error(`Cannot connect to NATS at ${servers}: ${errorText(err)}`, { cause: err });
  }
}
