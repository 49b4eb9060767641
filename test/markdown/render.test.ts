// POST /messages/render: the organization's users, groups, channels and linkifiers, and the limits.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newRealm } from '../helpers/server.ts';

const err = (msg: string, code = 'BAD_REQUEST', extra: Record<string, unknown> = {}) => ({ result: 'error', msg, code, ...extra });

test('renders Markdown', async () => {
  const realm = await newRealm();
  const r = await realm.owner.client.post('/messages/render', { content: '**foo**' });
  assert.is(r.status, 200);
  assert.equal(r.body, { result: 'success', msg: '', rendered: '<p><strong>foo</strong></p>' });
});

test('a linkifier and a mention of the organization', async () => {
  const realm = await newRealm();
  const hamlet = await realm.addUser({ name: 'King Hamlet' });
  const created = await realm.owner.client.post('/realm/filters', { pattern: '#(?P<id>[0-9]+)', url_template: 'https://github.com/zulip/zulip/issues/{id}' });
  const r = await hamlet.client.post('/messages/render', { content: '@**king hamlet** see #123, not @_**Olivia Owner**' });
  assert.equal(r.body, {
    result: 'success',
    msg: '',
    rendered: `<p><span class="user-mention" data-user-id="${hamlet.id}">@King Hamlet</span> see <a href="https://github.com/zulip/zulip/issues/123">#123</a>, not <span class="user-mention silent" data-user-id="${realm.owner.id}">Olivia Owner</span></p>`,
  });

  // Another organization's users and linkifiers are unknown here.
  const other = await newRealm();
  const outside = await other.owner.client.post('/messages/render', { content: '@**King Hamlet** #123' });
  assert.is(outside.body.rendered, '<p>@<strong>King Hamlet</strong> #123</p>');

  // Edits and removals apply to the next render.
  const id = created.body.id;
  await realm.owner.client.patch(`/realm/filters/${id}`, { pattern: '#(?P<id>[0-9]+)', url_template: 'https://trac.example.com/{id}' });
  assert.is((await hamlet.client.post('/messages/render', { content: '#7' })).body.rendered, '<p><a href="https://trac.example.com/7">#7</a></p>');
  await realm.owner.client.delete(`/realm/filters/${id}`);
  assert.is((await hamlet.client.post('/messages/render', { content: '#7' })).body.rendered, '<p>#7</p>');
});

test('mentions by id, of groups, and channel links', async () => {
  const realm = await newRealm();
  const member = await realm.addUser({ name: 'Twin' });
  const twin = await realm.addUser({ name: 'Twin' });
  await realm.owner.client.post('/users/me/subscriptions', { subscriptions: [{ name: 'Denmark' }] });
  const channel = await realm.server.app.prisma.channel.findFirstOrThrow({ where: { realmId: realm.id, name: 'Denmark' } });
  const group = await realm.server.app.prisma.userGroup.create({ data: { realmId: realm.id, name: 'support', description: '' } });
  realm.server.app.realms.forgetGroups(realm.id);
  const r = await member.client.post('/messages/render', { content: `@**Twin** @**Twin|${twin.id}** @*support* #**Denmark**` });
  assert.is(
    r.body.rendered,
    `<p>@<strong>Twin</strong> <span class="user-mention" data-user-id="${twin.id}">@Twin</span> ` +
      `<span class="user-group-mention" data-user-group-id="${group.id}">@support</span> ` +
      `<a class="stream" data-stream-id="${channel.id}" href="/#narrow/channel/${channel.id}-Denmark">#Denmark</a></p>`,
  );
});

test('content: required, at most 10000 characters (code points), empty renders as nothing', async () => {
  const realm = await newRealm();
  const client = realm.owner.client;
  assert.equal((await client.post('/messages/render', {})).body, err("Missing 'content' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'content' }));
  const long = await client.post('/messages/render', { content: 'x'.repeat(10001) });
  assert.is(long.status, 400);
  assert.equal(long.body, err('content is too long (limit: 10000 characters)', 'BAD_REQUEST', { var_name: 'content' }));
  const astral = await client.post('/messages/render', { content: '𝔸'.repeat(10000) });
  assert.is(astral.status, 200);
  assert.is(astral.body.rendered, `<p>${'𝔸'.repeat(10000)}</p>`);
  assert.equal((await client.post('/messages/render', { content: '' })).body, { result: 'success', msg: '', rendered: '' });
});

test('nesting too deep to render is refused as unrenderable, as Zulip does, and the server goes on', async () => {
  const realm = await newRealm();
  const client = realm.owner.client;
  for (const content of ['>'.repeat(10000), '1. '.repeat(3333)]) {
    const r = await client.post('/messages/render', { content });
    assert.is(r.status, 400, content.slice(0, 10));
    assert.equal(r.body, err('Unable to render message'));
  }
  assert.is(
    (await client.post('/messages/render', { content: '> > quoted' })).body.rendered,
    '<blockquote>\n<blockquote>\n<p>quoted</p>\n</blockquote>\n</blockquote>',
  );
});

test('needs credentials', async () => {
  const realm = await newRealm();
  const r = await realm.anonymous.post('/messages/render', { content: 'hi' });
  assert.is(r.status, 401);
});

test.run();
