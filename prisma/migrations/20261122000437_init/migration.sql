-- CreateTable
CREATE TABLE "Realm" (
    "id" SERIAL NOT NULL,
    "subdomain" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "dateCreated" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deactivated" BOOLEAN NOT NULL DEFAULT false,
    "settings" JSONB NOT NULL DEFAULT '{}',
    "permissions" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "Realm_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "User" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "deliveryEmail" TEXT NOT NULL,
    "fullName" TEXT NOT NULL,
    "role" INTEGER NOT NULL DEFAULT 400,
    "isActive" BOOLEAN NOT NULL DEFAULT true,
    "isBot" BOOLEAN NOT NULL DEFAULT false,
    "botType" INTEGER,
    "botOwnerId" INTEGER,
    "isImportedStub" BOOLEAN NOT NULL DEFAULT false,
    "dateJoined" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "apiKey" TEXT NOT NULL,
    "passwordHash" TEXT,
    "timezone" TEXT NOT NULL DEFAULT '',
    "avatarSource" TEXT NOT NULL DEFAULT 'G',
    "avatarVersion" INTEGER NOT NULL DEFAULT 1,
    "settings" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "User_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "UserGroup" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "name" TEXT,
    "description" TEXT NOT NULL DEFAULT '',
    "isSystemGroup" BOOLEAN NOT NULL DEFAULT false,
    "deactivated" BOOLEAN NOT NULL DEFAULT false,
    "dateCreated" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "creatorId" INTEGER,
    "permissions" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "UserGroup_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "UserGroupMember" (
    "groupId" INTEGER NOT NULL,
    "userId" INTEGER NOT NULL,

    CONSTRAINT "UserGroupMember_pkey" PRIMARY KEY ("groupId","userId")
);

-- CreateTable
CREATE TABLE "UserGroupSubgroup" (
    "supergroupId" INTEGER NOT NULL,
    "subgroupId" INTEGER NOT NULL,

    CONSTRAINT "UserGroupSubgroup_pkey" PRIMARY KEY ("supergroupId","subgroupId")
);

-- CreateTable
CREATE TABLE "CustomProfileField" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "hint" TEXT NOT NULL DEFAULT '',
    "fieldType" INTEGER NOT NULL,
    "fieldData" TEXT NOT NULL DEFAULT '',
    "order" INTEGER NOT NULL DEFAULT 0,
    "displayInProfileSummary" BOOLEAN NOT NULL DEFAULT false,
    "required" BOOLEAN NOT NULL DEFAULT false,
    "editableByUser" BOOLEAN NOT NULL DEFAULT true,

    CONSTRAINT "CustomProfileField_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CustomProfileFieldValue" (
    "fieldId" INTEGER NOT NULL,
    "userId" INTEGER NOT NULL,
    "value" TEXT NOT NULL,
    "renderedValue" TEXT,

    CONSTRAINT "CustomProfileFieldValue_pkey" PRIMARY KEY ("fieldId","userId")
);

