// Linkifiers: GET /realm/linkifiers, POST /realm/filters, PATCH and DELETE /realm/filters/{id},
// PATCH /realm/linkifiers (reorder). Writes are for administrators (checked in the actions).
import { z } from 'zod';
import { addLinkifier, removeLinkifier, reorderLinkifiers, updateLinkifier } from '../actions/linkifiers.ts';
import { intList, json, str } from '../http/params.ts';
import { userRoute } from './route.ts';
import { realmLinkifiers } from '../queries/linkifiers.ts';
import { pathId } from './channels.ts';
import { linkifier } from '../events/schemas.ts';

const linkifierParams = {
  pattern: str(),
  url_template: str(),
  example_input: str().optional(),
  reverse_template: str().optional(),
  alternative_url_templates: json(z.array(z.string())).optional(),
};

/** An empty string clears example_input or reverse_template (Zulip FL471). */
const nullIfEmpty = (value: string | undefined) => (value === '' ? null : value);

const filterId = (segment: string | undefined) => pathId(segment, 'Linkifier not found.');

export const routes = [
  userRoute({
    method: 'GET',
    path: '/api/v1/realm/linkifiers',
    params: {},
    response: z.object({ linkifiers: z.array(linkifier) }),
    async handler({ app, realm }) {
      return { linkifiers: await realmLinkifiers(app, realm.id) };
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/realm/linkifiers',
    params: { ordered_linkifier_ids: intList() },
    response: z.object({}),
    async handler({ app, realm, user, params }) {
      await reorderLinkifiers(app, realm, user, params.ordered_linkifier_ids);
      return {};
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/realm/filters',
    params: linkifierParams,
    response: z.object({ id: z.number().int() }),
    async handler({ app, realm, user, params: p }) {
      const id = await addLinkifier(app, realm, user, {
        pattern: p.pattern,
        urlTemplate: p.url_template,
        exampleInput: nullIfEmpty(p.example_input) ?? null,
        reverseTemplate: nullIfEmpty(p.reverse_template) ?? null,
        alternativeUrlTemplates: p.alternative_url_templates ?? [],
      });
      return { id };
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/realm/filters/:filter_id',
    params: linkifierParams,
    response: z.object({}),
    async handler({ app, realm, user, params: p, path }) {
      await updateLinkifier(app, realm, user, filterId(path.filter_id), {
        pattern: p.pattern,
        urlTemplate: p.url_template,
        exampleInput: nullIfEmpty(p.example_input),
        reverseTemplate: nullIfEmpty(p.reverse_template),
        alternativeUrlTemplates: p.alternative_url_templates,
      });
      return {};
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/realm/filters/:filter_id',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await removeLinkifier(app, realm, user, filterId(path.filter_id));
      return {};
    },
  }),
];
