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
