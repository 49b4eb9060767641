// Every setting of the server, read once from the environment and validated, so a typo in a
// deployment fails at start instead of at the first request that needs the value.
import net from 'node:net';
import os from 'node:os';
import { randomBytes, X509Certificate } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { isValidEmail } from './domain/email-address.ts';

const flag = z.enum(['on', 'off', 'true', 'false', '1', '0']).transform((v) => v === 'on' || v === 'true' || v === '1');
const seconds = z.coerce.number().positive();

/** Zulip's JWT_AUTH_KEYS, as JSON: per organization subdomain, the key tokens are signed with and the algorithms allowed. */
const JWT_ALGORITHMS = ['HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
const json = z.string().transform((v, ctx) => {
  try {
    return JSON.parse(v) as unknown;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'expected JSON' });
    return z.NEVER;
  }
});
const jwtAuthKeys = json.pipe(z.record(z.string(), z.object({ key: z.string().min(1), algorithms: z.array(z.enum(JWT_ALGORITHMS)).min(1) })));

/** OpenID Connect providers (Zulip's SOCIAL_AUTH_OIDC_ENABLED_IDPS, as a list so that several may be listed). */
const oidcProviders = json.pipe(
  z
    .array(
      z.strictObject({
        /** In the provider's URLs (/accounts/login/social/oidc/<name>) and server_settings (`oidc:<name>`). */
        name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'expected lower-case letters, digits, - or _'),
        /** The issuer, whose /.well-known/openid-configuration is read. */
        issuer: z
          .string()
          .url()
          .refine((v) => ['http:', 'https:'].includes(new URL(v).protocol), 'expected an http(s) URL'),
        client_id: z.string().min(1),
        secret: z.string().min(1),
        display_name: z.string().min(1).default('OpenID Connect'),
        /** URL of the button's icon, or null. */
        display_icon: z.string().nullable().default(null),
        /** Whether someone the provider vouches for, without an account yet, gets one at once. */
        auto_signup: z.boolean().default(false),
      }),
    )
    .refine((list) => new Set(list.map((p) => p.name)).size === list.length, 'two providers have the same name'),
);
export type OidcProvider = z.infer<typeof oidcProviders>[number];

/** A certificate given as PEM, or as the base64 between PEM's BEGIN and END lines (as IdPs' metadata give it), as PEM. */
const certificate = z.string().transform((text, ctx) => {
  const pem = text.includes('-----BEGIN') ? text : `-----BEGIN CERTIFICATE-----\n${text.replace(/\s+/g, '')}\n-----END CERTIFICATE-----`;
  try {
    return new X509Certificate(pem).toString();
  } catch {
    ctx.addIssue({ code: 'custom', message: 'expected a PEM certificate, or the base64 of one' });
    return z.NEVER;
  }
});

/** SAML identity providers (Zulip's SOCIAL_AUTH_SAML_ENABLED_IDPS, as a list), with Zulip's key names. */
const samlIdps = json.pipe(
  z
    .array(
      z.strictObject({
        /** In the IdP's URLs (/accounts/login/social/saml/<name>) and server_settings (`saml:<name>`). */
        name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'expected lower-case letters, digits, - or _'),
        /** The IdP's entity ID: the Issuer of its answers. */
        entity_id: z.string().min(1),
        /** Its single sign-on URL (HTTP-Redirect binding). */
        url: z
          .string()
          .url()
          .refine((v) => ['http:', 'https:'].includes(new URL(v).protocol), 'expected an http(s) URL'),
        /** The certificate its answers are signed with: PEM, or the base64 between its BEGIN and END lines. */
        x509cert: certificate,
        /** Names of the assertion's attributes holding the address and the name. */
        attr_email: z.string().min(1).default('email'),
        attr_first_name: z.string().min(1).default('first_name'),
        attr_last_name: z.string().min(1).default('last_name'),
        /** An attribute with the whole name, preferred to first and last name when the IdP sends it. */
        attr_full_name: z.string().min(1).optional(),
        display_name: z.string().min(1).default('SAML'),
        /** URL of the button's icon, or null. */
        display_icon: z.string().nullable().default(null),
        /** Whether someone the IdP vouches for, without an account yet, gets one at once. */
        auto_signup: z.boolean().default(false),
        /** The organizations (subdomains; "" for the root domain) that may use this IdP; all when absent. */
        limit_to_subdomains: z.array(z.string()).optional(),
      }),
    )
    .refine((list) => new Set(list.map((p) => p.name)).size === list.length, 'two identity providers have the same name')
    .refine((list) => new Set(list.map((p) => p.entity_id)).size === list.length, 'two identity providers have the same entity_id'),
);
export type SamlIdp = z.infer<typeof samlIdps>[number];

