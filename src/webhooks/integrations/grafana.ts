// Grafana (Zulip's grafana integration): Grafana Alerting's notifications (a message per alert,
// under "[alert name]", with its times, labels, values, annotations and links), and the legacy
// dashboard alerts of Grafana 7 (under the alert's title, with the rule's link, its evaluated
// metrics and image).
import { globalTime, parsePayload, type Integration, type WebhookMessage } from '../integration.ts';

interface Alert {
  status: string;
  fingerprint: string;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  values?: Record<string, unknown> | null;
  valueString?: string;
  startsAt: string;
  endsAt: string;
  generatorURL?: string;
  silenceURL?: string;
  imageURL?: string;
}

interface Payload {
  alerts?: Alert[];
  title?: string;
  message?: string;
  ruleName?: string;
  ruleUrl?: string;
  state?: string;
  imageUrl?: string;
  evalMatches?: { metric: string; value: number | null }[] | null;
}

// Grafana's "no end yet".
const NO_END = '0001-01-01T00:00:00Z';
const STATE_ICONS: Record<string, string> = { alerting: ':alert:', ok: ':squared_ok:' };
const list = (values: Record<string, unknown>) =>
  Object.entries(values)
    .map(([k, v]) => `- ${k}: ${v}\n`)
    .join('');

/** Grafana Alerting (8 and later): a message per alert, under its name (or fingerprint). */
function alerting(alert: Alert): WebhookMessage {
  const name = alert.labels.alertname;
  let body = `${alert.status === 'firing' ? ':alert:' : ':checkbox:'} **${alert.status.toUpperCase()}**\n\n`;
  if (name) body += `**${name}**\n\n`;
  body += `This alert was fired at ${globalTime(alert.startsAt)}.`;
  if (alert.endsAt !== NO_END) body += `\n\nThis alert was resolved at ${globalTime(alert.endsAt)}.`;
  if (Object.keys(alert.labels).length) body += `\n\nLabels:\n${list(alert.labels)}\n`;
  if (alert.values && Object.keys(alert.values).length) body += `Values:\n${list(alert.values)}\n`;
  else if (alert.valueString) body += `Values:\n${alert.valueString}\n\n`;
  if (alert.annotations && Object.keys(alert.annotations).length) body += `Annotations:\n${list(alert.annotations)}`;
  if (alert.generatorURL) body += `\n[Generator](${alert.generatorURL})`;
  if (alert.silenceURL) body += `\n[Silence](${alert.silenceURL})`;
  if (alert.imageURL) body += `\n[Image](${alert.imageURL})`;
  return { topic: `[${name || alert.fingerprint}]`, content: body, event: alert.status };
}

function legacy(p: Payload) {
  const state = p.state!;
  const matches = (p.evalMatches ?? []).map((m) => `**${m.metric}:** ${m.value === null ? 'None' : m.value}\n`).join('');
  const message = p.message !== undefined ? `${p.message}\n\n` : '';
  let body = `${STATE_ICONS[state] ?? ':info:'} **${state.toUpperCase()}**\n\n[${p.ruleName}](${p.ruleUrl})\n\n${message}${matches}`;
  if (p.imageUrl !== undefined) body += `\n[Click to view visualization](${p.imageUrl})`;
  return { topic: p.title!, content: body.trim(), event: state };
}

export const grafana: Integration = {
  name: 'grafana',
  displayName: 'Grafana',
  client: 'Grafana',
  allEventTypes: ['ok', 'pending', 'alerting', 'paused', 'firing', 'resolved'],
  setup:
    'In Grafana, Alerting → Contact points → Add contact point, integration "Webhook": paste the URL, then use the contact point in a notification policy.',
  message(request) {
    const payload = parsePayload(request.body) as Payload;
    return payload.alerts ? payload.alerts.map(alerting) : legacy(payload);
  },
};
