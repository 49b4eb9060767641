// Browser logins (Zulip's Django sessions): a random id in an HttpOnly cookie (`sessionid`), of
// which the WebSession table keeps only the SHA-256, and Zulip's CSRF defence for what that cookie
// authenticates: a `csrftoken` cookie the page's script reads and repeats in `X-CSRFToken` (or a
// form's `csrfmiddlewaretoken`), which another site can neither read nor set.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { PrismaClient, User } from '../db/generated/client.ts';
import { ApiError } from '../errors.ts';

export const SESSION_COOKIE = 'sessionid';
export const CSRF_COOKIE = 'csrftoken';
/** Zulip's SESSION_COOKIE_AGE: two weeks. */
export const SESSION_SECONDS = 14 * 86400;
/** A CSRF cookie outlives any session it protects (Django's CSRF_COOKIE_AGE is a year). */
const CSRF_SECONDS = 365 * 86400;
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

const hashOf = (id: string) => createHash('sha256').update(id).digest('hex');
/** 32 random bytes, base64url: what both cookies hold. */
export const newSecret = () => randomBytes(32).toString('base64url');

/** The cookies of a `Cookie` header by name (the first of a name wins, as browsers send the most specific first). */
export function parseCookies(header: string): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (name && !cookies.has(name)) cookies.set(name, part.slice(eq + 1).trim());
  }
  return cookies;
}

interface CookieOptions {
  secure: boolean;
  maxAge: number;
  httpOnly: boolean;
}

function cookie(name: string, value: string, o: CookieOptions): string {
  return `${name}=${value}; Path=/; Max-Age=${o.maxAge}; SameSite=Lax${o.httpOnly ? '; HttpOnly' : ''}${o.secure ? '; Secure' : ''}`;
}

export const sessionCookie = (id: string, secure: boolean) => cookie(SESSION_COOKIE, id, { secure, maxAge: SESSION_SECONDS, httpOnly: true });
export const csrfCookie = (token: string, secure: boolean) => cookie(CSRF_COOKIE, token, { secure, maxAge: CSRF_SECONDS, httpOnly: false });
export const expiredSessionCookie = (secure: boolean) => cookie(SESSION_COOKIE, '', { secure, maxAge: 0, httpOnly: true });

/** Starts a session for the user (clearing the user's expired ones); the id goes into the cookie and nowhere else. */
export async function createSession(prisma: PrismaClient, userId: number): Promise<string> {
  const id = newSecret();
  await prisma.webSession.deleteMany({ where: { userId, expiresAt: { lte: new Date() } } });
  await prisma.webSession.create({ data: { idHash: hashOf(id), userId, expiresAt: new Date(Date.now() + SESSION_SECONDS * 1000) } });
  return id;
}

/** The active user of a session cookie in this organization, or null (unknown, expired, another organization's, deactivated). */
export async function sessionUser(prisma: PrismaClient, realmId: number, id: string): Promise<User | null> {
  if (!SECRET_PATTERN.test(id)) return null;
  const session = await prisma.webSession.findUnique({ where: { idHash: hashOf(id) } });
  if (!session || session.expiresAt.getTime() <= Date.now()) return null;
  const user = await prisma.user.findUnique({ where: { id: session.userId } });
  return user && user.realmId === realmId && user.isActive && !user.isBot ? user : null;
}

export async function endSession(prisma: PrismaClient, id: string): Promise<void> {
  await prisma.webSession.deleteMany({ where: { idHash: hashOf(id) } });
}

/** After a password change: every session of the user but the one that made the change (if any). */
export async function endOtherSessions(prisma: PrismaClient, userId: number, keep: string | null): Promise<void> {
  await prisma.webSession.deleteMany({ where: { userId, ...(keep ? { NOT: { idHash: hashOf(keep) } } : {}) } });
}

const csrfFailed = (reason: string) => new ApiError(`CSRF error: ${reason}`, 'CSRF_FAILED', 403, { reason });

/** Django's check, with its reasons: the token sent must equal the cookie's. */
export function checkCsrf(cookieToken: string | undefined, sent: string | undefined): void {
  if (!cookieToken) throw csrfFailed('CSRF cookie not set.');
  if (!sent) throw csrfFailed('CSRF token missing.');
  const a = Buffer.from(cookieToken);
  const b = Buffer.from(sent);
  if (a.length !== b.length || !timingSafeEqual(a, b)) throw csrfFailed('CSRF token incorrect.');
}

/** One-time login tokens for the desktop app: 32 alphanumeric characters, like an API key. */
export async function createLoginToken(prisma: PrismaClient, userId: number, token: string, seconds: number): Promise<void> {
  await prisma.loginToken.deleteMany({ where: { expiresAt: { lte: new Date() } } });
  await prisma.loginToken.create({ data: { tokenHash: hashOf(token), userId, expiresAt: new Date(Date.now() + seconds * 1000) } });
}

/** The user id of a login token, which is used up by asking; null when unknown or expired. */
export async function consumeLoginToken(prisma: PrismaClient, token: string): Promise<number | null> {
  // One statement, so two requests with the same token cannot both find it.
  const rows = await prisma.$queryRaw<
    { userId: number; expiresAt: Date }[]
  >`DELETE FROM "LoginToken" WHERE "tokenHash" = ${hashOf(token)} RETURNING "userId", "expiresAt"`;
  const row = rows[0];
  return row && row.expiresAt.getTime() > Date.now() ? row.userId : null;
}