/**
 * Zulip's AUTH_LDAP_USER_ATTR_MAP: which directory attribute gives `full_name` (or `first_name` and
 * `last_name`), `avatar`, `custom_profile_field__<name>`, and the account's state:
 * `userAccountControl` (Active Directory's flags) or `deactivated` (true/false).
 */
const ldapAttrMap = json.pipe(
  z
    .record(
      z
        .string()
        .regex(
          /^(full_name|first_name|last_name|avatar|userAccountControl|deactivated|custom_profile_field__[a-z0-9_]+)$/,
          "not a key Zulip's AUTH_LDAP_USER_ATTR_MAP knows",
        ),
      z.string().regex(/^[A-Za-z][A-Za-z0-9-]*$/, 'expected an attribute name'),
    )
    .refine((m) => m.full_name !== undefined || (m.first_name !== undefined && m.last_name !== undefined), 'map full_name, or first_name and last_name'),
);
const ldapUrl = z
  .string()
  .url()
  .refine((v) => ['ldap:', 'ldaps:'].includes(new URL(v).protocol), 'expected ldap://host[:port] or ldaps://host[:port]');

/** An IPv4 or IPv6 address, optionally with a CIDR prefix length. */
function isAddressOrRange(entry: string): boolean {
  const [address = '', prefix, ...rest] = entry.split('/');
  const version = net.isIP(address);
  if (version === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128));
}

const addressList = z
  .string()
  .transform((v) =>
    v
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e !== ''),
  )
  .refine((list) => list.every(isAddressOrRange), 'expected comma-separated IP addresses or CIDR ranges (10.0.0.0/8, fd00::/8)');

const externalUrl = z
  .string()
  .url()
  .refine((v) => {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.pathname === '/' && !u.search && !u.hash && !u.username;
  }, 'expected http(s)://host[:port] with no path');

const httpUrl = z
  .string()
  .url()
  .refine((v) => ['http:', 'https:'].includes(new URL(v).protocol), 'expected an http(s) URL')
  .transform((v) => v.replace(/\/+$/, ''));

const configSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(9991),
  /** Embedded PostgreSQL (DATA_DIR/postgres, its log DATA_DIR/postgres.log) and uploads live here unless DATABASE_URL / UPLOADS_DIR say otherwise. */
  DATA_DIR: z.string().default('./data'),
  /** The web client's build served at `/`; build/web unless set (a benchmark serves another commit's build). */
  WEB_DIR: z.string().optional(),
  DATABASE_URL: z.string().url().optional(),
  /**
   * Connections to PostgreSQL. Messages to different channels commit in parallel, each on its own
   * connection: measured with 32 senders over 100 channels, 10 gave 662 messages/s and 24 gave 790.
   * A connection stays held until the event loop reads its answer, so a busy process holds each
   * far longer than PostgreSQL works on it: at 1,000-3,000 capacity people 24 were all busy with
   * PostgreSQL idle, and 48 took the waits away (docs/operations.md, "The database pool").
   */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(2).max(500).default(48),
  /** A file where every 10 s a JSON line tells who held the pool's connections and for how long (src/db/holds.ts): a diagnosis, off unless set. */
  DATABASE_HOLD_LOG: z.string().optional(),
  UPLOADS_DIR: z.string().optional(),
  /** Host clients use to reach the server (realm URLs, dummy emails); defaults to HOST:PORT. */
  EXTERNAL_HOST: z.string().optional(),
  /** Domain of bots' and dummy user addresses where the host cannot form one (`localhost`, an IP address). */
  FAKE_EMAIL_DOMAIN: z
    .string()
    .default('fake-domain.invalid')
    .refine((d) => isValidEmail(`bot@${d}`), 'not a domain that can form email addresses'),
  /** Scheme and host clients use (`https://chat.example.com`): replaces EXTERNAL_HOST and fixes the scheme of every URL. */
  EXTERNAL_URL: externalUrl.optional(),
  /** Peers whose X-Forwarded-For and X-Forwarded-Proto are believed (reverse proxies); nobody's by default. */
  TRUSTED_PROXIES: addressList.default([]),
  RATE_LIMIT: flag.default(true),
  RATE_LIMIT_USER_PER_MINUTE: z.coerce.number().int().positive().default(200),
  RATE_LIMIT_IP_PER_MINUTE: z.coerce.number().int().positive().default(100),
  RATE_LIMIT_LOGIN_FAILURES: z.coerce.number().int().positive().default(5),
  RATE_LIMIT_LOGIN_WINDOW_SECONDS: seconds.default(1800),
  MAX_BODY_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(1024 * 1024),
  MAX_UPLOAD_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(25 * 1024 * 1024),
  /** A WebSocket client whose unsent data exceeds this is disconnected (its queue stays). */
  WS_MAX_BUFFERED_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(4 * 1024 * 1024),
  /** Interval of long-poll heartbeats; Zulip uses 45 s plus up to 10 s of jitter. */
  HEARTBEAT_SECONDS: seconds.default(45),
  HEARTBEAT_JITTER_SECONDS: z.coerce.number().min(0).default(10),
  /**
   * An event queue holding more unacknowledged events than this, or more bytes of them, is
   * discarded (its client re-registers) once its client has acknowledged nothing for a heartbeat
   * interval, instead of growing without end while nobody reads it.
   */
  QUEUE_MAX_EVENTS: z.coerce.number().int().positive().default(10_000),
  QUEUE_MAX_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024),
  /** Time a graceful stop may take (finish requests, save queues), within an orchestrator's grace period. */
  SHUTDOWN_DEADLINE_SECONDS: seconds.default(20),
  /** Minutes an invitation link stays valid when the inviter does not say (Zulip's default: 10 days). */
  INVITATION_LINK_VALIDITY_MINUTES: z.coerce.number().int().positive().default(14400),
  /** Invitation emails an organization may send in 24 hours (Zulip's INVITES_DEFAULT_REALM_DAILY_MAX). */
  INVITES_DAILY_LIMIT: z.coerce.number().int().min(0).default(100),
  /** `smtp://user:pass@host:587` or `smtps://...`: send mail through it; without it mail goes to DATA_DIR/mail.log. */
  SMTP_URL: z
    .string()
    .url()
    .refine((v) => ['smtp:', 'smtps:'].includes(new URL(v).protocol), 'expected smtp://... or smtps://...')
    .optional(),
  /** Sender address of the server's mail; defaults to noreply@ the external host's name. */
  MAIL_FROM: z.string().optional(),
  /** Cost of the scrypt password hash (N); lower only for tests. */
  PASSWORD_HASH_COST: z.coerce.number().int().min(1024).default(32768),
  /** Where users are told to write for help (Zulip's ZULIP_ADMINISTRATOR); defaults to admin@ the external host's name. */
  ZULIP_ADMINISTRATOR: z.string().email().optional(),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  /** Bearer token Prometheus sends to GET /metrics; unset, there is no /metrics. */
  METRICS_TOKEN: z.string().min(16, 'expected at least 16 characters').optional(),
  /**
   * Zulip's EMAIL_GATEWAY_PATTERN: the address of channels' incoming email, with `%s` where each
   * channel's token goes (`%s@streams.example.com`); empty (the default) when there is no gateway.
   */
  EMAIL_GATEWAY_PATTERN: z
    .string()
    .refine((v) => v.split('%s').length === 2, 'expected exactly one %s')
    .default(''),
  /**
   * The push relay (Zulip's push notification service) that forwards end-to-end encrypted
   * notifications to mobile devices: `https://push.example.com`; unset, the server sends none and
   * POST /mobile_push/register answers PUSH_SERVICE_NOT_CONFIGURED.
   */
  PUSH_RELAY_URL: httpUrl.optional(),
  /**
   * JSON web token login (POST /jwt/fetch_api_key), as Zulip's JWT_AUTH_KEYS: per organization
   * subdomain, `{"key": "...", "algorithms": ["HS256"]}` (a shared secret for HS*, a PEM public
   * key for the others); an organization not listed has no JWT login.
   */
  JWT_AUTH_KEYS: jwtAuthKeys.default({}),
  /**
   * OpenID Connect single sign-on: a JSON list of providers, each
   * `{"name", "issuer", "client_id", "secret", "display_name", "display_icon", "auto_signup"}`
   * (docs/sign-in.md); empty, there is none.
   */
  OIDC_PROVIDERS: oidcProviders.default([]),
  /**
   * SAML 2.0 single sign-on: a JSON list of identity providers, each `{"name", "entity_id", "url",
   * "x509cert", "attr_email", "attr_first_name", "attr_last_name", "attr_full_name", "display_name",
   * "display_icon", "auto_signup", "limit_to_subdomains"}` (docs/sign-in.md); empty, there is none.
   */
  SAML_IDPS: samlIdps.default([]),
  /** This server's SAML entity ID (Zulip's SOCIAL_AUTH_SAML_SP_ENTITY_ID): the audience of the assertions it accepts; its root URL by default. */
  SAML_SP_ENTITY_ID: z.string().min(1).optional(),
  /**
   * LDAP login (Zulip's ZulipLDAPAuthBackend; docs/sign-in.md): the directory's URL
   * (AUTH_LDAP_SERVER_URI); unset, there is no LDAP login.
   */
  LDAP_SERVER_URL: ldapUrl.optional(),
  /** AUTH_LDAP_START_TLS: upgrade an ldap:// connection with StartTLS before anything is sent. */
  LDAP_START_TLS: flag.default(false),
  /** PEM file of the certificate authorities the directory's certificate is checked against (ldaps://, StartTLS); the system's by default. */
  LDAP_TLS_CA_FILE: z.string().optional(),
  /** AUTH_LDAP_BIND_DN and AUTH_LDAP_BIND_PASSWORD: the account that searches the directory; anonymous when unset. */
  LDAP_BIND_DN: z.string().optional(),
  LDAP_BIND_PASSWORD: z.string().optional(),
  /** AUTH_LDAP_USER_SEARCH: the subtree holding the users, and the filter finding one, `%(user)s` standing for the username. */
  LDAP_USER_SEARCH_BASE: z.string().optional(),
  LDAP_USER_SEARCH_FILTER: z
    .string()
    .refine((v) => v.includes('%(user)s'), 'expected %(user)s in the filter')
    .default('(uid=%(user)s)'),
  /** AUTH_LDAP_USER_DN_TEMPLATE, instead of a search: `uid=%(user)s,ou=users,dc=example,dc=com`. */
  LDAP_USER_DN_TEMPLATE: z
    .string()
    .refine((v) => v.includes('%(user)s'), 'expected %(user)s in the template')
    .optional(),
  /** LDAP_APPEND_DOMAIN: usernames are the local part of addresses in this domain. */
  LDAP_APPEND_DOMAIN: z.string().optional(),
  /** LDAP_EMAIL_ATTR: the attribute holding a user's email address (`mail`); users may then log in with either. */
  LDAP_EMAIL_ATTR: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9-]*$/, 'expected an attribute name')
    .optional(),
  LDAP_USER_ATTR_MAP: ldapAttrMap.default({ full_name: 'cn' }),
  /** LDAP_DEACTIVATE_NON_MATCHING_USERS: `sync-ldap` deactivates the accounts the directory no longer has. */
  LDAP_DEACTIVATE_NON_MATCHING_USERS: flag.default(false),
  /** How long a call to an outgoing-webhook bot may take (Zulip's OUTGOING_WEBHOOK_TIMEOUT_SECONDS). */
  OUTGOING_WEBHOOK_TIMEOUT_SECONDS: seconds.default(10),
  /** How often the server looks for members due a digest email (on their organization's digest weekday). */
  DIGEST_CHECK_SECONDS: seconds.default(3600),
  /** An event that does not match its schema: `strict` fails the action (tests, development), `log` logs it. */
  EVENT_SCHEMA_CHECK: z.enum(['strict', 'log']).default('log'),
  /**
   * `nats` runs this process as one node of a cluster: several processes on one PostgreSQL, with
   * events and cache changes between them through NATS (docs/cluster.md). On by default when
   * NATS_URL is set; `off` keeps a single process even then.
   */
  CLUSTER: z.enum(['nats', 'off']).optional(),
  /**
   * Tests only: a node that commits a message containing this text kills itself (SIGKILL) right
   * after the commit, before it publishes the message's events (test/cluster/cluster-outbox.test.ts).
   */
  TEST_DIE_AFTER_COMMIT: z.string().min(1).optional(),
  /** Tests only: likewise once the message's events are stored in NATS, before its outbox row is deleted. */
  TEST_DIE_AFTER_PUBLISH: z.string().min(1).optional(),
  /** NATS server(s) of the cluster, comma-separated; JetStream must be enabled. */
  NATS_URL: z.string().optional(),
  /**
   * This node's name, unique in the cluster and kept across restarts (queue ids carry it, and a
   * restarted node takes back the queues it saved); defaults to host name and port.
   */
  NODE_ID: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,48}$/, 'expected 1-48 letters, digits, - or _')
    .optional(),
  /**
   * Zulip's CAMO_URI and CAMO_KEY: external images and videos in messages are shown through this
   * Camo proxy (`https://camo.example.com/`, signed with the key); empty: straight from their site.
   */
  CAMO_URI: z.string().default(''),
  CAMO_KEY: z.string().default(''),
});

