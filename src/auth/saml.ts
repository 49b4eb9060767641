// SAML 2.0 single sign-on (Zulip's SAMLAuthBackend, with any number of identity providers) through
// @node-saml/node-saml: an AuthnRequest by the HTTP-Redirect binding, and the IdP's Response posted
// back to the organization's /complete/saml/. The library checks the signature (of the Response or
// of the assertion) against the IdP's certificate, the audience, the validity window and that the
// answer is to our request; here the issuer is matched to a configured IdP, each assertion is
// accepted once, and the address taken from the attribute the IdP is configured to vouch with.
// The browser's POST comes from the IdP's site, so no SameSite cookie rides with it: what the
// start of the login must remember is stored under a random RelayState (as Zulip keeps it in
// redis), taken back, once, when the answer arrives.
import { randomBytes } from 'node:crypto';
import { generateServiceProviderMetadata, SAML, ValidateInResponseTo, type Profile } from '@node-saml/node-saml';
import type { Config, SamlIdp } from '../config.ts';
import type { PrismaClient } from '../db/generated/client.ts';
import { LoginRefusal } from '../errors.ts';
import type { RealmInfo } from '../queries/realms.ts';
import type { AppFlow } from './app-flows.ts';
import { errorText } from '../log.ts';

/** What SAML login needs of the server (App has it): its settings, addresses and database. */
interface SamlServices {
  config: Pick<Config, 'SAML_IDPS' | 'SAML_SP_ENTITY_ID' | 'externalScheme'>;
  realms: { externalHost: string; url(realm: RealmInfo): string };
  prisma: PrismaClient;
}

/** How long a started login may take at the IdP, and how old an assertion may be when it arrives. */
const FLOW_SECONDS = 600;
/** Clocks of the IdP and of this server may differ by this much. */
const CLOCK_SKEW_MS = 60_000;

/** What the start of a login hands to its end. */
export interface SamlFlow extends AppFlow {
  idp: SamlIdp;
  next: string;
}

/** What the IdP vouched for. */
export interface SamlIdentity {
  email: string;
  fullName: string;
}

/** The IdPs an organization may use (Zulip's limit_to_subdomains). */
export const idpsFor = (app: { config: Pick<Config, 'SAML_IDPS'> }, realm: RealmInfo): SamlIdp[] =>
  app.config.SAML_IDPS.filter((idp) => !idp.limit_to_subdomains || idp.limit_to_subdomains.includes(realm.subdomain));

/** This server's entity ID, the audience its assertions must name. */
const spEntityId = (app: SamlServices): string => app.config.SAML_SP_ENTITY_ID ?? `${app.config.externalScheme}://${app.realms.externalHost}`;

/** The assertion consumer service: each organization's own address, where its session cookie belongs. */
const acsUrl = (app: SamlServices, realm: RealmInfo): string => `${app.realms.url(realm)}/complete/saml/`;

function samlClient(app: SamlServices, realm: RealmInfo, idp: SamlIdp, extra: Partial<ConstructorParameters<typeof SAML>[0]> = {}): SAML {
  return new SAML({
    entryPoint: idp.url,
    issuer: spEntityId(app),
    audience: spEntityId(app),
    callbackUrl: acsUrl(app, realm),
    idpCert: idp.x509cert,
    // A signature over the whole Response covers its assertion: either one will do, none won't.
    wantAssertionsSigned: false,
    wantAuthnResponseSigned: false,
    acceptedClockSkewMs: CLOCK_SKEW_MS,
    maxAssertionAgeMs: FLOW_SECONDS * 1000,
    // Whatever way the IdP authenticates (passwords, keys, Kerberos) is its business.
    disableRequestedAuthnContext: true,
    ...extra,
  });
}

/** The SP metadata an IdP is set up from (Zulip's /saml/metadata.xml). */
export const spMetadata = (app: SamlServices, realm: RealmInfo): string =>
  generateServiceProviderMetadata({ issuer: spEntityId(app), callbackUrl: acsUrl(app, realm), wantAssertionsSigned: false });

/** The IdP's URL for a new login, the flow stored under the RelayState it carries. */
export async function startSamlLogin(app: SamlServices, realm: RealmInfo, idp: SamlIdp, flow: Omit<SamlFlow, 'idp'>): Promise<string> {
  // An XML ID must not start with a digit.
  const requestId = `_${randomBytes(20).toString('hex')}`;
  const relayState = randomBytes(24).toString('base64url');
  const now = new Date();
  await app.prisma.samlLoginRequest.deleteMany({ where: { expiresAt: { lte: now } } });
  await app.prisma.samlLoginRequest.create({
    data: {
      relayState,
      requestId,
      realmId: realm.id,
      idp: idp.name,
      mobileOtp: flow.mobileOtp ?? null,
      desktopOtp: flow.desktopOtp ?? null,
      next: flow.next,
      expiresAt: new Date(now.getTime() + FLOW_SECONDS * 1000),
    },
  });
  return samlClient(app, realm, idp, { generateUniqueId: () => requestId }).getAuthorizeUrlAsync(relayState, undefined, {});
}

/** The IdP whose entity ID the Response names as its issuer: a hint to pick the certificate, proven only by the signature. */
function claimedIssuer(samlResponse: string): string | null {
  const xml = Buffer.from(samlResponse, 'base64').toString('utf8');
  return /<(?:[A-Za-z_][\w.-]*:)?Issuer\b[^>]*>\s*([^<]+?)\s*<\//.exec(xml)?.[1] ?? null;
}

