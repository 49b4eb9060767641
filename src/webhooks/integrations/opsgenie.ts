// Opsgenie (Zulip's opsgenie integration): every alert action under the integration's name as
// topic, with what the action carries (note, recipient, tags, team, owner, escalation) as a list;
// `&eu_region=true` links to Opsgenie's EU site.
import { parsePayload, type Integration } from '../integration.ts';

const EVENTS = [
  'AddTeam',
  'UnAcknowledge',
  'AddNote',
  'TestAction',
  'Close',
  'Escalate',
  'AddRecipient',
  'RemoveTags',
  'Acknowledge',
  'Delete',
  'AddTags',
  'TakeOwnership',
  'Create',
  'AssignOwnership',
];

// The alert's fields a message lists, in Zulip's order, with their labels.
const FIELDS: [string, string][] = [
  ['note', 'Note'],
  ['recipient', 'Recipient'],
  ['addedTags', 'Tags added'],
  ['team', 'Team added'],
  ['owner', 'Assigned owner'],
  ['removedTags', 'Tags removed'],
  ['message', 'Message'],
  ['tags', 'Tags'],
  ['escalationName', 'Escalation'],
];

interface Payload {
  action: string;
  integrationName: string;
  escalationName?: string;
  alert: Record<string, unknown> & { alertId: string; tags?: string[] };
}

export const opsgenie: Integration = {
  name: 'opsgenie',
  displayName: 'Opsgenie',
  client: 'Opsgenie',
  allEventTypes: EVENTS,
  setup: 'In Opsgenie, Settings → Integrations → Add integration → Webhook: paste the URL (`&eu_region=true` for the EU site) and save.',
  message(request, query) {
    const p = parsePayload(request.body) as unknown as Payload;
    const tags = (p.alert.tags ?? []).map((t) => `\`${t}\``).join(', ');
    let details = '';
    for (const [field, label] of FIELDS) {
      let value: unknown;
      if (field === 'tags') value = tags || undefined;
      else if (field === 'escalationName') value = p.escalationName;
      else value = p.alert[field];
      if (value !== undefined) details += `* **${label}**: ${value}\n`;
    }
    const region = query.get('eu_region') === 'true' ? 'eu.' : '';
    const link = `[Opsgenie alert for ${p.integrationName}](https://app.${region}opsgenie.com/alert/V2#/show/${p.alert.alertId})`;
    return { topic: p.integrationName, content: `${link}:\n* **Type**: ${p.action}\n${details}`.trim(), event: p.action };
  },
};
