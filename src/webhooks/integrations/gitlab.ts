// GitLab (Zulip's gitlab integration): the event from the X-Gitlab-Event header, refined by the
// payload's action or the kind of thing commented on; pushes, tags, issues, merge requests and
// their approvals, comments (designs too), wiki pages, jobs, pipelines, releases, feature flags,
// deployments, access tokens about to expire, and the test GitLab sends from its settings. With
// the topic fixed by the URL, messages start with a link to the project and carry the item's title.
import {
  branchNotifiable,
  branchTopic,
  commitCommentMessage,
  itemMessage,
  itemTopic,
  namesList,
  pushMessage,
  quoted,
  removeBranchMessage,
  tagMessage,
  type Commit,
} from '../git.ts';
import { missingEventHeader, parsePayload, unsupportedEvent, type Integration } from '../integration.ts';

const EMPTY_SHA = '0000000000000000000000000000000000000000';

// The payload as GitLab documents it; only what the messages read.
interface Named {
  name: string;
}
interface Payload {
  event_name?: string;
  object_kind?: string;
  user_name?: string;
  user?: Named & { username?: string };
  user_url?: string;
  group?: { group_name: string; group_path: string };
  project?: { name: string; web_url: string };
  repository?: { name: string; homepage: string };
  ref?: string;
  before?: string;
  after?: string;
  checkout_sha?: string | null;
  commits?: { id: string; url: string; message: string; author: Named }[];
  assignee?: Named | null;
  assignees?: Named[];
  object_attributes?: {
    action?: string;
    noteable_type?: string;
    iid: number;
    id: number;
    title: string;
    url: string;
    description?: string | null;
    oldrev?: string;
    source_branch?: string;
    target_branch?: string;
    note?: string;
    status?: string;
    ref?: string;
    name?: string;
    active?: boolean;
    expires_at?: string;
    position?: { new_path: string };
  };
  // Releases and deployments carry their fields at the top.
  action?: string;
  name?: string;
  tag?: string;
  url?: string;
  description?: string;
  status?: string;
  environment?: string;
  deployable_url?: string;
  commit_url?: string;
  commit_title?: string;
  merge_request?: { iid: number; title: string; url: string };
  issue?: { iid: number; title: string; url: string };
  snippet?: { id: number; title: string; url?: string };
  commit?: { id: string; url: string };
  build_name?: string;
  build_stage?: string;
  build_status?: string;
  builds?: { id: number; name: string; status: string; artifacts_file?: { filename: string | null } }[];
}

const DESIGN_NOTE = 'Note Hook DesignManagement::Design';
const EVENTS = [
  'Push Hook',
  'Tag Push Hook',
  'Test Hook',
  'Issue Hook open',
  'Issue Hook close',
  'Issue Hook reopen',
  'Issue Hook update',
  'Confidential Issue Hook open',
  'Confidential Issue Hook close',
  'Confidential Issue Hook reopen',
  'Confidential Issue Hook update',
  'Note Hook Commit',
  'Note Hook MergeRequest',
  'Note Hook Issue',
  'Confidential Note Hook Issue',
  DESIGN_NOTE,
  `Confidential ${DESIGN_NOTE}`,
  'Note Hook Snippet',
  // approval and unapproval come when a merge request needs more than one approver.
  'Merge Request Hook approved',
  'Merge Request Hook unapproved',
  'Merge Request Hook approval',
  'Merge Request Hook unapproval',
  'Merge Request Hook open',
  'Merge Request Hook update',
  'Merge Request Hook merge',
  'Merge Request Hook close',
  'Merge Request Hook reopen',
  'Wiki Page Hook create',
  'Wiki Page Hook update',
  'Job Hook',
  'Build Hook',
  'Pipeline Hook',
  'Release Hook',
  'Feature Flag Hook',
  'Resource Access Token Hook',
  'Deployment Hook',
];

