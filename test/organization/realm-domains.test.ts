// Organization email domains: GET/POST /realm/domains, PATCH/DELETE /realm/domains/{domain}
// (Zulip's test_realm_domains.py), their `realm_domains` events and register data.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Role } from '../../src/domain/roles.ts';
import { openQueue } from '../helpers/queues.ts';
import { newRealm } from '../helpers/server.ts';
import { errorBody } from '../messages/messages-helpers.ts';

const SUCCESS = { result: 'success', msg: '' };

test('add, change, remove: responses, events to every user, GET and register agree', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const queue = await openQueue(member, { event_types: ['realm_domains'] });
  const added = await realm.owner.client.post('/realm/domains', { domain: '  Acme.COM ', allow_subdomains: true });
  assert.is(added.status, 200, added.text);
  const row = await realm.server.app.prisma.realmDomain.findFirstOrThrow({ where: { realmId: realm.id } });
  assert.equal(added.body, { ...SUCCESS, new_domain: [row.id, 'acme.com'] });
  assert.equal(await queue.next(), [{ type: 'realm_domains', op: 'add', realm_domain: { domain: 'acme.com', allow_subdomains: true } }]);
  assert.equal((await realm.owner.client.patch('/realm/domains/acme.com', { allow_subdomains: false })).body, SUCCESS);
  assert.equal(await queue.next(), [{ type: 'realm_domains', op: 'change', realm_domain: { domain: 'acme.com', allow_subdomains: false } }]);
  await realm.owner.client.post('/realm/domains', { domain: 'acme.org', allow_subdomains: false });
  await queue.next();
  const domains = [
    { domain: 'acme.com', allow_subdomains: false },
    { domain: 'acme.org', allow_subdomains: false },
  ];
  assert.equal((await member.client.get('/realm/domains')).body, { ...SUCCESS, domains });
  assert.equal((await member.client.post('/register', { fetch_event_types: ['realm_domains'] })).body.realm_domains, domains);
  assert.equal((await realm.owner.client.delete('/realm/domains/acme.org')).body, SUCCESS);
  assert.equal(await queue.next(), [{ type: 'realm_domains', op: 'remove', domain: 'acme.org' }]);
  assert.equal((await member.client.get('/realm/domains')).body.domains, [domains[0]]);
});

test('removing the last domain lifts emails_restricted_to_domains', async () => {
  const realm = await newRealm();
  await realm.owner.client.post('/realm/domains', { domain: 'only.example', allow_subdomains: false });
  assert.equal((await realm.owner.client.patch('/realm', { emails_restricted_to_domains: true })).status, 200);
  const queue = await openQueue(realm.owner, { event_types: ['realm', 'realm_domains'] });
  assert.equal((await realm.owner.client.delete('/realm/domains/only.example')).body, SUCCESS);
  const events = [...(await queue.next()), ...(await queue.pending())];
  assert.equal(events, [
    { type: 'realm_domains', op: 'remove', domain: 'only.example' },
    { type: 'realm', op: 'update', property: 'emails_restricted_to_domains', value: false },
  ]);
  assert.is((await realm.owner.client.post('/register', { fetch_event_types: ['realm'] })).body.realm_emails_restricted_to_domains, false);
});

test('errors: owners only, invalid domains, duplicates, unknown entries; nothing changes', async () => {
  const realm = await newRealm();
  const admin = await realm.addUser({ role: Role.ADMINISTRATOR });
  await realm.owner.client.post('/realm/domains', { domain: 'taken.com', allow_subdomains: false });
  const invalid: [string, string][] = [
    ['', "Domain can't be empty."],
    ['nodot', 'Domain must have at least one dot (.)'],
    ['.lead.com', 'Domain cannot start or end with a dot (.)'],
    ['a..b', "Consecutive '.' are not allowed."],
    ['-a.com', "Subdomains cannot start or end with a '-'."],
    ['a_b.com', "Domain can only have letters, numbers, '.' and '-'s."],
    [`${'a'.repeat(260)}.com`, 'Domain is too long'],
  ];
  for (const [domain, reason] of invalid) {
    const r = await realm.owner.client.post('/realm/domains', { domain, allow_subdomains: false });
    assert.equal([r.status, r.body], [400, errorBody(`Invalid domain: ${reason}`)], domain);
  }
  const duplicate = await realm.owner.client.post('/realm/domains', { domain: 'TAKEN.com', allow_subdomains: true });
  assert.equal([duplicate.status, duplicate.body], [400, errorBody('The domain taken.com is already a part of your organization.')]);
  for (const r of [
    await realm.owner.client.patch('/realm/domains/none.com', { allow_subdomains: true }),
    await realm.owner.client.delete('/realm/domains/none.com'),
  ]) {
    assert.equal([r.status, r.body], [400, errorBody('No entry found for domain none.com.')]);
  }
  const ownerOnly = errorBody('Must be an organization owner', 'UNAUTHORIZED_PRINCIPAL');
  for (const r of [
    await admin.client.post('/realm/domains', { domain: 'admin.com', allow_subdomains: false }),
    await admin.client.patch('/realm/domains/taken.com', { allow_subdomains: true }),
    await admin.client.delete('/realm/domains/taken.com'),
  ])
    assert.equal([r.status, r.body], [400, ownerOnly]);
  assert.equal((await admin.client.get('/realm/domains')).body.domains, [{ domain: 'taken.com', allow_subdomains: false }]);
});

test.run();
