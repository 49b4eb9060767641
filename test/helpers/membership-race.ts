// Parallel requests adding the same user to one group: the membership check and the insert run in
// one transaction on the locked group row, so exactly one succeeds and the others get Zulip's
// "already a member" (never a 500, never a duplicate). Shared by the embedded and PostgreSQL suites.
import * as assert from 'uvu/assert';
import type { TestRealm } from './server.ts';

const PARALLEL = 6;

export async function membershipRace(realm: TestRealm): Promise<void> {
  const bob = await realm.addUser();
  const o = realm.owner.client;
  const id = (await o.post('/user_groups/create', { name: `race${Date.now()}`, description: '', members: '[]' })).body.group_id;
  const results = await Promise.all(Array.from({ length: PARALLEL }, () => o.post(`/user_groups/${id}/members`, { add: JSON.stringify([bob.id]) })));
  assert.equal(results.map((r) => r.status).sort(), [200, ...Array(PARALLEL - 1).fill(400)], results.map((r) => r.text).join('\n'));
  for (const r of results.filter((r) => r.status !== 200)) assert.is(r.body.msg, `User ${bob.id} is already a member of this group`);
  assert.equal((await o.get(`/user_groups/${id}/members`)).body.members, [bob.id]);
}