// A group's access-token payload has no project: the group stands in for it.
const repoName = (p: Payload) => p.project?.name ?? p.repository?.name ?? p.group!.group_name;
const homepage = (p: Payload) => p.project?.web_url ?? p.repository?.homepage ?? groupUrl(p.group!);
// GitLab's payload names the group's path, not its server; Zulip links to gitlab.com.
const groupUrl = (group: { group_path: string }) => `https://gitlab.com/groups/${group.group_path}`;
const branchName = (ref: string) => ref.replace('refs/heads/', '');
const titleCase = (name: string) => name.replace(/_/g, ' ').replace(/\w\S*/g, (w) => w[0]!.toUpperCase() + w.slice(1).toLowerCase());

/** Zulip's event name for the header and payload, or null for a push to a branch left out by `branches`. */
function eventOf(header: string, p: Payload, branches: string | null): string | null {
  let event = header;
  // A system hook names its event in the payload, as the project hooks' header would.
  if (event === 'System Hook') event = `${titleCase((p.event_name ?? p.object_kind ?? '').split('__')[0]!)} Hook`;
  if (['Confidential Issue Hook', 'Issue Hook', 'Merge Request Hook', 'Wiki Page Hook'].includes(event))
    event = `${event} ${p.object_attributes!.action ?? 'open'}`;
  else if (event === 'Confidential Note Hook' || event === 'Note Hook') event = `${event} ${p.object_attributes!.noteable_type}`;
  else if (event === 'Push Hook' && !branchNotifiable(branchName(p.ref!), branches)) return null;
  if (EVENTS.includes(event)) return event;
  throw unsupportedEvent('GitLab', event);
}

const assignees = (p: Payload) => namesList((p.assignees?.length ? p.assignees : p.assignee ? [p.assignee] : []).map((a) => a.name));

function pushBody(p: Payload): string {
  if (p.after === EMPTY_SHA) return removeBranchMessage(p.user_name!, branchName(p.ref!));
  const commits: Commit[] = p.commits!.map((c) => ({ name: c.author.name, sha: c.id, url: c.url, message: c.message }));
  const compareUrl = `${homepage(p)}/-/compare/${p.before}...${p.after}`;
  return pushMessage({ user: p.user_name!, compareUrl, branch: branchName(p.ref!), commits, deleted: false, forced: false });
}

function pipelineBody(p: Payload): string {
  const a = p.object_attributes!;
  const action = a.status === 'pending' ? 'was created' : a.status === 'running' ? 'started' : `changed status to ${a.status}`;
  const builds = p.builds!.map((b) => {
    const url = `${homepage(p)}/-/jobs/${b.id}`;
    const file = b.artifacts_file?.filename;
    const artifact = file ? `  * built artifact: *${file}* [[Browse](${url}/artifacts/browse)|[Download](${url}/artifacts/download)]\n` : '';
    return `* [${b.name}](${url}) - ${b.status}\n${artifact}`;
  });
  return `[Pipeline (${a.id})](${homepage(p)}/-/pipelines/${a.id}) ${action} with build(s):\n${builds.join('').slice(0, -1)}.`;
}

function buildBody(p: Payload): string {
  const status = p.build_status;
  const action = status === 'created' ? 'was created' : status === 'running' ? 'started' : `changed status to ${status}`;
  return `Build ${p.build_name} from ${p.build_stage} stage ${action}.`;
}

function releaseBody(p: Payload): string {
  const action = `${p.action}d`;
  if (p.action === 'delete') return `Release ${p.name} for tag ${p.tag} was ${action}.`;
  const body = `Release [${p.name}](${p.url}) for tag ${p.tag} was ${action}.`;
  return p.description === undefined ? body : body + quoted(p.description);
}

