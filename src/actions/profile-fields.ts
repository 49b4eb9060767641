// Custom profile fields (Zulip's zerver/actions/custom_profile_fields.py): administrators define
// them (every active user gets the whole new list in a `custom_profile_fields` event); people
// fill in their values, administrators anyone's (a `realm_user` update per changed value, to
// who can access the person).
import type { App } from '../app.ts';
import { isAdmin, requireHuman, requireRole } from '../auth/policy.ts';
import type { CustomProfileField, User } from '../db/generated/client.ts';
import {
  FieldType,
  MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS,
  checkFieldDefinition,
  checkTextValue,
  isRenderedType,
  parseFieldData,
  predefinedAccount,
  profileFieldVarName,
  storedFieldData,
  type FieldData,
} from '../domain/profile-fields.ts';
import { Role } from '../domain/roles.ts';
import { badRequest } from '../errors.ts';
import { profileFields } from '../queries/profile-fields.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { renderWithRealm } from '../queries/render-context.ts';
import { realmViewers } from '../queries/users.ts';
import { atomic, lockUser, sendOnCommit } from './transaction.ts';
import { sendAboutUser } from './user-access.ts';
import type { EventOf } from '../events/schemas.ts';

/**
 * Field definitions of one organization change one at a time (the name and summary rules hold).
 * NO KEY UPDATE: rows that merely reference the organization (messages...) are not held up.
 */
async function lockDefinitions(app: App, realmId: number): Promise<void> {
  await app.prisma.$queryRawUnsafe('SELECT 1 FROM "Realm" WHERE id = $1 FOR NO KEY UPDATE', realmId);
}

async function announceFields(app: App, realm: RealmInfo): Promise<void> {
  const userIds = (await realmViewers(app, realm.id)).map((v) => v.id);
  sendOnCommit({ realmId: realm.id, userIds, event: { type: 'custom_profile_fields', fields: await profileFields(app, realm.id) } });
}

async function fieldById(app: App, realm: RealmInfo, id: number): Promise<CustomProfileField> {
  const field = await app.prisma.customProfileField.findFirst({ where: { id, realmId: realm.id } });
  if (!field) throw badRequest(`Field id ${id} not found.`);
  return field;
}

async function checkSummaryLimit(app: App, realm: RealmInfo, exceptId?: number): Promise<void> {
  const shown = await app.prisma.customProfileField.count({
    where: { realmId: realm.id, displayInProfileSummary: true, ...(exceptId ? { id: { not: exceptId } } : {}) },
  });
  if (shown >= MAX_DISPLAY_IN_PROFILE_SUMMARY_FIELDS) throw badRequest('Only 2 custom profile fields can be displayed in the profile summary.');
}

async function checkLabelFree(app: App, realm: RealmInfo, name: string, exceptId?: number): Promise<void> {
  const taken = await app.prisma.customProfileField.findFirst({
    where: { realmId: realm.id, name, ...(exceptId ? { id: { not: exceptId } } : {}) },
    select: { id: true },
  });
  if (taken) throw badRequest('A field with that label already exists.');
}

export interface NewField {
  name: string;
  hint: string;
  fieldType: number;
  fieldData: FieldData;
  displayInProfileSummary: boolean;
  required: boolean;
  editableByUser: boolean;
}

