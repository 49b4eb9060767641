// GitHub (Zulip's github integration): the event from the X-GitHub-Event header, refined by the
// payload's action; pushes of commits and tags, pull requests, issues and their comments, and
// the ping GitHub sends when the webhook is set up. Events Zulip ignores post nothing; others it
// does not know are answered as Zulip does (UNSUPPORTED_WEBHOOK_EVENT_TYPE, with status 200).
import { branchNotifiable, branchTopic, itemMessage, itemTopic, pushMessage, tagMessage, type Commit } from '../git.ts';
import { missingEventHeader, parsePayload, unsupportedEvent, type Integration } from '../integration.ts';

// The payload as GitHub documents it; only what the messages read.
interface Payload {
  action?: string;
  sender: { login: string };
  repository?: { name: string };
  organization?: { login: string };
  ref?: string;
  compare?: string;
  created?: boolean;
  deleted?: boolean;
  forced?: boolean;
  commits?: { id: string; url: string; message: string; author: { name: string; username?: string } }[];
  pull_request?: {
    number: number;
    title: string;
    html_url: string;
    body: string | null;
    merged?: boolean;
    head: { label: string };
    base: { label: string };
    assignee?: { login: string } | null;
  };
  issue?: { number: number; title: string; html_url: string; body: string | null; pull_request?: unknown };
  assignee?: { login: string };
  comment?: { html_url: string; body: string };
  changes?: Record<string, unknown>;
}

const IGNORED_EVENTS = new Set(['check_suite', 'label', 'meta', 'milestone', 'organization', 'project_card', 'repository_vulnerability_alert']);
const IGNORED_PR_ACTIONS = new Set(['approved', 'converted_to_draft', 'labeled', 'review_request_removed', 'unlabeled']);

const repo = (p: Payload) => p.repository?.name ?? '';
const branchOf = (ref: string) => ref.replace(/^refs\/heads\//, '');

/** Zulip's event name for the header's event and the payload, or null for one it ignores. */
function eventOf(header: string, p: Payload, branches: string | null): string | null {
  switch (header) {
    case 'pull_request':
      if (p.action === 'opened' || p.action === 'reopened') return 'opened_pull_request';
      if (p.action === 'synchronize' || p.action === 'edited') return 'updated_pull_request';
      if (p.action === 'closed') return 'closed_pull_request';
      if (IGNORED_PR_ACTIONS.has(p.action ?? '')) return null;
      break;
    case 'push': {
      const ref = p.ref ?? '';
      if (ref.startsWith('refs/heads/gh-readonly-queue/')) return null;
      if (!ref.startsWith('refs/heads/')) return 'push_tags';
      return branchNotifiable(branchOf(ref), branches) ? 'push_commits' : null;
    }
    case 'issues':
      if (!['labeled', 'unlabeled', 'milestoned', 'demilestoned'].includes(p.action ?? '')) return 'issues';
      break;
    case 'issue_comment':
    case 'ping':
      return header;
    default:
      if (IGNORED_EVENTS.has(header)) return null;
  }
  throw unsupportedEvent('GitHub', `${header}:${p.action ?? '???'}`);
}

function topicOf(event: string, p: Payload): string {
  if (event.includes('pull_request')) return itemTopic(repo(p), 'PR', p.pull_request!.number, p.pull_request!.title);
  if (event.startsWith('issue')) return itemTopic(repo(p), p.issue!.pull_request ? 'PR' : 'issue', p.issue!.number, p.issue!.title);
  if (event === 'push_commits') return branchTopic(repo(p), branchOf(p.ref!));
  if (event === 'ping' && !p.repository) return p.organization?.login ?? '';
  return repo(p);
}

function commentAction(p: Payload): string {
  return `${p.action === 'created' ? '[commented]' : `${p.action} a [comment]`}(${p.comment!.html_url}) on`;
}

/** The message of each event; `withTitle` when the URL fixes the topic, so the title goes in the message. */
function bodyOf(event: string, p: Payload, withTitle: boolean): string {
  const user = p.sender.login;
  switch (event) {
    case 'ping':
      return `GitHub webhook has been successfully configured by ${user}.`;
    case 'push_commits': {
      const commits: Commit[] = (p.commits ?? []).map((c) => ({ name: c.author.username || c.author.name, sha: c.id, url: c.url, message: c.message }));
      return pushMessage({ user, compareUrl: p.compare ?? null, branch: branchOf(p.ref!), commits, deleted: p.deleted === true, forced: p.forced === true });
    }
    case 'push_tags':
      return tagMessage(user, (p.ref ?? '').replace(/^refs\/tags\//, ''), p.created ? 'pushed' : 'removed');
    case 'opened_pull_request':
    case 'updated_pull_request': {
      const pr = p.pull_request!;
      const action = p.action === 'synchronize' ? 'updated' : p.action!;
      const opened = action === 'opened';
      return itemMessage({
        user,
        action,
        url: pr.html_url,
        type: 'PR',
        number: pr.number,
        title: withTitle ? pr.title : undefined,
        targetBranch: opened ? pr.head.label : undefined,
        baseBranch: opened ? pr.base.label : undefined,
        message: opened || (p.changes && 'body' in p.changes) ? pr.body : null,
        assignee: pr.assignee?.login,
      });
    }
    case 'closed_pull_request': {
      const pr = p.pull_request!;
      return itemMessage({
        user,
        action: pr.merged ? 'merged' : 'closed without merge',
        url: pr.html_url,
        type: 'PR',
        number: pr.number,
        title: withTitle ? pr.title : undefined,
      });
    }
    case 'issues': {
      const issue = p.issue!;
      const assigning = p.action === 'assigned' || p.action === 'unassigned';
      const text = itemMessage({
        user,
        action: p.action!,
        url: issue.html_url,
        type: 'issue',
        number: issue.number,
        title: withTitle ? issue.title : undefined,
        message: assigning ? null : issue.body,
      });
      if (p.assignee && p.action === 'assigned') return text.replace('assigned', `assigned ${p.assignee.login} to`);
      if (p.assignee && p.action === 'unassigned') return text.replace('unassigned', `unassigned ${p.assignee.login} from`);
      return text;
    }
    default: {
      const issue = p.issue!;
      return itemMessage({
        user,
        action: commentAction(p),
        url: issue.html_url,
        type: issue.pull_request ? 'PR' : 'issue',
        number: issue.number,
        title: withTitle ? issue.title : undefined,
        message: p.comment!.body,
      });
    }
  }
}

export const github: Integration = {
  name: 'github',
  displayName: 'GitHub',
  client: 'GitHub',
  setup:
    'In the repository (or organization), Settings → Webhooks → Add webhook: paste the URL, content type `application/json`, and choose the events (`&branches=main,dev` keeps only pushes to those).',
  allEventTypes: ['ping', 'push_commits', 'push_tags', 'opened_pull_request', 'updated_pull_request', 'closed_pull_request', 'issues', 'issue_comment'],
  message(request, query) {
    const header = request.headers['x-github-event'];
    if (header === undefined) throw missingEventHeader('X-GitHub-Event');
    const payload = parsePayload(request.body) as unknown as Payload;
    const event = eventOf(header, payload, query.get('branches'));
    if (event === null) return null;
    return { topic: topicOf(event, payload), content: bodyOf(event, payload, query.has('topic')), event };
  },
};
