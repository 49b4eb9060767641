// The Zulip API level this server implements (spec section 9).
export const FEATURE_LEVEL = 491;
export const ZULIP_VERSION = '11.0';
export const ZULIP_MERGE_BASE = '11.0';
/** Changes at every start, so clients can tell a restarted server (register and `restart` events). */
export const SERVER_GENERATION = Math.floor(Date.now() / 1000);
