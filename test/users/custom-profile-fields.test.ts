// Custom profile fields: defining them (every type Zulip has, its rules, order, deletion), the
// `custom_profile_fields` event to every active user and register's data; people's values
// (PATCH/DELETE /users/me/profile_data, administrators through PATCH /users/{id}), checked per
// type, rendered for the Markdown types, sent as `realm_user` updates, shown as profile_data.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openQueue } from '../helpers/queues.ts';
import { newRealm, type TestRealm, type TestUser } from '../helpers/server.ts';
import { errorBody } from '../messages/messages-helpers.ts';

const SUCCESS = { result: 'success', msg: '' };
const GUEST = 600;
const ADMIN = 200;
const NOT_ADMIN = errorBody('Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL');
const SELECT_DATA = { vim: { text: 'Vim', order: '1' }, emacs: { text: 'Emacs', order: '2' } };

type Reply = Promise<{ status: number; body: any; text: string }>;

async function expectError(reply: Reply, body: object): Promise<void> {
  const r = await reply;
  assert.equal([r.status, r.body], [400, body]);
}

async function ok(reply: Reply): Promise<void> {
  const r = await reply;
  assert.equal([r.status, r.body], [200, SUCCESS], r.text);
}

async function createField(realm: TestRealm, params: Record<string, unknown>): Promise<number> {
  const r = await realm.owner.client.post('/realm/profile_fields', params);
  assert.is(r.status, 200, r.text);
  assert.equal(Object.keys(r.body).sort(), ['id', 'msg', 'result']);
  return r.body.id;
}

const listFields = async (user: TestUser) => (await user.client.get('/realm/profile_fields')).body.custom_fields;

test('create every field type: GET, register and the event to every active user show it', async () => {
  const realm = await newRealm();
  const guest = await realm.addUser({ role: GUEST });
  const queue = await openQueue(guest, { event_types: ['custom_profile_fields'] });
  const phone = await createField(realm, { name: '  Phone ', hint: 'Work number', field_type: 1, display_in_profile_summary: true, required: true });
  const [afterFirst] = await queue.next();
  const field = (id: number, name: string, type: number, extra: Record<string, unknown> = {}) => ({
    id,
    name,
    type,
    hint: '',
    field_data: '',
    order: id,
    required: false,
    editable_by_user: true,
    ...extra,
  });
  const phoneField = field(phone, 'Phone', 1, { hint: 'Work number', required: true, display_in_profile_summary: true });
  assert.equal(afterFirst, { type: 'custom_profile_fields', fields: [phoneField] });

  const bio = await createField(realm, { name: 'Bio', field_type: 2, field_data: { ignored: 'for this type' }, editable_by_user: false });
  const editor = await createField(realm, { name: 'Editor', field_type: 3, field_data: SELECT_DATA });
  const birthday = await createField(realm, { name: 'Birthday', field_type: 4 });
  const site = await createField(realm, { name: 'Website', field_type: 5 });
  const mentor = await createField(realm, { name: 'Mentor', field_type: 6 });
  const github = await createField(realm, {
    name: 'ignored',
    hint: 'ignored too',
    field_type: 7,
    field_data: { subtype: 'github', url_pattern: 'https://x.test/%(username)s' },
  });
  const wiki = await createField(realm, { name: 'Wiki', field_type: 7, field_data: { subtype: 'custom', url_pattern: 'https://wiki.test/u/%(username)s' } });
  const pronouns = await createField(realm, { name: 'Pronouns', field_type: 8, hint: 'How to refer to you' });
  const expected = [
    phoneField,
    field(bio, 'Bio', 2, { editable_by_user: false }),
    field(editor, 'Editor', 3, { field_data: JSON.stringify(SELECT_DATA) }),
    field(birthday, 'Birthday', 4),
    field(site, 'Website', 5),
    field(mentor, 'Mentor', 6),
    field(github, 'GitHub username', 7, { field_data: '{"subtype":"github"}' }),
    field(wiki, 'Wiki', 7, { field_data: '{"subtype":"custom","url_pattern":"https://wiki.test/u/%(username)s"}' }),
    field(pronouns, 'Pronouns', 8, { hint: 'How to refer to you' }),
  ];
  assert.equal(await listFields(guest), expected);
  const events = [...(await queue.next()), ...(await queue.pending())];
  assert.is(events.length, 8);
  assert.equal(events.at(-1), { type: 'custom_profile_fields', fields: expected });
  const state = (await guest.client.post('/register', { fetch_event_types: ['custom_profile_fields', 'realm'] })).body;
  assert.equal(state.custom_profile_fields, expected);
  assert.equal(state.custom_profile_field_types.DATE, { id: 4, name: 'Date' });
  assert.equal(
    Object.values(state.custom_profile_field_types)
      .map((t: any) => t.id)
      .sort(),
    [1, 2, 3, 4, 5, 6, 7, 8],
  );
  assert.equal(state.realm_default_external_accounts.github, {
    text: 'GitHub',
    url_pattern: 'https://github.com/%(username)s',
    name: 'GitHub username',
    hint: '',
  });
});

