// Saved snippets: GET/POST /saved_snippets, PATCH/DELETE /saved_snippets/{id} (spec 4.14).
import { z } from 'zod';
import { createSnippet, deleteSnippet, editSnippet, snippetNotFound } from '../actions/saved-snippets.ts';
import { MAX_MESSAGE_LENGTH } from '../domain/channel-settings.ts';
import { pathId, str } from '../http/params.ts';
import { userRoute } from './route.ts';
import { listSnippets } from '../queries/drafts.ts';
import { snippet } from '../events/schemas.ts';

export const MAX_SNIPPET_TITLE_LENGTH = 60;

/** Stripped, then neither blank nor longer than `max` (Zulip's StringConstraints). */
const text = (name: string, max: number) => str(z.string().trim().min(1, `${name} cannot be blank`).max(max));
const title = text('title', MAX_SNIPPET_TITLE_LENGTH);
const content = text('content', MAX_MESSAGE_LENGTH);

export const routes = [
  userRoute({
    method: 'GET',
    path: '/api/v1/saved_snippets',
    params: {},
    response: z.object({ saved_snippets: z.array(snippet) }),
    async handler({ app, user }) {
      return { saved_snippets: await listSnippets(app, user.id) };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/saved_snippets',
    params: { title, content },
    response: z.object({ saved_snippet_id: z.number().int() }),
    async handler({ app, realm, user, params }) {
      return { saved_snippet_id: await createSnippet(app, realm, user, params.title, params.content) };
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/saved_snippets/:saved_snippet_id',
    params: { title: title.optional(), content: content.optional() },
    response: z.object({}),
    async handler({ app, realm, user, params, path }) {
      const id = pathId(path.saved_snippet_id, snippetNotFound);
      // Nothing to change: no write and no event, as in Zulip.
      if (params.title === undefined && params.content === undefined) return {};
      await editSnippet(app, realm, user, id, { title: params.title, content: params.content });
      return {};
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/saved_snippets/:saved_snippet_id',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await deleteSnippet(app, realm, user, pathId(path.saved_snippet_id, snippetNotFound));
      return {};
    },
  }),
];
