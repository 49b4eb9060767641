// Queues live on the node that made them, and a queue's id starts with that node's id
// (`node:uuid`). A GET or DELETE /events that reaches another node (a load balancer needs no
// stickiness) goes to the owner as a NATS request, authenticated here already: the owner answers
// as if the client had come to it. A queue whose node is gone (killed, or stopped) is taken over
// by a live node (NodeGone goes up to the placement: queue-takeover.ts). A node merely slow (still held by NATS, cluster/node.ts) is not
// gone: a poll waits on for it, and one it does not answer in time is answered with no events. A poll the network lost on the way is answered with no events:
// the client polls again with the same last_event_id, so it misses nothing.
import type { App } from '../app.ts';
import { ApiError } from '../errors.ts';
import { JsonFields } from '../http/route.ts';
import type { Log } from '../log.ts';
import { ConnectionLost, NodeGone, NodeUnreachable } from '../cluster/node-errors.ts';

export interface PollCall {
  queueId: string;
  userId: number;
  lastEventId: number;
  dontBlock: boolean;
}

export interface DeleteCall {
  queueId: string;
  userId: number;
}

export type Reply = { fields?: string; error?: { msg: string; code: string; status: number; extra: Record<string, unknown> } };

export function errorReply(err: unknown): Reply {
  if (!(err instanceof ApiError)) throw err;
  return { error: { msg: err.message, code: err.code, status: err.status, extra: err.extra } };
}

/** A queue whose node is slow or out of reach now (not gone: cluster/node.ts): the client asks again. */
export const queueUnreachable = (): ApiError => new ApiError('The event queue cannot be reached now; try again', 'BAD_REQUEST', 503);

export function fromReply(reply: Reply): void {
  if (reply.error) throw new ApiError(reply.error.msg, reply.error.code, reply.error.status, reply.error.extra);
}

/** How long a passed-on poll may take: the owner answers parked polls with a heartbeat before this. */
function pollTimeout(app: App, dontBlock: boolean): number {
  return dontBlock ? 10_000 : (app.config.HEARTBEAT_SECONDS + app.config.HEARTBEAT_JITTER_SECONDS + 10) * 1000;
}

/**
 * Passes a poll on to the queue's node. When this node loses NATS meanwhile (the answer with it),
 * the poll is passed on again as soon as NATS is back, within the time the client waits anyway.
 */
export async function proxyPoll(app: App, owner: string, call: PollCall, log: Log): Promise<JsonFields> {
  const cluster = app.cluster!;
  const deadline = Date.now() + pollTimeout(app, call.dontBlock);
  let reply: Reply | undefined;
  while (!reply) {
    try {
      reply = await cluster.call<Reply>(owner, 'poll', call, Math.max(1, deadline - Date.now()));
    } catch (err) {
      if (err instanceof NodeGone) throw err;
      if (err instanceof ConnectionLost && (await cluster.whenConnected(deadline - Date.now())) && Date.now() < deadline) continue;
      log.warn('a passed-on poll got no answer; the client polls again', { owner, error: String(err) });
      return new JsonFields(`"events":[],"queue_id":${JSON.stringify(call.queueId)}`);
    }
  }
  fromReply(reply);
  return new JsonFields(reply.fields!);
}

export async function proxyDelete(app: App, owner: string, call: DeleteCall): Promise<void> {
  try {
    fromReply(await app.cluster!.call<Reply>(owner, 'delete', call, 10_000));
  } catch (err) {
    if (err instanceof NodeUnreachable) throw queueUnreachable();
    throw err;
  }
}

/** What the owner does with its own queues (placement.ts): the same as for a request that reached it directly. */
export interface OwnQueues {
  poll(call: PollCall): JsonFields | Promise<JsonFields>;
  delete(call: DeleteCall): Promise<void>;
}

/** The owner's side: answers the polls and deletions other nodes pass on. */
export function serveQueues(app: App, own: OwnQueues): void {
  const cluster = app.cluster!;
  cluster.serve('poll', async (data): Promise<Reply> => {
    try {
      return { fields: (await own.poll(data as PollCall)).json };
    } catch (err) {
      return errorReply(err);
    }
  });
  cluster.serve('delete', async (data): Promise<Reply> => {
    try {
      await own.delete(data as DeleteCall);
    } catch (err) {
      return errorReply(err);
    }
    return {};
  });
}