-- CreateTable
CREATE TABLE "ChannelFolder" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "renderedDescription" TEXT NOT NULL DEFAULT '',
    "order" INTEGER NOT NULL DEFAULT 0,
    "dateCreated" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "creatorId" INTEGER,
    "isArchived" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "ChannelFolder_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Channel" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "renderedDescription" TEXT NOT NULL DEFAULT '',
    "inviteOnly" BOOLEAN NOT NULL DEFAULT false,
    "isWebPublic" BOOLEAN NOT NULL DEFAULT false,
    "historyPublicToSubscribers" BOOLEAN NOT NULL DEFAULT true,
    "messageRetentionDays" INTEGER,
    "topicsPolicy" TEXT NOT NULL DEFAULT 'inherit',
    "dateCreated" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "creatorId" INTEGER,
    "folderId" INTEGER,
    "isArchived" BOOLEAN NOT NULL DEFAULT false,
    "firstMessageId" INTEGER,
    "permissions" JSONB NOT NULL DEFAULT '{}',

    CONSTRAINT "Channel_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Subscription" (
    "id" SERIAL NOT NULL,
    "userId" INTEGER NOT NULL,
    "channelId" INTEGER NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "color" TEXT NOT NULL DEFAULT '#c2c2c2',
    "isMuted" BOOLEAN NOT NULL DEFAULT false,
    "pinToTop" BOOLEAN NOT NULL DEFAULT false,
    "desktopNotifications" BOOLEAN,
    "audibleNotifications" BOOLEAN,
    "pushNotifications" BOOLEAN,
    "emailNotifications" BOOLEAN,
    "wildcardMentionsNotify" BOOLEAN,
    "dateCreated" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Subscription_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "DirectMessageGroup" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "memberKey" TEXT NOT NULL,

    CONSTRAINT "DirectMessageGroup_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Message" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "senderId" INTEGER NOT NULL,
    "channelId" INTEGER,
    "directGroupId" INTEGER,
    "topic" TEXT NOT NULL DEFAULT '',
    "content" TEXT NOT NULL,
    "renderedContent" TEXT NOT NULL,
    "renderingVersion" INTEGER NOT NULL DEFAULT 1,
    "dateSent" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "sendingClient" TEXT NOT NULL DEFAULT 'API',
    "lastEditTime" TIMESTAMP(3),
    "lastMovedTime" TIMESTAMP(3),
    "editHistory" JSONB,
    "isMeMessage" BOOLEAN NOT NULL DEFAULT false,
    "hasAttachment" BOOLEAN NOT NULL DEFAULT false,
    "hasImage" BOOLEAN NOT NULL DEFAULT false,
    "hasLink" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "Message_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "UserMessage" (
    "userId" INTEGER NOT NULL,
    "messageId" INTEGER NOT NULL,
    "flags" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "UserMessage_pkey" PRIMARY KEY ("userId","messageId")
);

