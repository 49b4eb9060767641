// What the Zulip-flavoured renderer may look up, loaded from the database for one message. The
// renderer is synchronous, so the names the content mentions are read first and only those rows
// are loaded: a render costs a few small queries whatever the size of the organization.
import type { App } from '../app.ts';
import { badRequest } from '../errors.ts';
import { defaultFormat, formatName, type StoredThumbnail, storedFormat } from '../domain/thumbnails.ts';
import { bareContentType, servesInline } from '../domain/mime-types.ts';
import { MarkdownRenderingError, renderMarkdown, type MarkdownContext, type MentionUser, type RenderResult, type UploadImage } from '../markdown/index.ts';
import { MENTIONS_RE, STREAM_LINK_SOURCE, USER_GROUP_MENTIONS_RE } from '../markdown/mention-syntax.ts';
import { compiledLinkifiers } from './linkifiers.ts';
import { emojiSourceUrl, realmEmojiByName } from './realm-emoji.ts';
import type { RealmInfo } from './realms.ts';
import { equalsIgnoringCase } from '../db/text-match.ts';

const STREAM_LINK_RE = new RegExp(STREAM_LINK_SOURCE, 'gu');
const EMOJI_RE = /:([\p{L}\p{N}_+-]+):/gu;

interface Names {
  userIds: number[];
  userNames: string[];
  channelNames: string[];
  emojiNames: string[];
}

/** Candidate names, over-approximated (code spans included): a spare row costs nothing. */
function scanNames(content: string): Names {
  const names: Names = { userIds: [], userNames: [], channelNames: [], emojiNames: [] };
  for (const m of content.matchAll(MENTIONS_RE())) {
    const byId = /^(.*)\|(\d{1,9})$/.exec(m[3]!);
    if (byId) names.userIds.push(Number(byId[2]));
    const name = byId ? byId[1]! : m[3]!;
    if (name) names.userNames.push(name);
  }
  // Topic links are `#**channel>topic**`; the channel name alone is looked up too.
  for (const m of content.matchAll(STREAM_LINK_RE)) names.channelNames.push(m[1]!, m[1]!.split('>')[0]!);
  for (const m of content.matchAll(EMOJI_RE)) names.emojiNames.push(m[1]!);
  return names;
}

async function mentionUsers(app: App, realm: RealmInfo, names: Names): Promise<MarkdownContext['users']> {
  const rows =
    names.userIds.length || names.userNames.length
      ? await app.prisma.user.findMany({
          where: {
            realmId: realm.id,
            OR: [{ id: { in: names.userIds } }, ...names.userNames.map((n) => ({ fullName: equalsIgnoringCase(n) }))],
          },
          select: { id: true, fullName: true, isActive: true },
        })
      : [];
  const byId = new Map<number, MentionUser>(rows.map((r) => [r.id, r]));
  const byName = new Map<string, MentionUser[]>();
  for (const r of rows) byName.set(r.fullName.toLowerCase(), [...(byName.get(r.fullName.toLowerCase()) ?? []), r]);
  return { byId: (id) => byId.get(id), byName: (name) => byName.get(name.toLowerCase()) ?? [] };
}

/** User groups come from the realm directory's cache; system groups are not mentionable. */
async function mentionGroups(app: App, realm: RealmInfo, content: string): Promise<MarkdownContext['groups']> {
  if (!USER_GROUP_MENTIONS_RE().test(content)) return { byName: () => undefined };
  const byName = new Map<string, { id: number; name: string; deactivated: boolean }>();
  for (const g of (await app.realms.groups(realm.id)).values()) {
    if (g.name && !g.isSystemGroup) byName.set(g.name.toLowerCase(), { id: g.id, name: g.name, deactivated: g.deactivated });
  }
  return { byName: (name) => byName.get(name.toLowerCase()) };
}

async function linkedChannels(app: App, realm: RealmInfo, names: string[]): Promise<MarkdownContext['channels']> {
  const rows = names.length ? await app.prisma.channel.findMany({ where: { realmId: realm.id, name: { in: names } }, select: { id: true, name: true } }) : [];
  return { byName: (name) => rows.find((c) => c.name === name), byId: (id) => rows.find((c) => c.id === id) };
}

async function realmEmoji(app: App, realm: RealmInfo, names: string[]): Promise<MarkdownContext['realmEmoji']> {
  const all = names.length ? await realmEmojiByName(app, realm.id) : undefined;
  const rows = [...new Set(names)].flatMap((name) => all?.get(name) ?? []);
  // The newest active emoji of a name wins over deactivated ones, as in Zulip's name lookup.
  const byName = new Map(rows.map((e) => [e.name, e]));
  for (const e of rows) if (!e.deactivated) byName.set(e.name, e);
  return {
    byName(name) {
      const e = byName.get(name);
      return e && { id: String(e.id), name: e.name, url: emojiSourceUrl(realm.id, e.fileName), deactivated: e.deactivated };
    },
  };
}

