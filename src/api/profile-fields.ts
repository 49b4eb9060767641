// Custom profile fields: GET/POST/PATCH (order) /realm/profile_fields,
// PATCH/DELETE /realm/profile_fields/{id}; a person's own values: PATCH/DELETE /users/me/profile_data.
import { z } from 'zod';
import {
  createProfileField,
  deleteProfileField,
  removeOwnProfileData,
  reorderProfileFields,
  updateOwnProfileData,
  updateProfileField,
} from '../actions/profile-fields.ts';
import type { FieldData } from '../domain/profile-fields.ts';
import { badRequest } from '../errors.ts';
import { bool, int, intList, json, pathId, str } from '../http/params.ts';
import { userRoute } from './route.ts';
import { profileFields } from '../queries/profile-fields.ts';
import { profileField } from '../events/schemas.ts';

const fieldData = () => json<FieldData>(z.record(z.string(), z.union([z.string(), z.record(z.string(), z.string())])));
const fieldId = (path: Record<string, string>) => pathId(path.field_id, () => badRequest(`Field id ${path.field_id} not found.`));
/** A value is a string, or a list of user ids for USER fields; the action checks which with Zulip's words. */
export const profileValue = z.union([z.string(), z.array(z.unknown())]);

export const routes = [
  userRoute({
    method: 'GET',
    path: '/api/v1/realm/profile_fields',
    params: {},
    response: z.object({ custom_fields: z.array(profileField) }),
    async handler({ app, realm }) {
      return { custom_fields: await profileFields(app, realm.id) };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/realm/profile_fields',
    params: {
      name: str().default(''),
      hint: str().default(''),
      field_type: int(),
      field_data: fieldData().default({}),
      display_in_profile_summary: bool().default(false),
      required: bool().default(false),
      editable_by_user: bool().default(true),
    },
    response: z.object({ id: z.number().int() }),
    async handler({ app, realm, user, params: p }) {
      const id = await createProfileField(app, realm, user, {
        name: p.name,
        hint: p.hint,
        fieldType: p.field_type,
        fieldData: p.field_data,
        displayInProfileSummary: p.display_in_profile_summary,
        required: p.required,
        editableByUser: p.editable_by_user,
      });
      return { id };
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/realm/profile_fields',
    params: { order: intList() },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await reorderProfileFields(app, realm, user, params.order);
      return {};
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/realm/profile_fields/:field_id',
    params: {
      name: str().optional(),
      hint: str().optional(),
      field_data: fieldData().optional(),
      display_in_profile_summary: bool().optional(),
      required: bool().optional(),
      editable_by_user: bool().optional(),
    },
    response: z.object({}),
    async handler({ app, realm, user, params: p, path }) {
      await updateProfileField(app, realm, user, fieldId(path), {
        name: p.name,
        hint: p.hint,
        fieldData: p.field_data,
        displayInProfileSummary: p.display_in_profile_summary,
        required: p.required,
        editableByUser: p.editable_by_user,
      });
      return {};
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/realm/profile_fields/:field_id',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await deleteProfileField(app, realm, user, fieldId(path));
      return {};
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/users/me/profile_data',
    params: { data: json(z.array(z.object({ id: z.number().int(), value: profileValue }).strict())) },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await updateOwnProfileData(app, realm, user, params.data);
      return {};
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/users/me/profile_data',
    params: { data: intList() },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await removeOwnProfileData(app, realm, user, params.data);
      return {};
    },
  }),
];
