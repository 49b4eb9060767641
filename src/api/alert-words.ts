// Alert words: GET/POST/DELETE /users/me/alert_words, each answering with the whole list.
import { z } from 'zod';
import { addAlertWords, MAX_ALERT_WORD_LENGTH, removeAlertWords } from '../actions/alert-words.ts';
import { json, maxChars } from '../http/params.ts';
import { userAlertWords } from '../queries/alert-words.ts';
import { userRoute } from './route.ts';

const path = '/api/v1/users/me/alert_words';
/** Every answer is the whole list, in the order the words were added. */
const response = z.object({ alert_words: z.array(z.string()) });

export const routes = [
  userRoute({
    method: 'GET',
    path,
    params: {},
    response,
    async handler({ app, user }) {
      return { alert_words: await userAlertWords(app, user.id) };
    },
  }),
  userRoute({
    method: 'POST',
    path,
    params: { alert_words: json(z.array(maxChars(MAX_ALERT_WORD_LENGTH))) },
    response,
    async handler({ app, realm, user, params }) {
      return { alert_words: await addAlertWords(app, realm, user, params.alert_words) };
    },
  }),
  userRoute({
    method: 'DELETE',
    path,
    params: { alert_words: json(z.array(z.string())) },
    response,
    async handler({ app, realm, user, params }) {
      return { alert_words: await removeAlertWords(app, realm, user, params.alert_words) };
    },
  }),
];
