import type { CompiledLinkifiers } from './linkifiers.ts';

export interface MentionUser {
  id: number;
  fullName: string;
  isActive: boolean;
}

export interface MentionGroup {
  id: number;
  name: string;
  /** Mentions of a deactivated group render silently. */
  deactivated?: boolean;
}

export interface MentionChannel {
  id: number;
  name: string;
}

export interface RealmEmojiInfo {
  id: string;
  name: string;
  url: string;
  deactivated: boolean;
}

/** An uploaded image a message links to (Zulip's ImageAttachment row). */
export interface UploadImage {
  width: number;
  height: number;
  contentType: string | null;
  /** The default thumbnail's URL (`/user_uploads/thumbnail/<path>/840x560.webp`); null while it is being made. */
  thumbnailUrl: string | null;
  animated: boolean;
  /** For types browsers cannot show, the large transcoded thumbnail's format (`4032x3024.webp`). */
  transcodedImage?: string;
}

/** Everything the renderer may look up; the caller preloads it, so rendering stays synchronous. */
export interface MarkdownContext {
  /** e.g. "http://localhost:9991": links to it become relative, and uploads on it are collected. */
  realmUrl: string;
  users: {
    byId(id: number): MentionUser | undefined;
    /** Case-insensitive full-name lookup; may return several users. */
    byName(fullName: string): MentionUser[];
  };
  groups: { byName(name: string): MentionGroup | undefined };
  channels: {
    byName(name: string): MentionChannel | undefined;
    byId(id: number): MentionChannel | undefined;
    /** The oldest message id in a topic the sender can see, for `/with/` topic links. */
    topicMessageId?(channelId: number, topic: string): number | undefined;
  };
  realmEmoji: { byName(name: string): RealmEmojiInfo | undefined };
  linkifiers: CompiledLinkifiers;
  /** Realm setting `default_code_block_language`. */
  defaultCodeBlockLanguage?: string;
  /** The sender's `translate_emoticons` setting. */
  translateEmoticons?: boolean;
  /** Realm setting `inline_image_preview` (previews of images, videos and YouTube links); on when absent. */
  inlineImagePreview?: boolean;
  /** Uploads by path id (after `/user_uploads/`): images (others are absent), and which are audio. */
  uploads?: { imageByPathId(pathId: string): UploadImage | undefined; isAudio(pathId: string): boolean };
  /** External images and videos are shown through this Camo proxy, as Zulip's CAMO_URI and CAMO_KEY. */
  camo?: { uri: string; key: string };
}

export interface RenderResult {
  html: string;
  mentionedUserIds: Set<number>;
  mentionedGroupIds: Set<number>;
  /** @**all**, @**everyone**, @**channel**, @**stream** (not silent). */
  wildcardMention: boolean;
  /** @**topic** (not silent). */
  topicWildcardMention: boolean;
  /** Paths after /user_uploads/ of links to this realm's uploads. */
  uploadPathIds: string[];
  /** Every link href in the rendered message, in document order. */
  links: string[];
  isMeMessage: boolean;
  /** The source after the line preprocessors (fenced code stashed away): where alert words are looked for. */
  alertWordText: string;
}
