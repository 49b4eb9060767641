// PATCH /settings: the user's own name, password, time zone and personal settings, plus the
// deprecated aliases /settings/display and /settings/notifications that Zulip still serves.
import { z } from 'zod';
import { updateSettings } from '../actions/settings.ts';
import {
  INTERNAL_USER_SETTINGS, isTimeZone, STRING_USER_SETTINGS, userSettingsSchema, type UserSettingName, type UserSettings,
} from '../domain/user-settings.ts';
import { Field, str } from '../http/params.ts';
import { userRoute } from './route.ts';

const SETTING_NAMES = (Object.keys(userSettingsSchema.shape) as UserSettingName[]).filter((n) => !INTERNAL_USER_SETTINGS.includes(n));

/** One optional parameter per personal setting, validated as stored (a bad value reads "Invalid <name>"). */
const settingFields = Object.fromEntries(
  SETTING_NAMES.map((name) => {
    const stored = userSettingsSchema.shape[name] as unknown as { unwrap(): z.ZodType };
    return [name, new Field(STRING_USER_SETTINGS.has(name) ? 'string' : 'json', stored.unwrap(), false)];
  }),
) as Record<UserSettingName, Field<unknown>>;

const params = {
  full_name: str().optional(),
  old_password: str().optional(),
  new_password: str().optional(),
  timezone: str(z.string().refine(isTimeZone, 'Invalid')).optional(),
  ...settingFields,
};

export const routes = ['/api/v1/settings', '/api/v1/settings/display', '/api/v1/settings/notifications'].map((path) =>
  userRoute({
    method: 'PATCH',
    path,
    params,
    async handler({ app, realm, user, params: p }) {
      const settings: Partial<UserSettings> = Object.fromEntries(SETTING_NAMES.filter((n) => p[n] !== undefined).map((n) => [n, p[n]]));
      await updateSettings(app, realm, user, {
        fullName: p.full_name, oldPassword: p.old_password, newPassword: p.new_password, timezone: p.timezone, settings,
      });
      return {};
    },
  }),
);
