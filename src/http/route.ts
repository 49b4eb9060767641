// What an endpoint declares: method, path, who may call it, its parameters, and a handler that
// returns the data of a success response (or a RawResponse for files).
import type { User } from '../db/generated/client.ts';
import type { App } from '../app.ts';
import type { Config } from '../config.ts';
import type { RealmInfo } from '../queries/realms.ts';
import type { Fields, ParamsOf } from './params.ts';

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface UploadedFile {
  field: string;
  filename: string;
  /** As the client sent it; empty when the part had no Content-Type. */
  contentType: string;
  data: Buffer;
}

export interface RequestContext<F extends Fields, U> {
  app: App;
  realm: RealmInfo;
  user: U;
  params: ParamsOf<F>;
  /** Path segments named in the route's path (`:user_id` → path.user_id; a final `/*` → path['*']). */
  path: Record<string, string>;
  files: UploadedFile[];
  ip: string;
  headers: { userAgent: string };
  /** Called if the client goes away before the response; long-polls use it to detach. */
  onAbort(callback: () => void): void;
  /**
   * Answers now, before the handler's promise settles (which is then ignored): a fan-out
   * completes thousands of parked polls in one pass without a promise hop each.
   */
  answer(result: HandlerResult): void;
}

/** A non-JSON answer, such as a file download. */
export class RawResponse {
  constructor(
    readonly status: number,
    readonly headers: Record<string, string>,
    readonly body: Buffer | string,
  ) {}
}

/**
 * Success fields already serialized (`"events":[...],"queue_id":"..."`), for hot responses whose
 * parts were encoded once and shared, such as a fan-out's events.
 */
export class JsonFields {
  constructor(readonly json: string) {}
}

export type HandlerResult = Record<string, unknown> | RawResponse | JsonFields;

interface RouteBase<F extends Fields> {
  method: Method;
  path: string;
  params: F;
  /** Largest accepted request body in bytes, from the settings; defaults to MAX_BODY_BYTES. */
  maxBody?: (config: Config) => number;
  /** Skip the per-user/per-IP rate limits (file downloads, as Zulip does). */
  noRateLimit?: boolean;
  /** Also decode parameters from the query string (GET always does). */
  summary?: string;
}

export type Route =
  | (RouteBase<Fields> & { auth: 'user'; handler(ctx: RequestContext<Fields, User>): Promise<HandlerResult> })
  | (RouteBase<Fields> & { auth: 'optional'; handler(ctx: RequestContext<Fields, User | null>): Promise<HandlerResult> })
  | (RouteBase<Fields> & { auth: 'none'; handler(ctx: RequestContext<Fields, null>): Promise<HandlerResult> });

export function userRoute<F extends Fields>(r: RouteBase<F> & { handler(ctx: RequestContext<F, User>): Promise<HandlerResult> }): Route {
  return { ...r, auth: 'user' } as unknown as Route;
}

export function optionalUserRoute<F extends Fields>(
  r: RouteBase<F> & { handler(ctx: RequestContext<F, User | null>): Promise<HandlerResult> },
): Route {
  return { ...r, auth: 'optional' } as unknown as Route;
}

export function publicRoute<F extends Fields>(r: RouteBase<F> & { handler(ctx: RequestContext<F, null>): Promise<HandlerResult> }): Route {
  return { ...r, auth: 'none' } as unknown as Route;
}