/** POST /realm/profile_fields: the new field goes last; returns its id. */
export async function createProfileField(app: App, realm: RealmInfo, actor: User, f: NewField): Promise<number> {
  requireRole(actor, Role.ADMINISTRATOR);
  const name = f.name.trim();
  return atomic(app, async () => {
    await lockDefinitions(app, realm.id);
    if (f.displayInProfileSummary) await checkSummaryLimit(app, realm);
    checkFieldDefinition({ name, hint: f.hint, type: f.fieldType, fieldData: f.fieldData, displayInProfileSummary: f.displayInProfileSummary });
    // A predefined external account is named and described by its kind.
    const predefined = predefinedAccount(f.fieldType, f.fieldData);
    const definition = predefined
      ? { name: predefined.name, hint: predefined.hint, fieldData: JSON.stringify({ subtype: f.fieldData.subtype }) }
      : { name, hint: f.hint, fieldData: storedFieldData(f.fieldType, f.fieldData) };
    await checkLabelFree(app, realm, definition.name);
    const field = await app.prisma.customProfileField.create({
      data: {
        realmId: realm.id,
        ...definition,
        fieldType: f.fieldType,
        displayInProfileSummary: f.displayInProfileSummary,
        required: f.required,
        editableByUser: f.editableByUser,
      },
    });
    // As in Zulip, a new field's order is its id: after every field there is.
    await app.prisma.customProfileField.update({ where: { id: field.id }, data: { order: field.id } });
    await announceFields(app, realm);
    return field.id;
  });
}

export interface FieldChange {
  name?: string;
  hint?: string;
  fieldData?: FieldData;
  displayInProfileSummary?: boolean;
  required?: boolean;
  editableByUser?: boolean;
}

