// Zulip's bot types and outgoing-webhook interfaces, as the API numbers them.
export const BOT_TYPES = { GENERIC: 1, INCOMING_WEBHOOK: 2, OUTGOING_WEBHOOK: 3, EMBEDDED: 4 } as const;

/** How an outgoing webhook's requests are made: Zulip's own JSON, or Slack's form fields. */
export const INTERFACES = { GENERIC: 1, SLACK: 2 } as const;