/** Who the content is rendered for: a message's sender, whose settings apply (Zulip's render_message_markdown). */
export interface RenderOptions {
  sender?: { settings: unknown };
  /** Descriptions and profile fields: no inline previews (Zulip's no_previews). */
  noPreviews?: boolean;
}

const UPLOAD_PATH_RE = /\/user_uploads\/(\d+\/[/\p{L}\p{N}_.-]+)/gu;

/** Audio types browsers play (Zulip's AUDIO_INLINE_MIME_TYPES). */
const AUDIO_INLINE_MIME_TYPES = new Set(['audio/aac', 'audio/flac', 'audio/mp4', 'audio/mpeg', 'audio/wav', 'audio/webm']);

/** The uploaded images and audio the content may link to (Zulip's get_user_upload_previews). */
async function uploadImages(app: App, realm: RealmInfo, content: string): Promise<MarkdownContext['uploads']> {
  const pathIds = [...new Set(Array.from(content.matchAll(UPLOAD_PATH_RE), (m) => m[1]!))];
  if (pathIds.length === 0) return undefined;
  const where = { realmId: realm.id, pathId: { in: pathIds } };
  const [rows, files] = await Promise.all([
    app.prisma.imageAttachment.findMany({ where }),
    app.prisma.attachment.findMany({ where, select: { pathId: true, contentType: true } }),
  ]);
  const audio = new Set(files.filter((f) => AUDIO_INLINE_MIME_TYPES.has(bareContentType(f.contentType))).map((f) => f.pathId));
  const images = new Map<string, UploadImage>();
  for (const row of rows) {
    const made = row.thumbnailMetadata as unknown as StoredThumbnail[];
    // For a type browsers cannot show, the largest thumbnail stands in for the original.
    const largest = made.reduce<StoredThumbnail | undefined>((best, t) => (!best || t.width * t.height > best.width * best.height ? t : best), undefined);
    const transcoded = row.contentType && !servesInline(row.contentType) && largest ? formatName(storedFormat(largest)) : undefined;
    images.set(row.pathId, {
      width: row.originalWidthPx,
      height: row.originalHeightPx,
      contentType: row.contentType,
      thumbnailUrl: made.length ? `/user_uploads/thumbnail/${row.pathId}/${formatName(defaultFormat(row.frames))}` : null,
      animated: row.frames > 1,
      ...(transcoded ? { transcodedImage: transcoded } : {}),
    });
  }
  return { imageByPathId: (pathId) => images.get(pathId), isAudio: (pathId) => audio.has(pathId) };
}

export async function renderContext(app: App, realm: RealmInfo, content: string, options: RenderOptions = {}): Promise<MarkdownContext> {
  const names = scanNames(content);
  const [users, groups, channels, emoji, linkifiers, uploads] = await Promise.all([
    mentionUsers(app, realm, names),
    mentionGroups(app, realm, content),
    linkedChannels(app, realm, names.channelNames),
    realmEmoji(app, realm, names.emojiNames),
    compiledLinkifiers(app, realm.id),
    uploadImages(app, realm, content),
  ]);
  const settings = realm.settings;
  const { CAMO_URI, CAMO_KEY } = app.config;
  return {
    realmUrl: app.realms.url(realm),
    users,
    groups,
    channels,
    realmEmoji: emoji,
    linkifiers,
    defaultCodeBlockLanguage: settings.default_code_block_language || undefined,
    translateEmoticons: (options.sender?.settings as { translate_emoticons?: unknown } | null)?.translate_emoticons === true,
    inlineImagePreview: settings.inline_image_preview && !options.noPreviews,
    ...(uploads ? { uploads } : {}),
    ...(CAMO_URI ? { camo: { uri: CAMO_URI, key: CAMO_KEY } } : {}),
  };
}

/** Markdown to HTML with the organization's users, groups, channels, emoji and linkifiers. */
export async function renderWithRealm(app: App, realm: RealmInfo, content: string, options: RenderOptions = {}): Promise<RenderResult> {
  const ctx = await renderContext(app, realm, content, options);
  try {
    return renderMarkdown(content, ctx);
  } catch (error) {
    // Zulip's answer when a rendering is refused (too large).
    if (error instanceof MarkdownRenderingError) throw badRequest('Unable to render message');
    throw error;
  }
}

const IMAGE_RE = /\.(png|jpe?g|gif|webp|bmp|svg|avif)$/i;

/** Whether any link of a rendered message points at an image, for `has:image`. */
export function linksImage(links: readonly string[]): boolean {
  return links.some((l) => IMAGE_RE.test(l.split(/[?#]/)[0]!));
}

/** A channel's or folder's description as Zulip renders it: Markdown without link or image previews. */
export async function renderDescription(app: App, realm: RealmInfo, text: string): Promise<string> {
  return text === '' ? '' : (await renderWithRealm(app, realm, text, { noPreviews: true })).html;
}