const REFUSED = 'The identity provider’s answer could not be verified.';

/**
 * The identity proven by the Response posted to this organization's ACS, and the login it ends.
 * The stored flow is taken whatever happens, so an answer is only ever tried once.
 */
export async function finishSamlLogin(
  app: SamlServices,
  realm: RealmInfo,
  samlResponse: string,
  relayState: string,
  log: (reason: string) => void,
): Promise<{ identity: SamlIdentity; flow: SamlFlow }> {
  const [stored] = await app.prisma.$queryRaw<
    { requestId: string; realmId: number; idp: string; mobileOtp: string | null; desktopOtp: string | null; next: string; expiresAt: Date }[]
  >`
    DELETE FROM "SamlLoginRequest" WHERE "relayState" = ${relayState} RETURNING "requestId", "realmId", "idp", "mobileOtp", "desktopOtp", "next", "expiresAt"`;
  if (!stored || stored.realmId !== realm.id || stored.expiresAt.getTime() <= Date.now()) {
    throw new LoginRefusal('This login was not started here, or took too long. Start again from the login page.');
  }
  const issuer = claimedIssuer(samlResponse);
  const idp = idpsFor(app, realm).find((i) => i.entity_id === issuer);
  if (!idp) throw new LoginRefusal('The answer comes from an identity provider this organization does not use.');
  if (idp.name !== stored.idp) throw new LoginRefusal('The answer comes from another identity provider than the one the login was started with.');
  // The answer must be to this login's request, in the Response and in its assertion's subject.
  const startedAt = new Date(stored.expiresAt.getTime() - FLOW_SECONDS * 1000).toISOString();
  const client = samlClient(app, realm, idp, {
    validateInResponseTo: ValidateInResponseTo.always,
    requestIdExpirationPeriodMs: FLOW_SECONDS * 1000,
    cacheProvider: {
      getAsync: async (key) => (key === stored.requestId ? startedAt : null),
      saveAsync: async () => null,
      removeAsync: async () => null,
    },
  });
  let profile: Profile | null;
  try {
    ({ profile } = await client.validatePostResponseAsync({ SAMLResponse: samlResponse }));
  } catch (err) {
    log(errorText(err));
    throw new LoginRefusal(REFUSED);
  }
  if (!profile || profile.issuer !== idp.entity_id) {
    log(`the signed assertion's issuer is ${profile?.issuer}`);
    throw new LoginRefusal(REFUSED);
  }
  await spendAssertion(app, idp, profile);
  const flow: SamlFlow = {
    idp,
    next: stored.next,
    ...(stored.mobileOtp ? { mobileOtp: stored.mobileOtp } : {}),
    ...(stored.desktopOtp ? { desktopOtp: stored.desktopOtp } : {}),
  };
  return { identity: identityOf(idp, profile), flow };
}

/** Records the assertion as used until it expires; refuses one already used. */
async function spendAssertion(app: SamlServices, idp: SamlIdp, profile: Profile): Promise<void> {
  const assertion = (
    profile.getAssertion?.() as { Assertion?: { $?: { ID?: string; IssueInstant?: string }; Conditions?: { $?: { NotOnOrAfter?: string } }[] } } | undefined
  )?.Assertion;
  const id = assertion?.$?.ID;
  if (!id) throw new LoginRefusal(REFUSED);
  // The library accepted it only up to FLOW_SECONDS after its issue and before NotOnOrAfter (give or take the skew).
  const until = Math.min(Date.parse(assertion.Conditions?.[0]?.$?.NotOnOrAfter ?? ''), Date.parse(assertion.$?.IssueInstant ?? '') + FLOW_SECONDS * 1000);
  const expiresAt = new Date((Number.isFinite(until) ? until : Date.now() + FLOW_SECONDS * 1000) + CLOCK_SKEW_MS);
  await app.prisma.samlUsedAssertion.deleteMany({ where: { expiresAt: { lte: new Date() } } });
  const inserted = await app.prisma.$executeRaw`
    INSERT INTO "SamlUsedAssertion" ("issuer", "assertionId", "expiresAt") VALUES (${idp.entity_id}, ${id}, ${expiresAt}) ON CONFLICT DO NOTHING`;
  if (inserted === 0) throw new LoginRefusal('This answer of the identity provider was already used. Start again from the login page.');
}

/** The first value of an attribute, if it is text. */
function attribute(profile: Profile, name: string): string {
  const value = (profile.attributes as Record<string, unknown> | undefined)?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first.trim() : '';
}

function identityOf(idp: SamlIdp, profile: Profile): SamlIdentity {
  const email = attribute(profile, idp.attr_email);
  if (!email) throw new LoginRefusal('The identity provider did not give an email address.');
  const full = idp.attr_full_name ? attribute(profile, idp.attr_full_name) : '';
  const fullName = full || [attribute(profile, idp.attr_first_name), attribute(profile, idp.attr_last_name)].filter(Boolean).join(' ');
  return { email, fullName };
}

/** The organization's IdPs as server_settings lists them (Zulip's external_authentication_methods entries). */
export function samlMethods(app: { config: Pick<Config, 'SAML_IDPS'> }, realm: RealmInfo) {
  return idpsFor(app, realm).map((idp) => ({
    name: `saml:${idp.name}`,
    display_name: idp.display_name,
    display_icon: idp.display_icon,
    login_url: `/accounts/login/social/saml/${idp.name}`,
    signup_url: `/accounts/register/social/saml/${idp.name}`,
  }));
}
