// Slack's incoming-webhook format (Zulip's slack_incoming), for tools that speak only Slack: the
// payload as a JSON body or a form field `payload`; its blocks and attachments rendered as Zulip
// renders them (else its text), with Slack's links and emphasis turned into Markdown; the topic
// from the URL, else the payload's channel, else "(no topic)".
import { badRequest } from '../../errors.ts';
import { globalTime, parsePayload, type Integration } from '../integration.ts';

interface TextObject {
  type: string;
  text: string;
}
interface Element {
  type: string;
  image_url?: string;
  alt_text?: string;
  text?: string;
}
interface Block {
  type: string;
  text?: TextObject;
  accessory?: Element;
  fields?: TextObject[];
  elements?: Element[];
  image_url?: string;
  alt_text?: string;
  title?: TextObject;
}
interface Attachment {
  title?: string | null;
  title_link?: string | null;
  pretext?: string | null;
  text?: string | null;
  fields?: { title?: string | null; value?: string | null }[];
  blocks?: Block[] | null;
  image_url?: string | null;
  footer?: string | null;
  ts?: number | string | null;
}

/** Pieces one below the other, blank ones left out. */
const stack = (pieces: string[]) =>
  pieces
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .join('\n\n');

// Zulip shows only images of the interactive elements.
const renderElement = (e: Element) => (e.type === 'image' ? `[${e.alt_text}](${e.image_url})` : '');

/** Two columns of fields as a table without a header (cells cannot hold newlines or pipes). */
function fieldsTable(fields: TextObject[]): string {
  const cells = fields.map((f) => f.text.replace(/\n/g, ' ').replace(/\|/g, ' '));
  let table = '| | |\n|-|-|\n';
  for (let i = 0; i < cells.length; i += 2) table += `| ${cells[i]} | ${cells[i + 1] ?? ''} |\n`;
  return table;
}

/** A Block Kit block (https://api.slack.com/reference/block-kit/blocks), as far as Zulip shows it. */
function renderBlock(block: Block): string {
  switch (block.type) {
    case 'context':
      return stack((block.elements ?? []).map((e) => (e.type === 'image' ? renderElement(e) : (e.text ?? ''))));
    case 'divider':
      return '----';
    case 'header':
      return `## ${block.text!.text}`;
    case 'image':
      return `[${block.title ? block.title.text : block.alt_text}](${block.image_url})`;
    case 'section': {
      const pieces: string[] = [];
      if (block.text) pieces.push(block.text.text);
      if (block.accessory) pieces.push(renderElement(block.accessory));
      if (block.fields) pieces.push(block.fields.length === 1 ? block.fields[0]!.text : fieldsTable(block.fields));
      return stack(pieces);
    }
    default:
      // actions (buttons), inputs, rich_text (the same as `text`), files, calls, tables.
      return '';
  }
}

/** A legacy attachment (https://api.slack.com/reference/messaging/attachments), its null fields left out. */
function renderAttachment(a: Attachment): string {
  const pieces: string[] = [];
  if (a.title) pieces.push(a.title_link ? `## [${a.title}](${a.title_link})` : `## ${a.title}`);
  if (a.pretext) pieces.push(a.pretext);
  if (a.text) pieces.push(a.text);
  if (a.fields) {
    const lines = a.fields.map((f) => (f.title && f.value ? `*${f.title}*: ${f.value}` : f.title ? `*${f.title}*` : (f.value ?? ''))).filter((l) => l !== '');
    pieces.push(lines.join('\n'));
  }
  if (a.blocks) pieces.push(...a.blocks.map(renderBlock));
  if (a.image_url) pieces.push(`[](${a.image_url})`);
  if (a.footer) pieces.push(a.footer);
  if (a.ts) pieces.push(globalTime(new Date(Math.trunc(Number(a.ts)) * 1000).toISOString()));
  return stack(pieces);
}

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
    const p = payload as { channel?: unknown; text?: unknown; icon_emoji?: unknown; blocks?: Block[] | null; attachments?: Attachment[] | null };
    const topic = typeof p.channel === 'string' ? p.channel.replace(/^[@#]/, '') : '(no topic)';
    let body = stack([...(p.blocks ?? []).map(renderBlock), ...(p.attachments ?? []).map(renderAttachment)]);
    if (body === '' && typeof p.text === 'string') body = `${typeof p.icon_emoji === 'string' ? `${p.icon_emoji} ` : ''}${p.text}`.trim();
    return body ? { topic, content: slackToMarkdown(body) } : null;
  },
};