test('create errors: administrators only; names, hints, types, options, external accounts, summary limit, labels', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  await createField(realm, { name: 'Taken', field_type: 1, display_in_profile_summary: true });
  await createField(realm, { name: 'Also shown', field_type: 8, display_in_profile_summary: true });
  await expectError(member.client.post('/realm/profile_fields', { name: 'Mine', field_type: 1 }), NOT_ADMIN);
  const cases: [Record<string, unknown>, object][] = [
    [{ name: 'X' }, errorBody("Missing 'field_type' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'field_type' })],
    [{ name: '  ', field_type: 1 }, errorBody('Label cannot be blank.')],
    [{ field_type: 1 }, errorBody('Label cannot be blank.')],
    [{ name: 'n'.repeat(41), field_type: 1 }, errorBody('name is too long (limit: 40 characters)')],
    [{ name: 'N', hint: 'h'.repeat(81), field_type: 1 }, errorBody('hint is too long (limit: 80 characters)')],
    [{ name: 'N', field_type: 99 }, errorBody('Invalid field type.')],
    [{ name: 'N', field_type: 3 }, errorBody('Field must have at least one choice.')],
    [{ name: 'N', field_type: 3, field_data: { a: { text: 'A' } } }, errorBody('order key is missing from field_data')],
    [{ name: 'N', field_type: 3, field_data: { a: { text: ' ', order: '1' } } }, errorBody('field_data["text"] cannot be blank.')],
    [{ name: 'N', field_type: 3, field_data: { a: { text: 'A', order: '1', extra: 'x' } } }, errorBody('Unexpected arguments: extra')],
    [{ name: 'N', field_type: 3, field_data: { a: 'A' } }, errorBody('field_data is not a dict')],
    [{ name: 'N', field_type: 3, field_data: { ' ': { text: 'A', order: '1' } } }, errorBody("'value' cannot be blank.")],
    [
      { name: 'N', field_type: 3, field_data: { a: { text: 'A', order: '1' }, b: { text: 'A', order: '2' } } },
      errorBody('Field must not have duplicate choices.'),
    ],
    [{ name: 'N', field_type: 7 }, errorBody('subtype key is missing from field_data')],
    [{ name: 'N', field_type: 7, field_data: { subtype: 'myspace' } }, errorBody('Invalid external account type')],
    [{ name: 'N', field_type: 7, field_data: { subtype: 'custom', url_pattern: 'https://x.test/' } }, errorBody("URL pattern must contain '%(username)s'.")],
    [
      { name: 'N', field_type: 7, field_data: { subtype: 'custom', url_pattern: 'not a url %(username)s' } },
      errorBody('field_data["url_pattern"] is not a URL'),
    ],
    [{ name: 'N', field_type: 2, display_in_profile_summary: true }, errorBody('Only 2 custom profile fields can be displayed in the profile summary.')],
    [{ name: 'Taken', field_type: 4 }, errorBody('A field with that label already exists.')],
    [{ name: 'N', field_type: 3, field_data: [] }, errorBody('field_data is not a dict', 'BAD_REQUEST', { var_name: 'field_data' })],
  ];
  for (const [params, body] of cases) await expectError(realm.owner.client.post('/realm/profile_fields', params), body);
  const other = await newRealm();
  await expectError(
    other.owner.client.post('/realm/profile_fields', { name: 'N', field_type: 6, display_in_profile_summary: true }),
    errorBody('Field type not supported for display in profile summary.'),
  );
  await createField(other, { field_type: 7, field_data: { subtype: 'github' } });
  await expectError(
    other.owner.client.post('/realm/profile_fields', { field_type: 7, field_data: { subtype: 'github' } }),
    errorBody('A field with that label already exists.'),
  );
  assert.equal(
    (await listFields(realm.owner)).map((f: { name: string }) => f.name),
    ['Taken', 'Also shown'],
  );
});

test('PATCH /realm/profile_fields/{id}: changes and their event; removed options lose their values; errors', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const editor = await createField(realm, { name: 'Editor', field_type: 3, field_data: SELECT_DATA });
  const phone = await createField(realm, { name: 'Phone', field_type: 1 });
  const github = await createField(realm, { field_type: 7, field_data: { subtype: 'github' } });
  await ok(member.client.patch('/users/me/profile_data', { data: [{ id: editor, value: 'emacs' }] }));
  const queue = await openQueue(member, { event_types: ['custom_profile_fields'] });
  await ok(
    realm.owner.client.patch(`/realm/profile_fields/${phone}`, {
      name: ' Mobile ',
      hint: 'Personal',
      required: true,
      editable_by_user: false,
      display_in_profile_summary: true,
    }),
  );
  const [event] = await queue.next();
  assert.equal(
    event.fields.find((f: { id: number }) => f.id === phone),
    {
      id: phone,
      name: 'Mobile',
      type: 1,
      hint: 'Personal',
      field_data: '',
      order: phone,
      required: true,
      editable_by_user: false,
      display_in_profile_summary: true,
    },
  );
  const onlyVim = { vim: SELECT_DATA.vim };
  const people = await openQueue(realm.owner, { event_types: ['realm_user'] });
  await ok(realm.owner.client.patch(`/realm/profile_fields/${editor}`, { field_data: onlyVim }));
  assert.equal((await queue.next())[0].fields.find((f: { id: number }) => f.id === editor).field_data, JSON.stringify(onlyVim));
  assert.equal((await member.client.get('/users/me')).body.profile_data, {}, 'the picked option is gone');
  assert.equal(
    await people.next(),
    [{ type: 'realm_user', op: 'update', person: { user_id: member.id, custom_profile_field: { id: editor, value: null } } }],
    'as a removed value',
  );
  await ok(realm.owner.client.patch(`/realm/profile_fields/${github}`, { display_in_profile_summary: true, name: 'GitHub username' }));
  assert.is((await queue.next())[0].fields.find((f: { id: number }) => f.id === github).display_in_profile_summary, true);

  const elsewhere = await createField(await newRealm(), { name: 'Theirs', field_type: 1 });
  await expectError(member.client.patch(`/realm/profile_fields/${phone}`, { name: 'Mine' }), NOT_ADMIN);
  const cases: [number | string, Record<string, unknown>, object][] = [
    [999999, { name: 'X' }, errorBody('Field id 999999 not found.')],
    [elsewhere, { name: 'X' }, errorBody(`Field id ${elsewhere} not found.`)],
    ['abc', { name: 'X' }, errorBody('Field id abc not found.')],
    [phone, { name: 'Editor' }, errorBody('A field with that label already exists.')],
    [phone, { name: ' ' }, errorBody('Label cannot be blank.')],
    [editor, { field_data: {} }, errorBody('Field must have at least one choice.')],
    [github, { name: 'My GitHub' }, errorBody('Default custom field cannot be updated.')],
    [github, { field_data: { subtype: 'gitlab' } }, errorBody('Default custom field cannot be updated.')],
    [editor, { display_in_profile_summary: true }, errorBody('Only 2 custom profile fields can be displayed in the profile summary.')],
  ];
  for (const [id, params, body] of cases) await expectError(realm.owner.client.patch(`/realm/profile_fields/${id}`, params), body);
  assert.equal(await queue.pending(), []);
});

