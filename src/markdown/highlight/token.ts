// The unit every lexer produces, shared by the table-driven lexers (index.ts) and the hand-written ones (json.ts).

/** A token: its CSS class ('' for plain text) and its text. */
export type Token = [cls: string, value: string];
