// Gitea, its fork Forgejo, and Gogs, which both grew from (Zulip's gitea and gogs integrations):
// one payload format, the event in the X-Gitea-Event (Forgejo sends it too) or X-Gogs-Event
// header; pushes, new and deleted branches and tags, pull requests, issues and their comments,
// and releases. Gitea names a pull request's assignee where Gogs does not.
import { branchNotifiable, branchTopic, createBranchMessage, itemMessage, itemTopic, pushMessage, releaseMessage, releaseTopic, type Commit } from '../git.ts';
import { missingEventHeader, parsePayload, unsupportedEvent, type Integration } from '../integration.ts';

// The payload as Gitea documents it; only what the messages read.
interface Payload {
  action?: string;
  ref?: string;
  ref_type?: string;
  compare_url?: string;
  sender: { login: string; username: string };
  repository: { name: string; html_url: string };
  commits?: { id: string; url: string; message: string; author: { name: string; username: string } }[];
  pull_request?: {
    id: number;
    number: number;
    title: string;
    html_url: string;
    merged: boolean;
    merged_by?: { username: string } | null;
    user: { username: string };
    head_branch?: string;
    base_branch?: string;
    head?: { ref: string };
    base?: { ref: string };
    assignee?: { login: string } | null;
  };
  issue?: { number: number; title: string; body: string; assignee?: { login: string } | null; html_url?: string };
  comment?: { html_url: string; body: string };
  release?: { tag_name: string; name: string; author: { username: string } };
}

const EVENTS = ['push', 'create', 'pull_request', 'issues', 'issue_comment', 'release', 'delete'];

function pushBody(p: Payload): string {
  // A committer without a username goes by their first name.
  const commits: Commit[] = p.commits!.map((c) => ({ name: c.author.username || c.author.name.split(/\s+/)[0]!, sha: c.id, url: c.url, message: c.message }));
  return pushMessage({
    user: p.sender.username,
    compareUrl: p.compare_url!,
    branch: p.ref!.replace('refs/heads/', ''),
    commits,
    deleted: false,
    forced: false,
  });
}

function pullRequestBody(p: Payload, withTitle: boolean, namesAssignee: boolean): string {
  const pr = p.pull_request!;
  const merged = pr.merged;
  const action = merged ? 'merged' : p.action!;
  const branches = action !== 'edited';
  return itemMessage({
    user: merged ? pr.merged_by!.username : pr.user.username,
    action,
    url: pr.html_url,
    type: 'PR',
    number: pr.number,
    targetBranch: branches ? (pr.head_branch ?? pr.head?.ref) : undefined,
    baseBranch: branches ? (pr.base_branch ?? pr.base?.ref) : undefined,
    title: withTitle ? pr.title : undefined,
    assignee: namesAssignee ? pr.assignee?.login : undefined,
  });
}

function commentBody(p: Payload, withTitle: boolean): string {
  const issue = p.issue!;
  const action = `${p.action === 'created' ? '[commented]' : `${p.action} a [comment]`}(${p.comment!.html_url}) on`;
  return itemMessage({
    user: p.sender.login,
    action,
    url: `${p.repository.html_url}/issues/${issue.number}`,
    type: 'issue',
    number: issue.number,
    message: p.comment!.body,
    title: withTitle ? issue.title : undefined,
  });
}

function messageOf(event: string, p: Payload, branches: string | null, withTitle: boolean, namesAssignee: boolean) {
  const repo = p.repository.name;
  switch (event) {
    case 'push': {
      const branch = p.ref!.replace('refs/heads/', '');
      if (!branchNotifiable(branch, branches)) return null;
      return { topic: branchTopic(repo, branch), content: pushBody(p) };
    }
    case 'create':
      return { topic: branchTopic(repo, p.ref!), content: createBranchMessage(p.sender.username, p.ref!, `${p.repository.html_url}/src/${p.ref}`) };
    case 'delete': {
      const kind = p.ref_type === 'tag' ? 'tag' : 'branch';
      return { topic: branchTopic(repo, p.ref!), content: `${p.sender.login} deleted ${kind} \`${p.ref}\`.` };
    }
    case 'pull_request':
      return { topic: itemTopic(repo, 'PR', p.pull_request!.id, p.pull_request!.title), content: pullRequestBody(p, withTitle, namesAssignee) };
    case 'issues': {
      const issue = p.issue!;
      return {
        topic: itemTopic(repo, 'issue', issue.number, issue.title),
        content: itemMessage({
          user: p.sender.login,
          action: p.action!,
          url: `${p.repository.html_url}/issues/${issue.number}`,
          type: 'issue',
          number: issue.number,
          message: issue.body,
          assignee: issue.assignee?.login,
          title: withTitle ? issue.title : undefined,
        }),
      };
    }
    case 'issue_comment':
      return { topic: itemTopic(repo, 'issue', p.issue!.number, p.issue!.title), content: commentBody(p, withTitle) };
    default: {
      const release = p.release!;
      return {
        topic: releaseTopic(repo, release.tag_name, release.name),
        content: releaseMessage({ user: release.author.username, action: p.action!, name: release.name, url: p.repository.html_url, tag: release.tag_name }),
      };
    }
  }
}

function gogsLike(name: string, displayName: string, header: string, namesAssignee: boolean, setup: string, aliases?: string[]): Integration {
  return {
    name,
    displayName,
    client: displayName,
    allEventTypes: EVENTS,
    setup,
    aliases,
    message(request, query) {
      const event = request.headers[header.toLowerCase()];
      if (event === undefined) throw missingEventHeader(header);
      if (!EVENTS.includes(event)) throw unsupportedEvent(displayName, event);
      const payload = parsePayload(request.body) as unknown as Payload;
      const message = messageOf(event, payload, query.get('branches'), query.has('topic'), namesAssignee);
      return message && { ...message, event };
    },
  };
}

export const gitea = gogsLike(
  'gitea',
  'Gitea',
  'X-Gitea-Event',
  true,
  'In the repository (or organization), Settings → Webhooks → Add webhook → Gitea (Forgejo: Forgejo): paste the URL, content type `application/json`, and choose the events.',
  ['forgejo'],
);

export const gogs = gogsLike(
  'gogs',
  'Gogs',
  'X-Gogs-Event',
  false,
  'In the repository, Settings → Webhooks → Add webhook → Gogs: paste the URL, content type `application/json`, and choose the events.',
);