/** A deployment's news by its status; GitLab's other statuses (blocked, approved, ...) are not among Zulip's. */
function deploymentBody(p: Payload): string {
  const deployment = p.deployable_url ? `[deployment](${p.deployable_url})` : 'deployment';
  const sha = p.commit_url!.split('/').at(-1)!.slice(0, 7);
  switch (p.status) {
    case 'running':
      return `[${p.user!.name}](${p.user_url}) started a new ${deployment}:\n> [${sha}](${p.commit_url}) ${p.commit_title}`;
    case 'success':
      return `The ${deployment} was successful.`;
    case 'failed':
      return `The ${deployment} failed.`;
    case 'canceled':
      return `The ${deployment} was canceled.`;
  }
  throw unsupportedEvent('GitLab', `Deployment Hook ${p.status}`);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function accessTokenBody(p: Payload): string {
  const a = p.object_attributes!;
  const [year, month, day] = a.expires_at!.split('-');
  const page = p.group ? `${groupUrl(p.group)}/-/settings/access_tokens` : `${p.project!.web_url}/-/settings/access_tokens`;
  return `The access token [${a.name}](${page}) will expire on ${MONTHS[Number(month) - 1]} ${day}, ${year}.`;
}

/** A design's name and link, from the comment's path "designs/issue-<iid>/<name>" (the payload names no issue). */
function designOf(p: Payload): { name: string; url: string } {
  const [, issue, name] = p.object_attributes!.position!.new_path.split('/');
  return { name: name!, url: `${p.repository!.homepage}/-/issues/${issue!.split('-').at(-1)}/designs/${name}` };
}

/** The message of each event; `withTitle` when the URL fixes the topic. */
function bodyOf(event: string, p: Payload, withTitle: boolean): string {
  const a = p.object_attributes!;
  const user = p.user?.name ?? '';
  const title = (t: string) => (withTitle ? t : undefined);
  if (event === 'Push Hook') return pushBody(p);
  if (event === 'Tag Push Hook') return tagMessage(p.user_name!, p.ref!.replace('refs/tags/', ''), p.checkout_sha ? 'pushed' : 'removed');
  if (event === 'Test Hook') return `Webhook for **${repoName(p)}** has been configured successfully! :tada:`;
  if (event === 'Job Hook' || event === 'Build Hook') return buildBody(p);
  if (event === 'Pipeline Hook') return pipelineBody(p);
  if (event === 'Release Hook') return releaseBody(p);
  if (event === 'Deployment Hook') return deploymentBody(p);
  if (event === 'Resource Access Token Hook') return accessTokenBody(p);
  if (event === 'Feature Flag Hook')
    return `${p.user!.username} ${a.active ? 'activated' : 'deactivated'} the feature flag [${a.name}](${homepage(p)}/-/feature_flags).`;
  if (event.startsWith('Wiki Page Hook')) return `${user} ${event.endsWith('create') ? 'created' : 'updated'} [wiki page "${a.title}"](${a.url}).`;
  if (event.endsWith('Issue Hook open')) {
    // GitLab's hidden comments (<!-- -->) stay hidden.
    const description = a.description ? a.description.replace(/<!--[\s\S]*?-->/g, '').trimEnd() : null;
    return itemMessage({
      user,
      action: 'created',
      url: a.url,
      type: 'issue',
      number: a.iid,
      message: description,
      assignee: assignees(p) || undefined,
      title: title(a.title),
    });
  }
  if (event.includes('Issue Hook')) {
    const action = { close: 'closed', reopen: 'reopened', update: 'updated' }[event.split(' ').at(-1)!]!;
    return itemMessage({ user, action, url: a.url, type: 'issue', number: a.iid, title: title(a.title) });
  }
  if (event === 'Merge Request Hook open' || (event === 'Merge Request Hook update' && !a.oldrev)) {
    const opened = event.endsWith('open');
    return itemMessage({
      user,
      action: opened ? 'created' : 'updated',
      url: a.url,
      type: 'MR',
      number: a.iid,
      targetBranch: opened ? a.source_branch : undefined,
      baseBranch: opened ? a.target_branch : undefined,
      message: a.description ?? null,
      assignee: assignees(p) || undefined,
      title: title(a.title),
    });
  }
  if (event.startsWith('Merge Request Hook')) {
    const action = {
      approved: 'approved',
      unapproved: 'unapproved',
      approval: 'approval',
      unapproval: 'unapproval',
      update: 'added commit(s) to',
      merge: 'merged',
      close: 'closed',
      reopen: 'reopened',
    }[event.split(' ').at(-1)!]!;
    const merged = action === 'merged';
    return itemMessage({
      user,
      action,
      url: a.url,
      type: 'MR',
      number: a.iid,
      targetBranch: merged ? a.source_branch : undefined,
      baseBranch: merged ? a.target_branch : undefined,
      title: title(a.title),
    });
  }
  const commented = `[commented](${a.url}) on`;
  if (event.endsWith(DESIGN_NOTE)) {
    const design = designOf(p);
    return `${user} [commented](${design.url}#note_${a.id}) on design [${design.name}](${design.url}):\n${quoted(a.note!)}`;
  }
  if (event === 'Note Hook Commit') return commitCommentMessage(user, `[commented](${a.url})`, p.commit!.url, p.commit!.id, a.note!);
  if (event === 'Note Hook MergeRequest') {
    const mr = p.merge_request!;
    return itemMessage({ user, action: commented, url: mr.url, type: 'MR', number: mr.iid, message: a.note, title: title(mr.title) });
  }
  if (event === 'Note Hook Snippet') {
    const snippet = p.snippet!;
    // GitLab sends the snippet's URL since 16.1.
    const url = snippet.url ?? `${p.project!.web_url}/-/snippets/${snippet.id}`;
    return itemMessage({ user, action: commented, url, type: 'snippet', number: snippet.id, message: a.note, title: title(snippet.title) });
  }
  const issue = p.issue!;
  return itemMessage({ user, action: commented, url: issue.url, type: 'issue', number: issue.iid, message: a.note, title: title(issue.title) });
}

function topicOf(event: string, p: Payload, mrTitle: boolean): string {
  const a = p.object_attributes;
  if (event === 'Push Hook') return branchTopic(repoName(p), branchName(p.ref!));
  if (event === 'Job Hook' || event === 'Build Hook') return branchTopic(p.repository!.name, branchName(p.ref!));
  if (event === 'Pipeline Hook') return branchTopic(repoName(p), branchName(a!.ref!));
  if (event.startsWith('Merge Request Hook')) return itemTopic(repoName(p), 'MR', a!.iid, mrTitle ? a!.title : '');
  if (event.includes('Issue Hook')) return itemTopic(repoName(p), 'issue', a!.iid, a!.title);
  if (event.endsWith('Note Hook Issue')) return itemTopic(repoName(p), 'issue', p.issue!.iid, p.issue!.title);
  if (event === 'Note Hook MergeRequest') return itemTopic(repoName(p), 'MR', p.merge_request!.iid, mrTitle ? p.merge_request!.title : '');
  if (event === 'Note Hook Snippet') return itemTopic(repoName(p), 'snippet', p.snippet!.id, p.snippet!.title);
  if (event.endsWith(DESIGN_NOTE)) return `${repoName(p)} / design ${designOf(p).name}`;
  if (event === 'Deployment Hook') return branchTopic(repoName(p), p.environment!);
  return repoName(p);
}

export const gitlab: Integration = {
  name: 'gitlab',
  displayName: 'GitLab',
  client: 'GitLab',
  allEventTypes: EVENTS,
  setup:
    'In the project, Settings → Webhooks: paste the URL, tick the triggers you want and add the webhook (`&use_merge_request_title=false` leaves titles out of merge request topics).',
  message(request, query) {
    const header = request.headers['x-gitlab-event'];
    if (header === undefined) throw missingEventHeader('X-GitLab-Event');
    const payload = parsePayload(request.body) as unknown as Payload;
    const event = eventOf(header, payload, query.get('branches'));
    if (event === null) return null;
    const customTopic = query.has('topic');
    let content = bodyOf(event, payload, customTopic);
    if (customTopic) content = `[[${repoName(payload)}](${homepage(payload)})] ${content}`;
    // A design's image needs a GitLab login: Zulip does not preview it.
    return { topic: topicOf(event, payload, query.get('use_merge_request_title') !== 'false'), content, event, noPreviews: event.endsWith(DESIGN_NOTE) };
  },
};