test('DELETE and reorder: events, values go with their field, errors', async () => {
  const realm = await newRealm();
  const member = await realm.addUser();
  const [a, b, c] = [
    await createField(realm, { name: 'A', field_type: 1 }),
    await createField(realm, { name: 'B', field_type: 1 }),
    await createField(realm, { name: 'C', field_type: 1 }),
  ];
  await ok(member.client.patch('/users/me/profile_data', { data: [{ id: b, value: 'bee' }] }));
  const queue = await openQueue(member, { event_types: ['custom_profile_fields'] });
  await expectError(realm.owner.client.patch('/realm/profile_fields', { order: [c, a] }), errorBody('Invalid order mapping.'));
  await expectError(member.client.patch('/realm/profile_fields', { order: [c, a, b] }), NOT_ADMIN);
  await ok(realm.owner.client.patch('/realm/profile_fields', { order: [c, a, b, 999999] }));
  const reordered = (await queue.next())[0].fields.map((f: { id: number; order: number }) => [f.id, f.order]);
  assert.equal(reordered, [
    [c, 0],
    [a, 1],
    [b, 2],
  ]);
  assert.equal(
    (await listFields(member)).map((f: { id: number }) => f.id),
    [c, a, b],
  );

  await expectError(member.client.delete(`/realm/profile_fields/${b}`), NOT_ADMIN);
  await ok(realm.owner.client.delete(`/realm/profile_fields/${b}`));
  assert.equal(
    (await queue.next())[0].fields.map((f: { id: number }) => f.id),
    [c, a],
  );
  assert.equal((await member.client.get('/users/me')).body.profile_data, {});
  await expectError(realm.owner.client.delete(`/realm/profile_fields/${b}`), errorBody(`Field id ${b} not found.`));
});

