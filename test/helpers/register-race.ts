// Registers while other requests change what the register state holds (one user's snippets and
// drafts, the organization's groups): every change must reach each new queue exactly once, in its
// state or as an event. Shared by the embedded and the PostgreSQL suites: only PostgreSQL runs
// transactions truly concurrently, so that is where the race is widest.
import * as assert from 'uvu/assert';
import { openQueue } from './queues.ts';
import type { TestRealm } from './server.ts';

export async function registerDuringWrites(realm: TestRealm): Promise<void> {
  const bob = await realm.addUser();
  const created = { snippets: [] as number[], drafts: [] as number[], groups: [] as number[] };
  let writing = true;
  const writers = [
    (async () => {
      for (let i = 0; writing; i++) created.snippets.push((await bob.client.post('/saved_snippets', { title: `t${i}`, content: 'c' })).body.saved_snippet_id);
    })(),
    (async () => {
      for (let i = 0; writing; i++)
        created.drafts.push(...(await bob.client.post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: `d${i}` }] })).body.ids);
    })(),
    (async () => {
      for (let i = 0; writing; i++)
        created.groups.push((await realm.owner.client.post('/user_groups/create', { name: `g${i}`, description: '', members: [] })).body.group_id);
    })(),
  ];
  const queues = [];
  const types = ['saved_snippets', 'drafts', 'user_group'];
  for (let i = 0; i < 8; i++) queues.push(await openQueue(bob, { fetch_event_types: [...types, 'realm_user_groups'], event_types: types }));
  writing = false;
  await Promise.all(writers);
  for (const q of queues) {
    const events = await q.pending();
    const seen = {
      snippets: [
        ...q.state.saved_snippets.map((s: { id: number }) => s.id),
        ...events.filter((e) => e.type === 'saved_snippets').map((e) => e.saved_snippet.id),
      ],
      drafts: [
        ...q.state.drafts.map((d: { id: number }) => d.id),
        ...events.filter((e) => e.type === 'drafts').flatMap((e) => e.drafts.map((d: { id: number }) => d.id)),
      ],
      groups: [
        ...q.state.realm_user_groups.filter((g: { is_system_group: boolean }) => !g.is_system_group).map((g: { id: number }) => g.id),
        ...events.filter((e) => e.type === 'user_group').map((e) => e.group.id),
      ],
    };
    for (const kind of ['snippets', 'drafts', 'groups'] as const) {
      assert.equal(
        [...seen[kind]].sort((a, b) => a - b),
        [...created[kind]].sort((a, b) => a - b),
        `${kind}: each exactly once`,
      );
    }
  }
}