// Realms live at subdomains of the external host, and `*.localhost` resolves to loopback in
// browsers, so a loopback-bound server names itself localhost.
const LOOPBACK = new Set(['127.0.0.1', '0.0.0.0', '::1', '::']);

export type Scheme = 'http' | 'https';

export type Config = z.infer<typeof configSchema> & {
  externalHost: string;
  /** Scheme of the server's URLs; a trusted proxy's X-Forwarded-Proto may override it per request unless EXTERNAL_URL is set. */
  externalScheme: Scheme;
  uploadsDir: string;
  supportEmail: string;
  /** Set when this process is a node of a cluster. */
  cluster: { natsUrl: string; nodeId: string } | null;
  mailFrom: string;
};

/** host-port, made a valid node id; a random one when the port is chosen at start (PORT=0). */
function defaultNodeId(port: number): string {
  if (port === 0) return `node-${randomBytes(6).toString('hex')}`;
  return `${os
    .hostname()
    .replace(/[^A-Za-z0-9_-]/g, '-')
    .slice(0, 40)}-${port}`;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = configSchema.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== '')));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new Error(`Invalid configuration: ${problems}`);
  }
  const c = parsed.data;
  if (c.EXTERNAL_URL && c.EXTERNAL_HOST) throw new Error('Invalid configuration: set EXTERNAL_URL or EXTERNAL_HOST, not both');
  if (c.LDAP_SERVER_URL && !c.LDAP_USER_SEARCH_BASE && !c.LDAP_USER_DN_TEMPLATE)
    throw new Error('Invalid configuration: LDAP_SERVER_URL needs LDAP_USER_SEARCH_BASE or LDAP_USER_DN_TEMPLATE');
  // An address is found in the directory by searching for it.
  if (c.LDAP_EMAIL_ATTR && !c.LDAP_USER_SEARCH_BASE) throw new Error('Invalid configuration: LDAP_EMAIL_ATTR needs LDAP_USER_SEARCH_BASE');
  if (c.CAMO_URI && !c.CAMO_KEY) throw new Error('Invalid configuration: CAMO_URI needs CAMO_KEY');
  const url = c.EXTERNAL_URL ? new URL(c.EXTERNAL_URL) : undefined;
  const externalHost = url?.host ?? c.EXTERNAL_HOST ?? `${LOOPBACK.has(c.HOST) ? 'localhost' : c.HOST}:${c.PORT}`;
  return {
    ...c,
    externalHost,
    externalScheme: url?.protocol === 'https:' ? 'https' : 'http',
    uploadsDir: c.UPLOADS_DIR ?? path.join(c.DATA_DIR, 'uploads'),
    supportEmail: c.ZULIP_ADMINISTRATOR ?? `admin@${new URL(`http://${externalHost}`).hostname}`,
    cluster:
      (c.CLUSTER ?? (c.NATS_URL ? 'nats' : 'off')) === 'nats'
        ? { natsUrl: c.NATS_URL ?? 'nats://127.0.0.1:4222', nodeId: c.NODE_ID ?? defaultNodeId(c.PORT) }
        : null,
    mailFrom: c.MAIL_FROM ?? `noreply@${externalHost.replace(/:\d+$/, '')}`,
  };
}