test('PATCH /users/me/profile_data: every type checked, Markdown rendered, realm_user updates, profile_data everywhere', async () => {
  const realm = await newRealm();
  const me = await realm.addUser({ name: 'Me' });
  const friend = await realm.addUser({ name: 'Friend' });
  const gone = await realm.addUser({ name: 'Gone' });
  const bot = await realm.addUser({ bot: true, botOwnerId: realm.owner.id });
  await ok(realm.owner.client.delete(`/users/${gone.id}`));
  const ids = {
    phone: await createField(realm, { name: 'Phone', field_type: 1 }),
    bio: await createField(realm, { name: 'Bio', field_type: 2 }),
    editor: await createField(realm, { name: 'Editor', field_type: 3, field_data: SELECT_DATA }),
    birthday: await createField(realm, { name: 'Birthday', field_type: 4 }),
    site: await createField(realm, { name: 'Website', field_type: 5 }),
    mentor: await createField(realm, { name: 'Mentor', field_type: 6 }),
    github: await createField(realm, { field_type: 7, field_data: { subtype: 'github' } }),
    pronouns: await createField(realm, { name: 'Pronouns', field_type: 8 }),
  };
  const queue = await openQueue(friend, { event_types: ['realm_user'] });
  const data = [
    { id: ids.phone, value: '+1 **555**' },
    { id: ids.bio, value: 'Builds *things*' },
    { id: ids.editor, value: 'vim' },
    { id: ids.birthday, value: '2000-02-29' },
    { id: ids.site, value: 'https://me.example.com/about' },
    { id: ids.mentor, value: [friend.id] },
    { id: ids.github, value: 'me' },
    { id: ids.pronouns, value: 'they/them' },
  ];
  await ok(me.client.patch('/users/me/profile_data', { data }));
  const update = (field: Record<string, unknown>) => ({ type: 'realm_user', op: 'update', person: { user_id: me.id, custom_profile_field: field } });
  const expectedProfile = {
    [ids.phone]: { value: '+1 **555**', rendered_value: '<p>+1 <strong>555</strong></p>' },
    [ids.bio]: { value: 'Builds *things*', rendered_value: '<p>Builds <em>things</em></p>' },
    [ids.editor]: { value: 'vim' },
    [ids.birthday]: { value: '2000-02-29' },
    [ids.site]: { value: 'https://me.example.com/about' },
    [ids.mentor]: { value: `[${friend.id}]` },
    [ids.github]: { value: 'me' },
    [ids.pronouns]: { value: 'they/them' },
  };
  const events = [...(await queue.next()), ...(await queue.pending())];
  assert.equal(
    events,
    Object.entries(expectedProfile).map(([id, v]) => update({ id: Number(id), ...v })),
  );
  await ok(
    me.client.patch('/users/me/profile_data', {
      data: [
        { id: ids.phone, value: '+1 **555**' },
        { id: ids.pronouns, value: 'she/her' },
      ],
    }),
  );
  assert.equal(await queue.next(), [update({ id: ids.pronouns, value: 'she/her' })], 'an unchanged value sends nothing');
  const profile = { ...expectedProfile, [ids.pronouns]: { value: 'she/her' } };

  assert.equal((await friend.client.get(`/users/${me.id}`, { include_custom_profile_fields: true })).body.user.profile_data, profile);
  const listed = (await friend.client.get('/users', { include_custom_profile_fields: true })).body.members;
  assert.equal(listed.find((u: { user_id: number }) => u.user_id === me.id).profile_data, profile);
  assert.not.ok('profile_data' in listed.find((u: { user_id: number }) => u.user_id === bot.id), 'bots have none');
  assert.not.ok('profile_data' in (await friend.client.get('/users')).body.members[0]);
  assert.equal((await me.client.get('/users/me')).body.profile_data, profile);
  const state = (await friend.client.post('/register', { fetch_event_types: ['realm_user'] })).body;
  assert.equal(state.realm_users.find((u: { user_id: number }) => u.user_id === me.id).profile_data, profile);

  const invalid: [unknown, object][] = [
    [[{ id: 999999, value: 'x' }], errorBody('Field id 999999 not found.')],
    [[{ id: ids.phone, value: 'x'.repeat(51) }], errorBody('Phone is too long (limit: 50 characters)')],
    [[{ id: ids.bio, value: 'x'.repeat(501) }], errorBody('Bio is too long (limit: 500 characters)')],
    [[{ id: ids.phone, value: [1] }], errorBody('Phone is not a string')],
    [[{ id: ids.editor, value: 'nano' }], errorBody("'nano' is not a valid choice for 'Editor'.")],
    [[{ id: ids.birthday, value: '2001-02-29' }], errorBody('Birthday is not a date')],
    [[{ id: ids.birthday, value: '2001-2-3' }], errorBody('Birthday is not a date')],
    [[{ id: ids.site, value: 'me.example.com' }], errorBody('Website is not a URL')],
    [[{ id: ids.site, value: 'javascript://x.test/alert' }], errorBody('Website is not a URL')],
    [[{ id: ids.mentor, value: 'Friend' }], errorBody('User IDs is not a list')],
    [[{ id: ids.mentor, value: ['x'] }], errorBody('User IDs[0] is not an integer')],
    [[{ id: ids.mentor, value: [friend.id, 999998, 999999] }], errorBody('Invalid user IDs: 999998, 999999')],
    [[{ id: ids.mentor, value: [gone.id] }], errorBody(`User with ID ${gone.id} is deactivated`)],
    [[{ id: ids.mentor, value: [bot.id] }], errorBody(`User with ID ${bot.id} is a bot`)],
    [
      [
        { id: ids.pronouns, value: 'ok' },
        { id: ids.editor, value: 'nano' },
      ],
      errorBody("'nano' is not a valid choice for 'Editor'."),
    ],
  ];
  for (const [body, error] of invalid) await expectError(me.client.patch('/users/me/profile_data', { data: body }), error);
  await expectError(me.client.patch('/users/me/profile_data', {}), errorBody("Missing 'data' argument", 'REQUEST_VARIABLE_MISSING', { var_name: 'data' }));
  await expectError(bot.client.patch('/users/me/profile_data', { data: [] }), errorBody('This endpoint does not accept bot requests.'));
  assert.equal(await queue.pending(), [], 'a refused request changes nothing');
  assert.equal((await me.client.get('/users/me')).body.profile_data, profile);
});

