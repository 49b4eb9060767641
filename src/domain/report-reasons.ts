// Zulip's Realm.REPORT_MESSAGE_REASONS: the reasons a client may send when reporting a message, and
// how the report and the web client's dialog name them. Shared by the server and the web client.
export const REPORT_REASONS = {
  spam: 'Spam',
  harassment: 'Harassment',
  inappropriate: 'Inappropriate content',
  norms: 'Violates community norms',
  other: 'Other reason',
} as const;
export type ReportType = keyof typeof REPORT_REASONS;
