// Organization settings: PATCH /realm, PATCH /realm/user_settings_defaults, POST /realm/deactivate.
import { z } from 'zod';
import { deactivateRealm, REALM_PERMISSIONS, type RealmUpdate, updateRealm } from '../actions/realm.ts';
import { updateRealmUserDefaults } from '../actions/realm-user-defaults.ts';
import { groupSettingChangeSchema, type RealmPermission, type RealmSettings, welcomeTextSchema } from '../domain/realm-settings.ts';
import { REALM_DEFAULT_SETTINGS } from '../domain/user-settings.ts';
import { bool, Field, json, str } from '../http/params.ts';
import { userRoute } from './route.ts';
import { sentSettings, settingParams as personalSettingParams } from './settings.ts';
import { groupSetting } from '../events/schemas.ts';

const MAX_REALM_NAME_LENGTH = 40;
const MAX_REALM_DESCRIPTION_LENGTH = 1000;

/** A JSON value, or the bare string clients send for special values such as `unlimited`. */
const lenient = <T>(schema: z.ZodType<T>) =>
  new Field<T | undefined>(
    'string',
    z
      .string()
      .transform((s): unknown => {
        try {
          return JSON.parse(s);
        } catch {
          return s;
        }
      })
      .pipe(schema),
    false,
  );
const intOrString = () => lenient(z.union([z.number().int(), z.string()]));
const optionalBool = () => bool().optional();
const optionalInt = (schema = z.number().int()) => json(schema).optional();

const settingParams = {
  allow_message_editing: optionalBool(),
  allow_edit_history: optionalBool(),
  avatar_changes_disabled: optionalBool(),
  digest_emails_enabled: optionalBool(),
  email_changes_disabled: optionalBool(),
  emails_restricted_to_domains: optionalBool(),
  enable_spectator_access: optionalBool(),
  enable_read_receipts: optionalBool(),
  inline_image_preview: optionalBool(),
  inline_url_embed_preview: optionalBool(),
  invite_required: optionalBool(),
  message_content_allowed_in_email_notifications: optionalBool(),
  name_changes_disabled: optionalBool(),
  require_unique_names: optionalBool(),
  send_welcome_emails: optionalBool(),
  want_advertise_in_communities_directory: optionalBool(),
  default_code_block_language: str().optional(),
  default_language: str().optional(),
  digest_weekday: optionalInt(z.number().int().min(0).max(6)),
  giphy_rating: optionalInt(),
  jitsi_server_url: lenient(z.string()),
  message_content_delete_limit_seconds: intOrString(),
  message_content_edit_limit_seconds: intOrString(),
  message_retention_days: intOrString(),
  move_messages_between_streams_limit_seconds: intOrString(),
  move_messages_within_stream_limit_seconds: intOrString(),
  org_type: optionalInt(),
  topics_policy: str().optional(),
  video_chat_provider: optionalInt(),
  waiting_period_threshold: optionalInt(z.number().int().min(0)),
  moderation_request_channel_id: optionalInt(),
  welcome_message_custom_text: str(welcomeTextSchema).optional(),
  authentication_methods: json(z.record(z.string(), z.boolean())).optional(),
} satisfies Partial<Record<keyof RealmSettings, Field<unknown>>>;

const permissionParams = Object.fromEntries(REALM_PERMISSIONS.map((s) => [s, json(groupSettingChangeSchema).optional()])) as Record<
  RealmPermission,
  Field<z.infer<typeof groupSettingChangeSchema> | undefined>
>;

const changedValue = z.union([z.boolean(), z.number(), z.string(), z.null(), z.record(z.string(), z.boolean())]);
/** PATCH /realm answers the settings it changed, with their new values. */
const changedSettings = z
  .object({
    ...Object.fromEntries(['name', 'description', ...Object.keys(settingParams)].map((name) => [name, changedValue.optional()])),
    ...Object.fromEntries(REALM_PERMISSIONS.map((name) => [name, groupSetting.optional()])),
  })
  .describe('The settings that changed, with their new values');

export const routes = [
  userRoute({
    method: 'PATCH',
    path: '/api/v1/realm',
    params: {
      name: str(z.string().max(MAX_REALM_NAME_LENGTH)).optional(),
      description: str(z.string().max(MAX_REALM_DESCRIPTION_LENGTH)).optional(),
      ...settingParams,
      ...permissionParams,
    },
    response: changedSettings,
    async handler({ app, realm, user, params }) {
      const picked = <K extends string>(keys: readonly K[]) =>
        Object.fromEntries(keys.filter((k) => params[k as keyof typeof params] !== undefined).map((k) => [k, params[k as keyof typeof params]]));
      const update: RealmUpdate = {
        name: params.name,
        description: params.description,
        settings: picked(Object.keys(settingParams)) as RealmUpdate['settings'],
        permissions: picked(REALM_PERMISSIONS) as RealmUpdate['permissions'],
      };
      return updateRealm(app, realm, user, update);
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/realm/user_settings_defaults',
    params: personalSettingParams(REALM_DEFAULT_SETTINGS),
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await updateRealmUserDefaults(app, realm, user, sentSettings(REALM_DEFAULT_SETTINGS, params));
      return {};
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/realm/deactivate',
    params: { deletion_delay_days: json(z.number().int().nullable()).default(null) },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await deactivateRealm(app, realm, user, params.deletion_delay_days);
      return {};
    },
  }),
];
