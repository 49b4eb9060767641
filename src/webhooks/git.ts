// The messages Zulip's Git integrations share (its zerver/lib/webhooks/git.py, in our words):
// pushes with their commits and committers, tags, and pull request and issue events.

/** Topics: "repo / branch" for pushes, "repo / PR #12 title" for pull requests and issues. */
export const branchTopic = (repo: string, branch: string) => `${repo} / ${branch}`;
export const itemTopic = (repo: string, type: string, id: number, title: string) => `${repo} / ${type} #${id} ${title}`;
/** "repo / v1.0 title" for releases. */
export const releaseTopic = (repo: string, tag: string, title: string) => `${repo} / ${tag} ${title}`;

/** Zulip's is_branch_name_notifiable: `branches` (the URL's, comma-separated) names this branch exactly, or is absent. */
export const branchNotifiable = (branch: string, branches: string | null) => branches === null || branches.split(',').some((b) => b.trim() === branch);

const COMMITS_LIMIT = 20;
const COMMITTERS_LIMIT = 3;
const PUNCTUATION = new Set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');

export interface Commit {
  name: string;
  sha: string;
  url: string;
  message: string;
}

export const shortSha = (sha: string) => sha.slice(0, 11);

function commitList(commits: Commit[]): string {
  let text = commits
    .slice(0, COMMITS_LIMIT)
    .map((c) => `* ${c.message.split('\n')[0]} ([${shortSha(c.sha)}](${c.url}))\n`)
    .join('');
  if (commits.length > COMMITS_LIMIT) text += `[and ${commits.length - COMMITS_LIMIT} more commit(s)]`;
  return text.trimEnd();
}

/** Who committed how much, most first (ties by name), the fourth and beyond as "others". */
function committers(commits: Commit[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const c of commits) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
  const sorted = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  if (sorted.length <= COMMITTERS_LIMIT) return sorted;
  const others = sorted.slice(COMMITTERS_LIMIT).reduce((sum, [, n]) => sum + n, 0);
  return [...sorted.slice(0, COMMITTERS_LIMIT), ['others', others]];
}

export function pushMessage(p: { user: string; compareUrl: string | null; branch: string; commits: Commit[]; deleted: boolean; forced: boolean }): string {
  if (p.commits.length === 0 && p.deleted) return `${p.user} [deleted](${p.compareUrl}) the branch ${p.branch}.`;
  const pushType = p.forced ? 'force pushed' : 'pushed';
  if (p.commits.length === 0) {
    return p.compareUrl ? `${p.user} [${pushType}](${p.compareUrl}) the branch ${p.branch}.` : `${p.user} ${pushType} the branch ${p.branch}.`;
  }
  const count = `${p.commits.length} commit${p.commits.length > 1 ? 's' : ''}`;
  const pushed = p.compareUrl ? `[${pushType}](${p.compareUrl}) ${count}` : `${pushType} ${count}`;
  const base = `${p.user} ${pushed} to branch ${p.branch}.`;
  const who = committers(p.commits);
  if (who.length === 1 && who[0]![0] === p.user) return `${base}\n\n${commitList(p.commits)}`.trimEnd();
  let details = `${who[0]![0]} (${who[0]![1]})`;
  for (const [name, n] of who.slice(1, -1)) details = `${details}, ${name} (${n})`;
  if (who.length > 1) details = `${details} and ${who.at(-1)![0]} (${who.at(-1)![1]})`;
  return `${base} Commits by ${details}.\n\n${commitList(p.commits)}`.trimEnd();
}

export function tagMessage(user: string, tag: string, action: string): string {
  const message = `${user} ${action} tag ${tag}`;
  return PUNCTUATION.has(tag.at(-1) ?? '') ? message : `${message}.`;
}

/** A quoted text after a message, as Zulip's git integrations quote descriptions and comments. */
export const quoted = (text: string) => `\n~~~ quote\n${text}\n~~~`;

/** "user action [PR #12 title](url) from `head` to `base`:" and the quoted text, as Zulip writes it. */
export function itemMessage(p: {
  user: string;
  action: string;
  url: string;
  type: string;
  number?: number;
  title?: string;
  targetBranch?: string;
  baseBranch?: string;
  message?: string | null;
  assignee?: string;
}): string {
  const id = p.number !== undefined ? ` #${p.number}` : '';
  const title = p.title !== undefined ? ` ${p.title}` : '';
  let text = `${p.user} ${p.action} [${p.type}${id}${title}](${p.url})`;
  const branches = p.targetBranch && p.baseBranch;
  if (branches) text = `${text} from \`${p.targetBranch}\` to \`${p.baseBranch}\``;
  if (p.assignee) text = `${text} (assigned to ${p.assignee})`;
  const punctuation = p.message ? ':' : '.';
  if (p.assignee || branches || p.title === undefined || !PUNCTUATION.has(p.title.at(-1) ?? '')) text = `${text}${punctuation}`;
  if (p.message) text += `\n${quoted(p.message)}`;
  return text.trimEnd();
}

/** "A", "A and B", "A, B and C": assignees as Zulip lists them. */
export function namesList(names: string[]): string {
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names.at(-1)}` : (names[0] ?? '');
}

export const createBranchMessage = (user: string, branch: string, url: string) => `${user} created [${branch}](${url}) branch.`;
export const removeBranchMessage = (user: string, branch: string) => `${user} deleted branch ${branch}.`;
export const releaseMessage = (p: { user: string; action: string; name: string; url: string; tag: string }) =>
  `${p.user} ${p.action} release [${p.name}](${p.url}) for tag ${p.tag}.`;

/** "user [commented](url) on [abcdef01234](commit url):" and the quoted comment. */
export function commitCommentMessage(user: string, action: string, commitUrl: string, sha: string, comment: string): string {
  return `${user} ${action} on [${shortSha(sha)}](${commitUrl}):${quoted(comment)}`;
}
