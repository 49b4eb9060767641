// Prisma's `equals` with `mode: 'insensitive'` is an ILIKE with the value as its pattern, so a `_`
// or `%` in a topic, name or address would match any character(s). Escaped, it is only equality
// ignoring case.
/** A value as a LIKE pattern that matches only itself. */
export const likePattern = (value: string) => value.replace(/[\\%_]/g, '\\$&');
export const equalsIgnoringCase = (value: string) => ({ equals: likePattern(value), mode: 'insensitive' as const });
