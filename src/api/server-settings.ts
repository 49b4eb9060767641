// GET /server_settings: what a client reads before logging in (no authentication).
import { z } from 'zod';
import { publicRoute } from './route.ts';
import { externalMethods, realmMethods } from '../auth/methods.ts';
import { FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from '../version.ts';

export const routes = [
  publicRoute({
    method: 'GET',
    path: '/api/v1/server_settings',
    params: {},
    response: z.object({
      authentication_methods: z.record(z.string(), z.boolean()),
      external_authentication_methods: z.array(
        z.object({ name: z.string(), display_name: z.string(), display_icon: z.string().nullable(), login_url: z.string(), signup_url: z.string() }),
      ),
      zulip_feature_level: z.number().int(),
      zulip_version: z.string(),
      zulip_merge_base: z.string(),
      push_notifications_enabled: z.boolean(),
      is_incompatible: z.boolean(),
      email_auth_enabled: z.boolean(),
      require_email_format_usernames: z.boolean(),
      realm_url: z.string(),
      realm_uri: z.string(),
      realm_name: z.string(),
      realm_icon: z.string(),
      realm_description: z.string(),
      realm_web_public_access_enabled: z.boolean(),
    }),
    noRateLimit: true,
    async handler({ app, realm }) {
      const url = app.realms.url(realm);
      const methods = realmMethods(app, realm);
      const [email, ldap] = [methods.Email === true, methods.LDAP === true];
      return {
        authentication_methods: {
          password: email || ldap,
          dev: false,
          email,
          ldap,
          remoteuser: false,
          github: false,
          azuread: false,
          gitlab: false,
          apple: false,
          google: false,
          saml: methods.SAML === true,
          'openid connect': methods['OpenID Connect'] === true,
        },
        external_authentication_methods: externalMethods(app, realm),
        zulip_feature_level: FEATURE_LEVEL,
        zulip_version: ZULIP_VERSION,
        zulip_merge_base: ZULIP_MERGE_BASE,
        push_notifications_enabled: app.config.PUSH_RELAY_URL !== undefined,
        is_incompatible: false,
        email_auth_enabled: email,
        require_email_format_usernames: app.ldap?.usernamesAreEmails ?? true,
        realm_url: url,
        realm_uri: url,
        realm_name: realm.name,
        realm_icon: `${url}/static/images/logo/zulip-icon-128x128.png`,
        realm_description: realm.description,
        realm_web_public_access_enabled: realm.settings.enable_spectator_access,
      };
    },
  }),
];
