// CPU of register's realm_user_groups section (formatGroup over every named group) for an
// organization of U active users, without the database: the organization's real groups (its
// system groups and G user groups of 5 members each, made through the API) against a list of U
// users with a realistic spread of roles. Prints µs per register-worth of groups, averaged over N.
// Usage: U=10000 G=20 N=200 npx tsx bench/micro/group-members.ts
import type { PermissionSubject } from '../../src/auth/permissions.ts';
import { Role } from '../../src/domain/roles.ts';
import { formatGroup, isNamed } from '../../src/queries/user-groups.ts';
import { endTestRun, newRealm, startTestServer } from '../../test/helpers/server.ts';

const U = Number(process.env.U ?? 10_000);
const G = Number(process.env.G ?? 20);
const N = Number(process.env.N ?? 200);
const server = await startTestServer({});
const realm = await newRealm(server);
const members = [realm.owner.id];
for (let i = 0; i < 4; i++) members.push((await realm.addUser()).id);
for (let g = 0; g < G; g++) {
  const r = await realm.owner.client.post('/user_groups/create', { name: `team ${g}`, description: '', members });
  if (r.status !== 200) throw new Error(r.text);
}
const info = server.app.realms.byId(realm.id)!;
const groups = [...(await server.app.realms.groups(realm.id)).values()].filter(isNamed);
const roles = [Role.OWNER, Role.ADMINISTRATOR, Role.MODERATOR, ...Array(90).fill(Role.MEMBER), ...Array(7).fill(Role.GUEST)];
/** A new list per register, as activeUsers reads one per request. */
const users = (): PermissionSubject[] =>
  Array.from({ length: U }, (_, i) => ({
    id: i < members.length ? members[i]! : 100_000 + i,
    role: roles[i % roles.length]!,
    dateJoined: new Date(0),
    isActive: true,
  })).sort((a, b) => a.id - b.id);
let bytes = 0;
for (let i = 0; i < 20; i++) bytes += JSON.stringify(groups.map((g) => formatGroup(info, g, users()))).length;
const lists = Array.from({ length: N }, users);
const c0 = process.cpuUsage();
for (const list of lists) bytes += groups.map((g) => formatGroup(info, g, list)).length;
const c = process.cpuUsage(c0);
console.log(`${U} users, ${groups.length} named groups: ${((c.user + c.system) / N).toFixed(0)} µs CPU per register's groups (${bytes} checksum)`);
await server.stop();
await endTestRun();
process.exit(0);