/** Equal as JSON objects, whatever the order of their keys. */
function sameData(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return a === b;
  const [ka, kb] = [Object.keys(a), Object.keys(b)];
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && sameData((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** A predefined external account may only be moved in or out of the profile summary. */
function changesOnlySummary(field: CustomProfileField, c: FieldChange): boolean {
  return (
    (c.name === undefined || c.name === field.name) &&
    (c.hint === undefined || c.hint === field.hint) &&
    (c.fieldData === undefined || sameData(c.fieldData, parseFieldData(field.fieldData)))
  );
}

/** PATCH /realm/profile_fields/{id}. */
export async function updateProfileField(app: App, realm: RealmInfo, actor: User, fieldId: number, change: FieldChange): Promise<void> {
  requireRole(actor, Role.ADMINISTRATOR);
  const c = { ...change, name: change.name?.trim() };
  await atomic(app, async () => {
    await lockDefinitions(app, realm.id);
    const field = await fieldById(app, realm, fieldId);
    if (c.displayInProfileSummary) await checkSummaryLimit(app, realm, field.id);
    const current = parseFieldData(field.fieldData);
    if (predefinedAccount(field.fieldType, current) && !changesOnlySummary(field, c)) throw badRequest('Default custom field cannot be updated.');
    const name = c.name ?? field.name;
    checkFieldDefinition({
      name,
      hint: c.hint ?? field.hint,
      type: field.fieldType,
      fieldData: c.fieldData ?? current,
      displayInProfileSummary: c.displayInProfileSummary ?? field.displayInProfileSummary,
    });
    await checkLabelFree(app, realm, name, field.id);
    const hasData = field.fieldType === FieldType.SELECT || field.fieldType === FieldType.EXTERNAL_ACCOUNT;
    if (field.fieldType === FieldType.SELECT && c.fieldData) {
      // Users who had picked an option that is gone have no value any more, and clients hear of
      // each as of a removed value (Zulip deletes them silently, so its clients keep stale values).
      const removed = Object.keys(current).filter((key) => !Object.hasOwn(c.fieldData!, key));
      const cleared = await app.prisma.$queryRaw<{ userId: number }[]>`
        DELETE FROM "CustomProfileFieldValue" WHERE "fieldId" = ${field.id} AND value = ANY(${removed}::text[]) RETURNING "userId"`;
      const users = await app.prisma.user.findMany({ where: { id: { in: cleared.map((r) => r.userId) } }, orderBy: { id: 'asc' } });
      for (const user of users) await announceValue(app, realm, user, { id: field.id, value: null });
    }
    await app.prisma.customProfileField.update({
      where: { id: field.id },
      data: {
        name: c.name,
        hint: c.hint,
        required: c.required,
        editableByUser: c.editableByUser,
        displayInProfileSummary: c.displayInProfileSummary,
        ...(hasData && (c.fieldData !== undefined || field.fieldData === '') ? { fieldData: JSON.stringify(c.fieldData ?? {}) } : {}),
      },
    });
    await announceFields(app, realm);
  });
}

/** DELETE /realm/profile_fields/{id}: the users' values go with it. */
export async function deleteProfileField(app: App, realm: RealmInfo, actor: User, fieldId: number): Promise<void> {
  requireRole(actor, Role.ADMINISTRATOR);
  await atomic(app, async () => {
    await lockDefinitions(app, realm.id);
    const field = await fieldById(app, realm, fieldId);
    await app.prisma.customProfileField.delete({ where: { id: field.id } });
    await announceFields(app, realm);
  });
}

/** PATCH /realm/profile_fields: every field's id, in the new order. */
export async function reorderProfileFields(app: App, realm: RealmInfo, actor: User, order: number[]): Promise<void> {
  requireRole(actor, Role.ADMINISTRATOR);
  await atomic(app, async () => {
    await lockDefinitions(app, realm.id);
    const position = new Map(order.map((id, i) => [id, i]));
    const ids = (await app.prisma.customProfileField.findMany({ where: { realmId: realm.id }, select: { id: true } })).map((f) => f.id);
    if (!ids.every((id) => position.has(id))) throw badRequest('Invalid order mapping.');
    await app.prisma.$executeRawUnsafe(
      'UPDATE "CustomProfileField" f SET "order" = t.pos FROM unnest($1::int[], $2::int[]) AS t(id, pos) WHERE f.id = t.id',
      ids,
      ids.map((id) => position.get(id)!),
    );
    await announceFields(app, realm);
  });
}

/** A value as sent: a string, or for USER fields a list of user ids (checked here, with Zulip's words). */
export interface ProfileDataEntry {
  id: number;
  value: string | unknown[];
}

/** Zulip's check_valid_user_ids for a USER field: active people of the organization. */
async function checkUserIds(app: App, realm: RealmInfo, value: unknown): Promise<number[]> {
  if (!Array.isArray(value)) throw badRequest('User IDs is not a list');
  const bad = value.findIndex((id) => !Number.isInteger(id));
  if (bad >= 0) throw badRequest(`User IDs[${bad}] is not an integer`);
  const ids = value as number[];
  const users = await app.prisma.user.findMany({ where: { realmId: realm.id, id: { in: ids } }, orderBy: { id: 'asc' } });
  const invalid = ids.filter((id) => !users.some((u) => u.id === id));
  if (invalid.length) throw badRequest(`Invalid user IDs: ${invalid.join(', ')}`);
  for (const u of users) {
    if (!u.isActive) throw badRequest(`User with ID ${u.id} is deactivated`);
    if (u.isBot) throw badRequest(`User with ID ${u.id} is a bot`);
  }
  return ids;
}

/** A field the actor may change: any for administrators, else only those editable by users. */
async function editableField(app: App, realm: RealmInfo, actor: User | null, fieldId: number): Promise<CustomProfileField> {
  const field = await fieldById(app, realm, fieldId);
  if (actor && !isAdmin(actor) && !field.editableByUser) {
    throw badRequest('You are not allowed to change this field. Contact an administrator to update it.');
  }
  return field;
}

/** A realm_user update's changed profile field. */
type FieldValue = Extract<EventOf<'realm_user', 'update'>['person'], { custom_profile_field: unknown }>['custom_profile_field'];

const announceValue = (app: App, realm: RealmInfo, target: User, value: FieldValue) =>
  sendAboutUser(app, realm, target, { type: 'realm_user', op: 'update', person: { user_id: target.id, custom_profile_field: value } });

/**
 * Zulip's validate_user_custom_profile_data then do_update_user_custom_profile_data_if_changed:
 * every value checked, then each written and announced unless it is already the stored one.
 */
async function setValues(app: App, realm: RealmInfo, actor: User | null, target: User, entries: ProfileDataEntry[]): Promise<void> {
  const checked: { field: CustomProfileField; value: string }[] = [];
  for (const entry of entries) {
    const field = await editableField(app, realm, actor, entry.id);
    const value = field.fieldType === FieldType.USER ? JSON.stringify(await checkUserIds(app, realm, entry.value)) : checkTextValue(field, entry.value);
    checked.push({ field, value });
  }
  for (const { field, value } of checked) {
    const key = { fieldId_userId: { fieldId: field.id, userId: target.id } };
    const current = await app.prisma.customProfileFieldValue.findUnique({ where: key });
    if (current?.value === value) continue;
    const renderedValue = isRenderedType(field.fieldType) ? (await renderWithRealm(app, realm, value, { noPreviews: true })).html : null;
    await app.prisma.customProfileFieldValue.upsert({
      where: key,
      create: { fieldId: field.id, userId: target.id, value, renderedValue },
      update: { value, renderedValue },
    });
    // An empty rendering is left out, as Zulip does.
    await announceValue(app, realm, target, renderedValue ? { id: field.id, value, rendered_value: renderedValue } : { id: field.id, value });
  }
}

/** Zulip's check_remove_custom_profile_field_value: nothing to do when there is no value. */
async function removeValue(app: App, realm: RealmInfo, actor: User, target: User, fieldId: number): Promise<void> {
  const field = await editableField(app, realm, actor, fieldId);
  const { count } = await app.prisma.customProfileFieldValue.deleteMany({ where: { fieldId: field.id, userId: target.id } });
  if (count) await announceValue(app, realm, target, { id: field.id, value: null });
}

/** PATCH /users/me/profile_data. */
export async function updateOwnProfileData(app: App, realm: RealmInfo, user: User, entries: ProfileDataEntry[]): Promise<void> {
  requireHuman(user);
  await atomic(app, async () => {
    await lockUser(app, user.id);
    await setValues(app, realm, user, user, entries);
  });
}

/** DELETE /users/me/profile_data. */
export async function removeOwnProfileData(app: App, realm: RealmInfo, user: User, fieldIds: number[]): Promise<void> {
  requireHuman(user);
  await atomic(app, async () => {
    await lockUser(app, user.id);
    for (const id of fieldIds) await removeValue(app, realm, user, user, id);
  });
}

/**
 * PATCH /users/{id} profile_data, inside that request's transaction: an empty value (null, "",
 * []) removes the field's value, as it comes; the others are then checked and written together.
 */
export async function adminSetProfileData(
  app: App,
  realm: RealmInfo,
  actor: User,
  target: User,
  entries: { id: number; value: string | unknown[] | null }[],
): Promise<void> {
  const values: ProfileDataEntry[] = [];
  for (const entry of entries) {
    if (entry.value === null || entry.value.length === 0) await removeValue(app, realm, actor, target, entry.id);
    else values.push({ id: entry.id, value: entry.value });
  }
  await setValues(app, realm, actor, target, values);
}

/** Values the organization's directory holds (sync from LDAP), by field name as Zulip's var_name; an unknown name is refused. */
export async function setProfileDataFromDirectory(app: App, realm: RealmInfo, target: User, byVarName: Map<string, string>): Promise<void> {
  if (!byVarName.size) return;
  const fields = await app.prisma.customProfileField.findMany({ where: { realmId: realm.id } });
  const entries = [...byVarName].map(([varName, value]) => {
    const field = fields.find((f) => profileFieldVarName(f.name) === varName);
    if (!field) throw badRequest(`Custom profile field with name ${varName} not found.`);
    return { id: field.id, value };
  });
  await atomic(app, async () => {
    await lockUser(app, target.id);
    await setValues(app, realm, null, target, entries);
  });
}
