// Organization email domains: GET/POST /realm/domains, PATCH/DELETE /realm/domains/{domain}.
import { z } from 'zod';
import { addRealmDomain, changeRealmDomain, removeRealmDomain } from '../actions/realm-domains.ts';
import { bool, str } from '../http/params.ts';
import { realmDomains } from '../queries/realm-domains.ts';
import { userRoute } from './route.ts';
import { realmDomain } from '../events/schemas.ts';

export const routes = [
  userRoute({
    method: 'GET',
    path: '/api/v1/realm/domains',
    params: {},
    response: z.object({ domains: z.array(realmDomain) }),
    async handler({ app, realm }) {
      return { domains: await realmDomains(app, realm.id) };
    },
  }),
  userRoute({
    method: 'POST',
    path: '/api/v1/realm/domains',
    params: { domain: str(), allow_subdomains: bool() },
    response: z.object({ new_domain: z.tuple([z.number().int(), z.string()]).describe('The id and the name of the domain') }),
    async handler({ app, realm, user, params }) {
      return { new_domain: await addRealmDomain(app, realm, user, params.domain, params.allow_subdomains) };
    },
  }),
  userRoute({
    method: 'PATCH',
    path: '/api/v1/realm/domains/:domain',
    params: { allow_subdomains: bool() },
    response: z.object({}),
    async handler({ app, realm, user, params, path }) {
      await changeRealmDomain(app, realm, user, path.domain!, params.allow_subdomains);
      return {};
    },
  }),
  userRoute({
    method: 'DELETE',
    path: '/api/v1/realm/domains/:domain',
    params: {},
    response: z.object({}),
    async handler({ app, realm, user, path }) {
      await removeRealmDomain(app, realm, user, path.domain!);
      return {};
    },
  }),
];
