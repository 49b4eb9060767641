// Prisma's `equals` with `mode: 'insensitive'` is an ILIKE with the value as its pattern, so a `_`
// or `%` in a topic, name or address would match any character(s). Escaped, it is only equality
// ignoring case.
export const equalsIgnoringCase = (value: string) => ({ equals: value.replace(/[\\%_]/g, '\\$&'), mode: 'insensitive' as const });
