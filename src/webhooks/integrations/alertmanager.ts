// Prometheus Alertmanager (Zulip's alertmanager integration): one message per alerted thing and
// status, under a topic named by a label or annotation (`&name=`, default `instance`), each alert
// described by another (`&desc=`, default `alertname`) with a link to its source.
import { parsePayload, type Integration, type WebhookMessage } from '../integration.ts';

interface Alert {
  status: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  generatorURL: string;
}

export const alertmanager: Integration = {
  name: 'alertmanager',
  displayName: 'Prometheus Alertmanager',
  client: 'Alertmanager',
  setup:
    'In alertmanager.yml, add a receiver with `webhook_configs: [{url: "<the URL>"}]` and route alerts to it; `&name=` and `&desc=` pick the label that names the topic and the one that describes each alert.',
  message(request, query) {
    const nameField = query.get('name') ?? 'instance';
    const descField = query.get('desc') ?? 'alertname';
    const alerts = parsePayload(request.body).alerts as Alert[];
    // Topic, then status, in the order they first appear, as Zulip groups them.
    const topics = new Map<string, { firing: string[]; resolved: string[] }>();
    for (const alert of alerts) {
      const field = (key: string) => alert.labels?.[key] ?? alert.annotations?.[key];
      const name = field(nameField) ?? '(unknown)';
      const desc = field(descField) ?? `<missing field: ${descField}>`;
      const line = `${desc} ([source](${alert.generatorURL.replace('tab=1', 'tab=0')}))`;
      if (!topics.has(name)) topics.set(name, { firing: [], resolved: [] });
      topics.get(name)![alert.status === 'firing' ? 'firing' : 'resolved'].push(line);
    }
    const messages: WebhookMessage[] = [];
    for (const [topic, statuses] of topics) {
      for (const [status, lines] of Object.entries(statuses)) {
        if (lines.length === 0) continue;
        const head = status === 'firing' ? ':alert: **FIRING**' : ':squared_ok: **Resolved**';
        messages.push({ topic, content: lines.length === 1 ? `${head} ${lines[0]}` : `${head}\n${lines.map((l) => `* ${l}`).join('\n')}` });
      }
    }
    return messages;
  },
};
