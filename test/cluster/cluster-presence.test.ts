// Presence in a cluster: each node answers pings from its own copy of the organization's presence
// (src/queries/presence-copy.ts), brought up to date from the database on every read, so a node
// sees the pings the other node stored without hearing of them; and a deactivation on one node
// drops the other node's copy through the event that reports it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Client } from '../helpers/client.ts';
import { eventually, startCluster, via, type TestCluster } from '../helpers/cluster.ts';
import { NATS_URL } from '../helpers/nats.ts';
import { newRealm } from '../helpers/server.ts';

if (!NATS_URL) {
  test.skip('cluster presence (NATS_URL is not set: the cluster tests need a NATS server with JetStream)');
} else {
  const natsUrl = NATS_URL;
  let cluster: TestCluster;
  let A = 0;
  let B = 0;

  test.before(async () => {
    cluster = await startCluster(natsUrl, ['b']);
    A = cluster.a.port;
    B = cluster.nodes[0]!.port;
  });

  test.after(async () => {
    await cluster?.close();
  });

  const ping = async (client: Client, params: Record<string, unknown>) => {
    const r = await client.post('/users/me/presence', { status: 'active', ...params });
    assert.is(r.status, 200, r.text);
    return r.body as { presences: Record<string, { active_timestamp: number; idle_timestamp: number }>; presence_last_update_id: number };
  };

  test("each node's answers hold the pings stored through the other; a deactivation on one hides the user on the other", async () => {
    const realm = await newRealm(cluster.a);
    const bob = await realm.addUser();
    await eventually('node b to know the new organization', async () => (await via(B, bob).get('/users/me')).status === 200);
    // Both nodes make their copies.
    const onA = await ping(via(A, realm.owner), { slim_presence: true });
    const onB = await ping(via(B, realm.owner), { last_update_id: onA.presence_last_update_id });
    assert.equal(onB.presences, {});
    // Bob pings through b; a's next answer has him, with his stored times.
    await ping(via(B, bob), { ping_only: true });
    const row = await cluster.a.app.prisma.presence.findUniqueOrThrow({ where: { userId: bob.id } });
    const seconds = (d: Date | null) => Math.floor(d!.getTime() / 1000);
    const afterBob = await ping(via(A, realm.owner), { last_update_id: onA.presence_last_update_id });
    assert.equal(afterBob.presences, { [bob.id]: { active_timestamp: seconds(row.lastActiveTime), idle_timestamp: seconds(row.lastConnectedTime) } });
    assert.is(afterBob.presence_last_update_id, row.lastUpdateId);
    // And b's full answer has everyone who pinged through either node.
    const keysVia = async (port: number) => Object.keys((await ping(via(port, realm.owner), { last_update_id: 0 })).presences);
    assert.equal(await keysVia(B), [realm.owner.id, bob.id].map(String));
    // Deactivated through a: b stops listing him once the event reached it.
    assert.is((await via(A, realm.owner).delete(`/users/${bob.id}`)).status, 200);
    assert.equal(await keysVia(A), [String(realm.owner.id)]);
    await eventually('node b to leave bob out', async () => (await keysVia(B)).length === 1);
  });

  test.run();
}
