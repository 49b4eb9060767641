// Zulip's generic JSON integration: any JSON object, shown as a code block of itself under the
// topic "JSON", indented and with non-ASCII characters escaped as Python's json.dumps writes it.
import { parsePayload, type Integration } from '../integration.ts';

const asPythonWritesIt = (payload: unknown) =>
  JSON.stringify(payload, null, 2).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

export const json: Integration = {
  name: 'json',
  displayName: 'JSON formatter',
  client: 'JSON',
  setup: 'Any service that can POST a JSON object to a URL: paste the URL.',
  message(request) {
    return { topic: 'JSON', content: `\`\`\`json\n${asPythonWritesIt(parsePayload(request.body))}\n\`\`\`` };
  },
};
