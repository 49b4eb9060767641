// Zapier and IFTTT (Zulip's zapier and ifttt integrations): the service sends the message itself,
// a JSON object with `topic` (or the older `subject`) and `content`. Zapier's Zulip app first
// checks its key with `{"type": "auth"}`, answered with the bot's name, email and id.
import { badRequest } from '../../errors.ts';
import { parsePayload, type Integration, type WebhookRequest } from '../integration.ts';

const isAuth = (request: WebhookRequest) => parsePayload(request.body).type === 'auth';

function topicAndContent(request: WebhookRequest) {
  const p = parsePayload(request.body);
  const text = (key: string) => {
    const value = p[key];
    if (value !== undefined && value !== null && typeof value !== 'string') throw badRequest('Malformed payload');
    return value ?? undefined;
  };
  const topic = text('topic') ?? text('subject');
  const content = text('content');
  if (topic === undefined) throw badRequest("Topic can't be empty");
  if (content === undefined) throw badRequest("Content can't be empty");
  return { topic, content };
}

export const zapier: Integration = {
  name: 'zapier',
  displayName: 'Zapier',
  client: 'Zapier',
  setup: 'In a Zap, add the action "Zulip" (or "Webhooks by Zapier", POST, JSON) with the URL and the fields `topic` and `content`.',
  message: (request) => (isAuth(request) ? null : topicAndContent(request)),
  answer: (request, sender) => (isAuth(request) ? { full_name: sender.fullName, email: sender.email, id: sender.id } : {}),
};

export const ifttt: Integration = {
  name: 'ifttt',
  displayName: 'IFTTT',
  client: 'IFTTT',
  setup: 'In an applet, use the "Webhooks" action: method POST, content type `application/json`, the URL, and a body `{"topic": "...", "content": "..."}`.',
  message: topicAndContent,
};
