// PATCH /realm/user_settings_defaults (Zulip's update_realm_user_settings_defaults and
// do_set_realm_user_default_setting): administrators choose the personal settings new users
// start with. Existing users keep theirs; every active user learns each changed default.
import type { App } from '../app.ts';
import { requireRole } from '../auth/policy.ts';
import type { Prisma, User } from '../db/generated/client.ts';
import { Role } from '../domain/roles.ts';
import { userSettingsSchema, type UserSettingName, type UserSettings } from '../domain/user-settings.ts';
import type { RealmInfo } from '../queries/realms.ts';
import { sendToRealm } from './realm.ts';
import { checkSettingValues } from './settings.ts';
import { atomic, onCommit } from './transaction.ts';
import { realmChanged } from '../cluster/cache-sync.ts';
import { EVENT_SCHEMAS, type ChatEvent } from '../events/schemas.ts';

/** A default as its event carries it: settings are scalars. */
const defaultsValue = EVENT_SCHEMAS['realm_user_settings_defaults/update'].shape.value;

export async function updateRealmUserDefaults(app: App, realm: RealmInfo, actor: User, requested: Partial<UserSettings>): Promise<void> {
  requireRole(actor, Role.ADMINISTRATOR);
  checkSettingValues(requested);
  await atomic(app, async () => {
    // The defaults are one JSON value: hold the row so concurrent changes cannot drop each other.
    const [row] = await app.prisma.$queryRaw<{ userSettingsDefaults: Prisma.JsonObject }[]>`
      SELECT "userSettingsDefaults" FROM "Realm" WHERE id = ${realm.id} FOR UPDATE`;
    const stored = row!.userSettingsDefaults;
    const current: Record<string, unknown> = userSettingsSchema.parse(stored);
    // In Zulip's parameter order, which is alphabetical.
    const changed = (Object.entries(requested) as [UserSettingName, unknown][])
      .filter(([name, value]) => current[name] !== value)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    if (changed.length === 0) return;
    await app.prisma.realm.update({
      where: { id: realm.id },
      data: { userSettingsDefaults: { ...stored, ...Object.fromEntries(changed) } as Prisma.InputJsonObject },
    });
    onCommit(async () => {
      await realmChanged(app, realm.id);
    });
    // Register reads the defaults from the realm cache, hence alwaysDeliver (as for PATCH /realm).
    for (const [property, value] of changed) {
      const event: ChatEvent = { type: 'realm_user_settings_defaults', op: 'update', property, value: defaultsValue.parse(value) };
      await sendToRealm(app, realm, event, { alwaysDeliver: true });
    }
  });
}