-- CreateTable
CREATE TABLE "Reaction" (
    "id" SERIAL NOT NULL,
    "messageId" INTEGER NOT NULL,
    "userId" INTEGER NOT NULL,
    "emojiName" TEXT NOT NULL,
    "emojiCode" TEXT NOT NULL,
    "reactionType" TEXT NOT NULL,

    CONSTRAINT "Reaction_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "RealmEmoji" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "fileName" TEXT NOT NULL,
    "authorId" INTEGER,
    "deactivated" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "RealmEmoji_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Linkifier" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "pattern" TEXT NOT NULL,
    "urlTemplate" TEXT NOT NULL,
    "exampleInput" TEXT,
    "reverseTemplate" TEXT,
    "alternativeUrlTemplates" JSONB NOT NULL DEFAULT '[]',
    "order" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "Linkifier_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Attachment" (
    "id" SERIAL NOT NULL,
    "realmId" INTEGER NOT NULL,
    "ownerId" INTEGER NOT NULL,
    "pathId" TEXT NOT NULL,
    "fileName" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "contentType" TEXT NOT NULL DEFAULT 'application/octet-stream',
    "createTime" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Attachment_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AttachmentMessage" (
    "attachmentId" INTEGER NOT NULL,
    "messageId" INTEGER NOT NULL,

    CONSTRAINT "AttachmentMessage_pkey" PRIMARY KEY ("attachmentId","messageId")
);

-- CreateTable
CREATE TABLE "Draft" (
    "id" SERIAL NOT NULL,
    "userId" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "to" JSONB NOT NULL DEFAULT '[]',
    "topic" TEXT NOT NULL DEFAULT '',
    "content" TEXT NOT NULL,
    "lastEditTime" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Draft_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SavedSnippet" (
    "id" SERIAL NOT NULL,
    "userId" INTEGER NOT NULL,
    "title" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "dateCreated" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SavedSnippet_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "NavigationView" (
    "id" SERIAL NOT NULL,
    "userId" INTEGER NOT NULL,
    "fragment" TEXT NOT NULL,
    "isPinned" BOOLEAN NOT NULL,
    "name" TEXT,

    CONSTRAINT "NavigationView_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Presence" (
    "userId" INTEGER NOT NULL,
    "lastActiveTime" TIMESTAMP(3),
    "lastConnectedTime" TIMESTAMP(3),
    "lastUpdateId" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "Presence_pkey" PRIMARY KEY ("userId")
);

-- CreateTable
CREATE TABLE "UserTopic" (
    "id" SERIAL NOT NULL,
    "userId" INTEGER NOT NULL,
    "channelId" INTEGER NOT NULL,
    "topic" TEXT NOT NULL,
    "visibility" INTEGER NOT NULL,
    "lastUpdated" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "UserTopic_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SavedEventQueue" (
    "id" TEXT NOT NULL,
    "userId" INTEGER NOT NULL,
    "state" JSONB NOT NULL,

    CONSTRAINT "SavedEventQueue_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Realm_subdomain_key" ON "Realm"("subdomain");

-- CreateIndex
CREATE UNIQUE INDEX "User_apiKey_key" ON "User"("apiKey");

-- CreateIndex
CREATE UNIQUE INDEX "User_realmId_deliveryEmail_key" ON "User"("realmId", "deliveryEmail");

-- CreateIndex
CREATE UNIQUE INDEX "UserGroup_realmId_name_key" ON "UserGroup"("realmId", "name");

-- CreateIndex
CREATE INDEX "UserGroupMember_userId_idx" ON "UserGroupMember"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "CustomProfileField_realmId_name_key" ON "CustomProfileField"("realmId", "name");

-- CreateIndex
CREATE INDEX "CustomProfileFieldValue_userId_idx" ON "CustomProfileFieldValue"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "Channel_realmId_name_key" ON "Channel"("realmId", "name");

-- CreateIndex
CREATE INDEX "Subscription_channelId_active_idx" ON "Subscription"("channelId", "active");

-- CreateIndex
CREATE UNIQUE INDEX "Subscription_userId_channelId_key" ON "Subscription"("userId", "channelId");

-- CreateIndex
CREATE UNIQUE INDEX "DirectMessageGroup_realmId_memberKey_key" ON "DirectMessageGroup"("realmId", "memberKey");

-- CreateIndex
CREATE INDEX "Message_channelId_topic_id_idx" ON "Message"("channelId", "topic", "id");

-- CreateIndex
CREATE INDEX "Message_directGroupId_id_idx" ON "Message"("directGroupId", "id");

-- CreateIndex
CREATE INDEX "Message_realmId_id_idx" ON "Message"("realmId", "id");

-- CreateIndex
CREATE INDEX "Message_senderId_id_idx" ON "Message"("senderId", "id");

-- CreateIndex
CREATE INDEX "UserMessage_messageId_idx" ON "UserMessage"("messageId");

-- CreateIndex
CREATE UNIQUE INDEX "Reaction_messageId_userId_emojiCode_reactionType_key" ON "Reaction"("messageId", "userId", "emojiCode", "reactionType");

-- CreateIndex
CREATE UNIQUE INDEX "Attachment_pathId_key" ON "Attachment"("pathId");

-- CreateIndex
CREATE INDEX "AttachmentMessage_messageId_idx" ON "AttachmentMessage"("messageId");

-- CreateIndex
CREATE INDEX "Draft_userId_idx" ON "Draft"("userId");

-- CreateIndex
CREATE INDEX "SavedSnippet_userId_idx" ON "SavedSnippet"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "NavigationView_userId_fragment_key" ON "NavigationView"("userId", "fragment");

-- CreateIndex
CREATE UNIQUE INDEX "UserTopic_userId_channelId_topic_key" ON "UserTopic"("userId", "channelId", "topic");

-- AddForeignKey
ALTER TABLE "User" ADD CONSTRAINT "User_realmId_fkey" FOREIGN KEY ("realmId") REFERENCES "Realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UserGroup" ADD CONSTRAINT "UserGroup_realmId_fkey" FOREIGN KEY ("realmId") REFERENCES "Realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UserGroupMember" ADD CONSTRAINT "UserGroupMember_groupId_fkey" FOREIGN KEY ("groupId") REFERENCES "UserGroup"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UserGroupMember" ADD CONSTRAINT "UserGroupMember_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UserGroupSubgroup" ADD CONSTRAINT "UserGroupSubgroup_supergroupId_fkey" FOREIGN KEY ("supergroupId") REFERENCES "UserGroup"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UserGroupSubgroup" ADD CONSTRAINT "UserGroupSubgroup_subgroupId_fkey" FOREIGN KEY ("subgroupId") REFERENCES "UserGroup"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CustomProfileField" ADD CONSTRAINT "CustomProfileField_realmId_fkey" FOREIGN KEY ("realmId") REFERENCES "Realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CustomProfileFieldValue" ADD CONSTRAINT "CustomProfileFieldValue_fieldId_fkey" FOREIGN KEY ("fieldId") REFERENCES "CustomProfileField"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "CustomProfileFieldValue" ADD CONSTRAINT "CustomProfileFieldValue_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ChannelFolder" ADD CONSTRAINT "ChannelFolder_realmId_fkey" FOREIGN KEY ("realmId") REFERENCES "Realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Channel" ADD CONSTRAINT "Channel_realmId_fkey" FOREIGN KEY ("realmId") REFERENCES "Realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Channel" ADD CONSTRAINT "Channel_folderId_fkey" FOREIGN KEY ("folderId") REFERENCES "ChannelFolder"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Subscription" ADD CONSTRAINT "Subscription_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Subscription" ADD CONSTRAINT "Subscription_channelId_fkey" FOREIGN KEY ("channelId") REFERENCES "Channel"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DirectMessageGroup" ADD CONSTRAINT "DirectMessageGroup_realmId_fkey" FOREIGN KEY ("realmId") REFERENCES "Realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Message" ADD CONSTRAINT "Message_realmId_fkey" FOREIGN KEY ("realmId") REFERENCES "Realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Message" ADD CONSTRAINT "Message_senderId_fkey" FOREIGN KEY ("senderId") REFERENCES "User"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Message" ADD CONSTRAINT "Message_channelId_fkey" FOREIGN KEY ("channelId") REFERENCES "Channel"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Message" ADD CONSTRAINT "Message_directGroupId_fkey" FOREIGN KEY ("directGroupId") REFERENCES "DirectMessageGroup"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UserMessage" ADD CONSTRAINT "UserMessage_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UserMessage" ADD CONSTRAINT "UserMessage_messageId_fkey" FOREIGN KEY ("messageId") REFERENCES "Message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Reaction" ADD CONSTRAINT "Reaction_messageId_fkey" FOREIGN KEY ("messageId") REFERENCES "Message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Reaction" ADD CONSTRAINT "Reaction_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "RealmEmoji" ADD CONSTRAINT "RealmEmoji_realmId_fkey" FOREIGN KEY ("realmId") REFERENCES "Realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Linkifier" ADD CONSTRAINT "Linkifier_realmId_fkey" FOREIGN KEY ("realmId") REFERENCES "Realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Attachment" ADD CONSTRAINT "Attachment_realmId_fkey" FOREIGN KEY ("realmId") REFERENCES "Realm"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Attachment" ADD CONSTRAINT "Attachment_ownerId_fkey" FOREIGN KEY ("ownerId") REFERENCES "User"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AttachmentMessage" ADD CONSTRAINT "AttachmentMessage_attachmentId_fkey" FOREIGN KEY ("attachmentId") REFERENCES "Attachment"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "AttachmentMessage" ADD CONSTRAINT "AttachmentMessage_messageId_fkey" FOREIGN KEY ("messageId") REFERENCES "Message"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Draft" ADD CONSTRAINT "Draft_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "SavedSnippet" ADD CONSTRAINT "SavedSnippet_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "NavigationView" ADD CONSTRAINT "NavigationView_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Presence" ADD CONSTRAINT "Presence_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "UserTopic" ADD CONSTRAINT "UserTopic_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
