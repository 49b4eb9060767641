// Slack's incoming-webhook format (Zulip's slack_incoming), for tools that speak only Slack: the
// payload as a JSON body or a form field `payload`; its text with Slack's links and emphasis
// turned into Markdown; the topic from the URL, else the payload's channel, else "(no topic)".
// Blocks and attachments are not rendered yet: a payload of only those posts nothing.
import { badRequest } from '../../errors.ts';
import { parsePayload, type Integration } from '../integration.ts';

const NOT_WORD = String.raw`[^\p{L}\p{N}_]`;
const SLACK_LINK = /<(\w+?:\/\/.*?)\|(.*?)>/gu;
const SLACK_BOLD = new RegExp(String.raw`(${NOT_WORD}|^)\*(?!\s+)([^*\n]+)(?<!\s)\*((?=${NOT_WORD})|$)`, 'gu');
const SLACK_ITALIC = new RegExp(String.raw`(${NOT_WORD}|^)_(?!\s+)([^_\n]+)(?<!\s)_((?=${NOT_WORD})|$)`, 'gu');

/** Slack's `*bold*` and `_italic_` in Zulip's Markdown, and `<url|text>` links. */
export function slackToMarkdown(text: string): string {
  return text.replace(SLACK_LINK, '[$2]($1)').trim().replace(SLACK_BOLD, '$1**$2**$3').replace(SLACK_ITALIC, '$1*$2*$3');
}

export const slackIncoming: Integration = {
  name: 'slack_incoming',
  displayName: 'Slack-compatible webhook',
  client: 'SlackIncoming',
  setup: 'Wherever a tool asks for a Slack incoming-webhook URL, paste this one instead.',
  answer: { ok: true },
  message(request) {
    let payload: unknown;
    if (request.contentType === 'application/json') payload = parsePayload(request.body);
    else {
      const form = new URLSearchParams(request.body.toString('utf8'));
      const field = form.get('payload');
      if (field === null) throw badRequest("Missing 'payload' argument");
      payload = parsePayload(Buffer.from(field));
    }
    const p = payload as { channel?: unknown; text?: unknown; icon_emoji?: unknown };
    const topic = typeof p.channel === 'string' ? p.channel.replace(/^[@#]/, '') : '(no topic)';
    const text = typeof p.text === 'string' ? `${typeof p.icon_emoji === 'string' ? `${p.icon_emoji} ` : ''}${p.text}`.trim() : '';
    return text ? { topic, content: slackToMarkdown(text) } : null;
  },
};
