// The match_content and match_subject of search results (Zulip's get_search_fields): the rendered
// content and the HTML-escaped topic with every word the search matched wrapped in
// <span class="highlight">. PostgreSQL's text search finds the words as the search did (stemmed,
// stop words left out, the text between tags only), as Zulip's ts_match_locs_array does.
import type { App } from '../app.ts';
import { rawQuery } from '../db/transaction.ts';
import { djangoEscape } from '../markdown/tex.ts';
import { CANONICAL_OPERATORS, SEARCH_CONFIG, type NarrowTerm } from './narrow.ts';

const HEADLINE_OPTIONS = 'HighlightAll=TRUE, StartSel="<span class=""highlight"">", StopSel="</span>"';

export interface SearchFields {
  match_content: string;
  match_subject: string;
}

/** The operands of the narrow's search terms (negated ones match nothing to show); null when the narrow is no search. */
export function searchOperandsOf(narrow: readonly NarrowTerm[]): string[] | null {
  const terms = narrow.filter((t) => (CANONICAL_OPERATORS[t.operator] ?? t.operator) === 'search');
  if (terms.length === 0) return null;
  return terms.filter((t) => !t.negated).map((t) => String(t.operand));
}

const SEARCH_FIELDS = `SELECT m.id, ts_headline('${SEARCH_CONFIG}', m."renderedContent", q.query, $4) AS match_content,
       ts_headline('${SEARCH_CONFIG}', t.topic, q.query, $4) AS match_subject
  FROM unnest($1::int[], $2::text[]) AS t(id, topic) JOIN "Message" m ON m.id = t.id,
       (SELECT plainto_tsquery('${SEARCH_CONFIG}', $3) AS query) q`;

/** Each message's search fields, highlighting the words of every operand. */
export async function searchFields(
  app: App,
  messages: readonly { id: number; topic: string }[],
  operands: readonly string[],
): Promise<Map<number, SearchFields>> {
  if (messages.length === 0) return new Map();
  const rows = await rawQuery<{ id: number } & SearchFields>(
    app,
    SEARCH_FIELDS,
    messages.map((m) => m.id),
    messages.map((m) => djangoEscape(m.topic)),
    operands.join(' '),
    HEADLINE_OPTIONS,
  );
  return new Map(rows.map(({ id, ...fields }) => [id, fields]));
}
