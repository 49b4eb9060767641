// Data exports of an organization (Zulip's RealmExport): what they hold and where they stand.

/** Zulip's export_type: public data only, or also the private data of members who consented. */
export const EXPORT_TYPE = { PUBLIC: 1, FULL_WITH_CONSENT: 2 } as const;
export type ExportType = (typeof EXPORT_TYPE)[keyof typeof EXPORT_TYPE];
export const EXPORT_TYPES: readonly number[] = Object.values(EXPORT_TYPE);

/** Zulip's RealmExport status values. */
export const EXPORT_STATUS = { REQUESTED: 1, STARTED: 2, SUCCEEDED: 3, FAILED: 4, DELETED: 5 } as const;
