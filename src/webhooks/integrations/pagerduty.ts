// PagerDuty (Zulip's pagerduty integration): incidents triggered, acknowledged, resolved and
// (re)assigned, from PagerDuty's generic webhooks v3 (one `event`) and the older v1 and v2 (a list
// of `messages`), each under the topic "Incident <number>" (v3: "Incident <title> (#<number>)").
import { parsePayload, unsupportedEvent, type Integration, type WebhookMessage } from '../integration.ts';

const V1_ACTIONS: Record<string, string> = {
  'incident.trigger': 'triggered',
  'incident.acknowledge': 'acknowledged',
  'incident.unacknowledge': 'unacknowledged',
  'incident.resolve': 'resolved',
  'incident.assign': 'assigned',
  'incident.escalate': 'escalated',
  'incident.delegate': 'delineated',
};
const V2_ACTIONS: Record<string, string> = {
  'incident.trigger': 'triggered',
  'incident.acknowledge': 'acknowledged',
  'incident.resolve': 'resolved',
  'incident.assign': 'assigned',
};
const V3_ACTIONS: Record<string, string> = {
  'incident.triggered': 'triggered',
  'incident.acknowledged': 'acknowledged',
  'incident.unacknowledged': 'unacknowledged',
  'incident.resolved': 'resolved',
  'incident.reassigned': 'reassigned',
};

/** What every version's incident comes down to. */
interface Incident {
  type: string;
  action: string;
  numTitle: string;
  url: string;
  service: string;
  serviceUrl: string;
  assignee: string;
  agent?: string;
  trigger: string;
}

const link = (name: string, url: string) => `[${name}](${url})`;
const quote = (text: string) => `\`\`\` quote\n${text}\n\`\`\``;
// v1 names people by their address's local part.
const localPart = (email: string) => email.slice(0, email.lastIndexOf('@'));

interface Ref {
  summary: string;
  html_url: string;
}

function v1(m: any): Incident {
  const i = m.data.incident;
  const summary = i.trigger_summary_data ?? {};
  return {
    type: m.type,
    action: V1_ACTIONS[m.type]!,
    numTitle: String(i.incident_number),
    url: i.html_url,
    service: i.service.name,
    serviceUrl: i.service.html_url,
    assignee: i.assigned_to_user ? link(localPart(i.assigned_to_user.email), i.assigned_to_user.html_url) : 'nobody',
    agent: i.resolved_by_user ? link(localPart(i.resolved_by_user.email), i.resolved_by_user.html_url) : undefined,
    trigger: quote([summary.subject, summary.description].filter(Boolean).join('\n')),
  };
}

function v2(m: any): Incident {
  const i = m.incident;
  const assignee: Ref | undefined = i.assignments?.[0]?.assignee;
  const agent: Ref | null | undefined = i.last_status_change_by;
  return {
    type: m.event,
    action: V2_ACTIONS[m.event]!,
    numTitle: String(i.incident_number),
    url: i.html_url,
    service: i.service.name,
    serviceUrl: i.service.html_url,
    assignee: assignee ? link(assignee.summary, assignee.html_url) : 'nobody',
    agent: agent ? link(agent.summary, agent.html_url) : undefined,
    trigger: typeof i.description === 'string' ? quote(i.description) : '',
  };
}

function v3(e: any): Incident {
  const d = e.data;
  const assignee: Ref | undefined = d.assignees?.[0];
  const agent: Ref | null | undefined = e.agent;
  return {
    type: e.event_type,
    action: V3_ACTIONS[e.event_type]!,
    numTitle: `${d.title} (#${d.number})`,
    url: d.html_url,
    service: d.service.summary,
    serviceUrl: d.service.html_url,
    assignee: assignee ? link(assignee.summary, assignee.html_url) : 'nobody',
    agent: agent ? link(agent.summary, agent.html_url) : undefined,
    trigger: '',
  };
}

function messageOf(i: Incident): WebhookMessage {
  const incident = `Incident ${link(i.numTitle, i.url)}`;
  let head: string;
  if (/^incident\.(trigger|unacknowledge)/.test(i.type)) head = `${incident} ${i.action} by ${link(i.service, i.serviceUrl)} (assigned to ${i.assignee}).`;
  else if (i.type.startsWith('incident.resolve')) head = i.agent ? `${incident} resolved by ${i.agent}.` : `${incident} resolved.`;
  else if (i.type === 'incident.assign' || i.type === 'incident.reassigned') head = `${incident} ${i.action} to ${i.assignee}.`;
  else head = `${incident} ${i.action} by ${i.assignee}.`;
  return { topic: `Incident ${i.numTitle}`, content: `${head}\n\n${i.trigger}`.trim(), event: i.action };
}

export const pagerduty: Integration = {
  name: 'pagerduty',
  displayName: 'PagerDuty',
  client: 'PagerDuty',
  allEventTypes: ['resolved', 'assigned', 'unacknowledged', 'acknowledged', 'triggered', 'reassigned'],
  setup: 'In PagerDuty, Integrations → Generic Webhooks (v3) → New Webhook: paste the URL, pick the scope and the events to send.',
  message(request) {
    const payload = parsePayload(request.body) as { messages?: any[]; event?: any };
    if (payload.messages?.length) {
      const incidents: Incident[] = [];
      for (const m of payload.messages) {
        const type = m.type ?? m.event;
        const known = m.type !== undefined ? V1_ACTIONS : V2_ACTIONS;
        if (!(type in known)) throw unsupportedEvent('PagerDuty', String(type));
        incidents.push(m.type !== undefined ? v1(m) : v2(m));
      }
      return incidents.map(messageOf);
    }
    if (payload.event === undefined) return null;
    if (!(payload.event.event_type in V3_ACTIONS)) throw unsupportedEvent('PagerDuty', String(payload.event.event_type));
    return messageOf(v3(payload.event));
  },
};
