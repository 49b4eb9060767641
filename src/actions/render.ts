// The one place messages are rendered: Markdown to HTML plus what the message mentions, links and
// attaches. Until the Zulip-flavoured renderer of src/markdown/ is usable, a plain CommonMark+GFM
// pass renders the HTML and mentions are read from the Markdown source with Zulip's syntax.
import rehypeSanitize from 'rehype-sanitize';
import rehypeStringify from 'rehype-stringify';
import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import remarkRehype from 'remark-rehype';
import { unified } from 'unified';
import type { App } from '../app.ts';
import { MENTIONS_RE, STREAM_WILDCARDS, TOPIC_WILDCARDS, USER_GROUP_MENTIONS_RE } from '../markdown/mention-syntax.ts';
import type { RenderResult } from '../markdown/types.ts';
import type { RealmInfo } from '../queries/realms.ts';

const pipeline = unified().use(remarkParse).use(remarkGfm).use(remarkRehype).use(rehypeSanitize).use(rehypeStringify);

const LINK_RE = /\]\(([^)\s]+)\)|<(https?:\/\/[^>\s]+)>|(?<![(<])\b(https?:\/\/[^\s<>()\]]+)/g;
const UPLOAD_RE = /\/user_uploads\/([^\s)\]"'<>?#]+)/;
const IMAGE_RE = /\.(png|jpe?g|gif|webp|bmp|svg|avif)$/i;

interface MentionSyntax {
  userNames: string[];
  userIds: number[];
  groupNames: string[];
  wildcard: boolean;
  topicWildcard: boolean;
}

/** Non-silent mentions in the source: `@**Name**`, `@**Name|id**`, `@*group*`, wildcards. */
function scanMentions(content: string): MentionSyntax {
  const found: MentionSyntax = { userNames: [], userIds: [], groupNames: [], wildcard: false, topicWildcard: false };
  for (const m of content.matchAll(MENTIONS_RE())) {
    if (m[1]) continue;
    const name = m[3]!;
    if (STREAM_WILDCARDS.has(name)) found.wildcard = true;
    else if (TOPIC_WILDCARDS.has(name)) found.topicWildcard = true;
    else {
      const byId = /^(.*)\|(\d+)$/.exec(name);
      if (byId) found.userIds.push(Number(byId[2]));
      else found.userNames.push(name);
    }
  }
  for (const m of content.matchAll(USER_GROUP_MENTIONS_RE())) if (!m[1]) found.groupNames.push(m[3]!);
  return found;
}

async function resolveMentions(app: App, realm: RealmInfo, syntax: MentionSyntax): Promise<{ users: Set<number>; groups: Set<number> }> {
  const users = new Set<number>();
  if (syntax.userNames.length || syntax.userIds.length) {
    const rows = await app.prisma.user.findMany({
      where: {
        realmId: realm.id,
        isActive: true,
        OR: [{ id: { in: syntax.userIds } }, ...syntax.userNames.map((n) => ({ fullName: { equals: n, mode: 'insensitive' as const } }))],
      },
      select: { id: true, fullName: true },
    });
    for (const id of syntax.userIds) if (rows.some((r) => r.id === id)) users.add(id);
    for (const name of syntax.userNames) {
      // A name shared by several users mentions nobody, as in Zulip.
      const matches = rows.filter((r) => r.fullName.toLowerCase() === name.toLowerCase());
      if (matches.length === 1) users.add(matches[0]!.id);
    }
  }
  const groups = new Set<number>();
  if (syntax.groupNames.length) {
    for (const g of (await app.realms.groups(realm.id)).values()) {
      if (g.name && !g.isSystemGroup && !g.deactivated && syntax.groupNames.includes(g.name)) groups.add(g.id);
    }
  }
  return { users, groups };
}

function scanLinks(content: string): string[] {
  return [...content.matchAll(LINK_RE)].map((m) => (m[1] ?? m[2] ?? m[3])!);
}

export async function renderMessageContent(app: App, realm: RealmInfo, content: string): Promise<RenderResult> {
  const html = String(pipeline.processSync(content)).trim();
  const syntax = scanMentions(content);
  const mentions = await resolveMentions(app, realm, syntax);
  const links = scanLinks(content);
  const uploadPathIds = [...new Set(links.map((l) => UPLOAD_RE.exec(l)?.[1]).filter((p): p is string => p !== undefined))];
  return {
    html,
    mentionedUserIds: mentions.users,
    mentionedGroupIds: mentions.groups,
    wildcardMention: syntax.wildcard,
    topicWildcardMention: syntax.topicWildcard,
    uploadPathIds,
    links,
    isMeMessage: /^\/me\s\S/.test(content) && !content.includes('\n'),
  };
}

/** Whether any link of a rendered message points at an image, for `has:image`. */
export function linksImage(links: readonly string[]): boolean {
  return links.some((l) => IMAGE_RE.test(l.split(/[?#]/)[0]!));
}
