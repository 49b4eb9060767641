// This process as a node of a cluster: its NATS connection and the event bus over it. Made at
// start when CLUSTER=nats (or NATS_URL is set); the rest of the server sees only the bus and the
// node's id.
import type { NatsConnection } from 'nats';
import { NatsBus } from '../bus/nats.ts';
import { connectNats } from './connection.ts';

export class ClusterNode {
  private constructor(
    readonly id: string,
    /** Names the deployment's NATS subjects; shared through the database. */
    readonly clusterId: string,
    readonly nc: NatsConnection,
    readonly bus: NatsBus,
  ) {}

  static async join(settings: { natsUrl: string; nodeId: string }, clusterId: string): Promise<ClusterNode> {
    const nc = await connectNats(settings.natsUrl, `chat-${settings.nodeId}`);
    try {
      const bus = await NatsBus.open({ connection: nc, clusterId, nodeId: settings.nodeId });
      return new ClusterNode(settings.nodeId, clusterId, nc, bus);
    } catch (err) {
      await nc.close();
      throw err;
    }
  }

  async leave(): Promise<void> {
    await this.bus.close();
    await this.nc.drain();
  }
}
