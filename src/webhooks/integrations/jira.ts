// Jira (Zulip's jira integration): issues created, updated (reassigned, commented, a field or the
// status changed) and deleted, and the newer comment events, under the topic "KEY-1: summary".
// Jira's markup in comments becomes Markdown, and people Jira names are shown by their name here
// when a member matches. Events Zulip ignores (worklogs, sprints, links, ...) post nothing.
import { anomalousPayload, parsePayload, unsupportedEvent, type Integration, type WebhookDirectory } from '../integration.ts';

const IGNORED_EVENTS = new Set([
  'attachment_created',
  'issuelink_created',
  'issuelink_deleted',
  'jira:version_released',
  'jira:worklog_updated',
  'sprint_closed',
  'sprint_started',
  'worklog_created',
  'worklog_updated',
]);
const EVENTS = ['jira:issue_created', 'jira:issue_deleted', 'jira:issue_updated', 'comment_created', 'comment_updated', 'comment_deleted'];
const PUNCTUATION = new Set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');

// The payload as Jira documents it; only what the messages read.
interface Payload {
  webhookEvent?: string;
  issue_event_type_name?: string;
  user?: { displayName: string };
  issue?: {
    key: string;
    self: string;
    fields: { summary: string; priority?: { name: string } | null; assignee?: { displayName: string; emailAddress?: string } | null };
  };
  comment?: { self: string; body: string; author: { displayName: string } } | string;
  transition?: { from_status: string; to_status: string };
  changelog?: { items: { field: string | null; fromString: string | null; toString: string | null }[] };
}

type Comment = Exclude<Payload['comment'], string | undefined>;
const comment = (p: Payload) => p.comment as Comment;

/** Jira's wiki markup, made Markdown as far as Zulip goes. */
async function fromJiraMarkup(text: string, directory: WebhookDirectory): Promise<string> {
  let content = text
    .replace(/\*([^*]+)\*/g, '**$1**')
    .replace(/{{([^*]+?)}}/g, '`$1`')
    .replace(/bq\. (.*)/g, '> $1')
    .replace(/{quote}([\s\S]*?){quote}/g, '~~~ quote\n$1\n~~~')
    .replace(/{noformat}([\s\S]*?){noformat}/g, '~~~\n$1\n~~~')
    .replace(/{code[^\n]*}([\s\S]*?){code}/g, '~~~\n$1\n~~~')
    // Bare links ([url]) first, then titled ones ([title|url]).
    .replace(/\[([^|~]+?)\]/g, '[$1]($1)')
    .replace(/\[(?:([^|~]+)\|)([^\]]*)\]/g, '[$1]($2)');
  for (const [, username] of content.matchAll(/\[~(.*?)\]/g)) {
    content = content.replaceAll(`[~${username}]`, `**${(await directory.nameByGuess(username!)) ?? username}**`);
  }
  return content;
}

const issueKey = (p: Payload) => p.issue?.key ?? comment(p).self.split('/').at(-3)!;
// Old Jira sends comment events without their issue.
const issueTitle = (p: Payload) => (p.issue ? p.issue.fields.summary : 'Upgrade Jira to get the issue title here.');

/** "[KEY-1: title](https://jira.example.com/browse/KEY-1)", the page guessed from the issue's REST URL. */
function issueLink(p: Payload): string {
  const text = `${issueKey(p)}: ${issueTitle(p)}`;
  const base = /(.*)\/rest\/api\/.*/.exec(p.issue?.self ?? '');
  return base ? `[${text}](${base[1]}/browse/${issueKey(p)})` : text;
}

async function updatedBody(p: Payload, directory: WebhookDirectory): Promise<string> {
  const email = p.issue?.fields.assignee?.emailAddress ?? '';
  const assignee = email ? `**${(await directory.nameByEmail(email)) ?? email}**` : '';
  const assigned = assignee ? ` (assigned to ${assignee})` : '';
  const author = p.user?.displayName ?? '';
  let sub = p.issue_event_type_name ?? '';
  if (sub === '') sub = p.comment ? 'issue_commented' : p.transition ? 'issue_transited' : '';
  if (sub.includes('comment')) {
    const verb = sub === 'issue_commented' ? 'commented on' : sub === 'issue_comment_edited' ? 'edited a comment on' : 'deleted a comment from';
    const who = p.webhookEvent === 'comment_created' ? comment(p).author.displayName : author;
    const body = typeof p.comment === 'object' ? p.comment.body : '';
    const text = `${who} ${verb} ${issueLink(p)}${assigned}`;
    return body ? `${text}:\n\n\`\`\` quote\n${await fromJiraMarkup(body, directory)}\n\`\`\`` : `${text}.`;
  }
  let content = `${author} updated ${issueLink(p)}${assigned}:\n\n`;
  const change = (field: string | null, from: string | null, to: string) => `* Changed ${field}${from ? ` from **${from}**` : ''} to ${to}\n`;
  if (p.changelog) {
    for (const item of p.changelog.items)
      content += change(item.field, item.fromString, item.field === 'assignee' && assignee ? assignee : `**${item.toString}**`);
  } else if (sub === 'issue_transited') {
    content += change('status', p.transition!.from_status, `**${p.transition!.to_status}**`);
  }
  return content;
}

/** Comment events of newer Jira: "who verb on [issue]" and the comment quoted (struck through when deleted). */
function commentEventBody(p: Payload, verb: string, strike: boolean): string {
  const c = comment(p);
  const text = c.body.replace(/\\!/g, '!');
  return `${c.author.displayName} ${verb} ${issueLink(p)}\n\`\`\` quote\n${strike ? `~~${text}~~` : text}\n\`\`\``;
}

export const jira: Integration = {
  name: 'jira',
  displayName: 'Jira',
  client: 'Jira',
  allEventTypes: EVENTS,
  setup: 'In Jira, Settings → System → WebHooks → Create a WebHook: paste the URL and tick the issue and comment events.',
  async message(request, _query, directory) {
    const p = parsePayload(request.body) as Payload;
    const event = p.webhookEvent ?? (p.transition ? 'jira:issue_updated' : undefined);
    if (event === undefined) throw anomalousPayload('Jira');
    if (IGNORED_EVENTS.has(event)) return null;
    if (!EVENTS.includes(event)) throw unsupportedEvent('Jira', event);
    const topic = `${issueKey(p)}: ${issueTitle(p)}`;
    let content: string;
    switch (event) {
      case 'jira:issue_created':
        content = `${p.user!.displayName} created ${issueLink(p)}:\n\n* **Priority**: ${p.issue!.fields.priority?.name ?? ''}\n* **Assignee**: ${p.issue!.fields.assignee?.displayName ?? 'no one'}`;
        break;
      case 'jira:issue_deleted':
        content = `${p.user!.displayName} deleted ${issueLink(p)}${PUNCTUATION.has(issueTitle(p).at(-1) ?? '') ? '' : '.'}`;
        break;
      case 'jira:issue_updated':
        content = await updatedBody(p, directory);
        break;
      case 'comment_created':
        content = commentEventBody(p, 'commented on', false);
        break;
      case 'comment_updated':
        content = commentEventBody(p, 'updated their comment on', false);
        break;
      default:
        content = commentEventBody(p, 'deleted their comment on', true);
    }
    return { topic, content, event };
  },
};
