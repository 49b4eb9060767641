// Drafts: GET/POST /drafts, PATCH/DELETE /drafts/{id} (spec 4.9).
import { z } from 'zod';
import { checkDraftsEnabled, createDrafts, deleteDraft, draftNotFound, editDraft } from '../actions/drafts.ts';
import { json, pathId } from '../http/params.ts';
import { userRoute } from './route.ts';
import { listDrafts } from '../queries/drafts.ts';
import { draft } from '../events/schemas.ts';

export const routes = [
  userRoute({
    method: 'GET',
    path: '/api/v1/drafts',
    params: {},
    response: z.object({ count: z.number().int(), drafts: z.array(draft) }),
    async handler({ app, user }) {
      checkDraftsEnabled(user);
      const drafts = await listDrafts(app, user.id);
      return { count: drafts.length, drafts };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/drafts',
    // Each draft is checked by the action, which words its errors the way Zulip does.
    params: { drafts: json(z.array(z.unknown())) },
    response: z.object({ ids: z.array(z.number().int()) }),
    async handler({ app, realm, user, params }) {
      return { ids: await createDrafts(app, realm, user, params.drafts) };
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/drafts/:draft_id',
    params: { draft: json(z.unknown()) },
    response: z.object({}),
    async handler({ app, realm, user, params, path }) {
      await editDraft(app, realm, user, pathId(path.draft_id, draftNotFound), params.draft);
      return {};
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/drafts/:draft_id',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await deleteDraft(app, realm, user, pathId(path.draft_id, draftNotFound));
      return {};
    },
  }),
];