test('DELETE /users/me/profile_data; editable_by_user; administrators through PATCH /users/{id}', async () => {
  const realm = await newRealm();
  const me = await realm.addUser({ name: 'Me' });
  const admin = await realm.addUser({ role: ADMIN });
  const bot = await realm.addUser({ bot: true, botOwnerId: realm.owner.id });
  const phone = await createField(realm, { name: 'Phone', field_type: 1 });
  const badge = await createField(realm, { name: 'Badge', field_type: 1, editable_by_user: false });
  const queue = await openQueue(admin, { event_types: ['realm_user'] });
  const update = (field: Record<string, unknown>) => ({ type: 'realm_user', op: 'update', person: { user_id: me.id, custom_profile_field: field } });

  const locked = errorBody('You are not allowed to change this field. Contact an administrator to update it.');
  await expectError(me.client.patch('/users/me/profile_data', { data: [{ id: badge, value: 'B-1' }] }), locked);
  await ok(
    admin.client.patch(`/users/${me.id}`, {
      profile_data: [
        { id: badge, value: 'B-1' },
        { id: phone, value: '123' },
      ],
    }),
  );
  assert.equal(
    [...(await queue.next()), ...(await queue.pending())],
    [update({ id: badge, value: 'B-1', rendered_value: '<p>B-1</p>' }), update({ id: phone, value: '123', rendered_value: '<p>123</p>' })],
  );
  await expectError(me.client.delete('/users/me/profile_data', { data: [badge] }), locked);
  await expectError(me.client.delete('/users/me/profile_data', { data: [phone, 999999] }), errorBody('Field id 999999 not found.'));
  await ok(me.client.delete('/users/me/profile_data', { data: [phone, phone] }));
  assert.equal(await queue.next(), [update({ id: phone, value: null })], 'removing what is not there sends nothing');
  await ok(admin.client.patch(`/users/${me.id}`, { profile_data: [{ id: badge, value: '' }] }));
  assert.equal(await queue.next(), [update({ id: badge, value: null })], 'an empty value removes it');
  await ok(me.client.patch('/users/me/profile_data', { data: [{ id: phone, value: '' }] }));
  assert.equal(await queue.next(), [update({ id: phone, value: '' })], 'here an empty string is a value');
  assert.equal((await me.client.get('/users/me')).body.profile_data, { [phone]: { value: '', rendered_value: '' } });
  await expectError(bot.client.delete('/users/me/profile_data', { data: [phone] }), errorBody('This endpoint does not accept bot requests.'));
  await expectError(
    admin.client.patch(`/users/${me.id}`, { profile_data: [{ id: phone, value: 'x'.repeat(51) }] }),
    errorBody('Phone is too long (limit: 50 characters)'),
  );
});

test.run();
