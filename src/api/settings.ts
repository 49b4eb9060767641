// PATCH /settings: the user's own name, password, time zone and personal settings, plus the
// deprecated aliases /settings/display and /settings/notifications that Zulip still serves.
import { z } from 'zod';
import { updateSettings } from '../actions/settings.ts';
import { isTimeZone, PERSONAL_SETTINGS, STRING_USER_SETTINGS, userSettingsSchema, type UserSettingName, type UserSettings } from '../domain/user-settings.ts';
import { Field, str } from '../http/params.ts';
import { userRoute } from './route.ts';

/** One optional parameter per named setting, validated as stored (a bad value reads "Invalid <name>"). */
export function settingParams(names: readonly UserSettingName[]): Record<UserSettingName, Field<unknown>> {
  return Object.fromEntries(
    names.map((name) => {
      const stored = userSettingsSchema.shape[name] as unknown as { unwrap(): z.ZodType };
      return [name, new Field(STRING_USER_SETTINGS.has(name) ? 'string' : 'json', stored.unwrap(), false)];
    }),
  ) as Record<UserSettingName, Field<unknown>>;
}

/** The settings among `names` that the request sent, in that order. */
export function sentSettings(names: readonly UserSettingName[], params: Partial<Record<UserSettingName, unknown>>): Partial<UserSettings> {
  return Object.fromEntries(names.filter((n) => params[n] !== undefined).map((n) => [n, params[n]]));
}

const params = {
  full_name: str().optional(),
  old_password: str().optional(),
  new_password: str().optional(),
  timezone: str(z.string().refine(isTimeZone, 'Invalid')).optional(),
  ...settingParams(PERSONAL_SETTINGS),
};

export const routes = ['/api/v1/settings', '/api/v1/settings/display', '/api/v1/settings/notifications'].map((path) =>
  userRoute({
    method: 'PATCH',
    path,
    params,
    response: z.object({}),
    async handler({ app, realm, user, params: p, sessionId }) {
      await updateSettings(app, realm, user, {
        fullName: p.full_name,
        oldPassword: p.old_password,
        newPassword: p.new_password,
        timezone: p.timezone,
        settings: sentSettings(PERSONAL_SETTINGS, p),
        sessionId,
      });
      return {};
    },
  }),
);
