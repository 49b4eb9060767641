// Sentry (Zulip's sentry integration): from an internal integration, error and message events
// (with the frame that raised, and its code around it) and issues created, resolved, assigned or
// ignored; from Sentry's plain webhook plugin, the same events; from the legacy plugin, its alert.
// The topic is the event's or issue's title (the legacy plugin's: the project).
import { globalTime, parsePayload, unsupportedEvent, type Integration } from '../integration.ts';

// Sentry's platform names, as Pygments knows them for the traceback's code block.
const HIGHLIGHT: Record<string, string> = { go: 'go', java: 'java', javascript: 'javascript', node: 'javascript', python: 'python3', ruby: 'ruby' };

interface Frame {
  filename?: string;
  context_line?: string | null;
  pre_context?: string[] | null;
  post_context?: string[] | null;
}

interface Event {
  title: string;
  platform: string;
  version?: string;
  level: string;
  web_url: string;
  datetime: string;
  metadata?: { filename?: string };
  exception?: { values: { stacktrace?: { frames: Frame[] } }[] };
  logentry?: unknown;
  event_id?: string;
  timestamp?: number;
  received?: number;
}

interface Issue {
  title: string;
  lastSeen: string;
  level: string;
  assignedTo: { type: string; name: string } | null;
}

const contextLines = (lines: string[] | null | undefined) => (lines ?? []).map((l) => (l === '' ? '\n' : `     ${l}\n`)).join('');

function eventBody(event: Event): string {
  // Zulip refuses the deprecated Raven SDKs (Sentry's example event excepted).
  if (event.platform === 'python' && Number.parseInt(event.version ?? '0', 10) < 7 && event.title !== 'This is an example Python exception') {
    throw unsupportedEvent('Sentry', 'Raven SDK');
  }
  const common = `[${event.title}](${event.web_url})\n\`\`\`quote\n**level:** ${event.level}\n**timestamp:** ${globalTime(event.datetime)}\n`;
  if (event.exception) {
    const filename = event.metadata?.filename;
    const stacktrace = [...event.exception.values].reverse().find((v) => v.stacktrace)?.stacktrace;
    const frame = filename && stacktrace ? [...stacktrace.frames].reverse().find((f) => f.filename === filename) : undefined;
    const head = `**New exception:** ${common}**filename:** ${filename ?? 'None'}\n\`\`\``;
    if (frame?.context_line === undefined || frame.context_line === null) return head;
    const code = `${contextLines(frame.pre_context)}---> ${frame.context_line}\n${contextLines(frame.post_context)}`;
    return `${head}\n\nTraceback:\n\`\`\`${HIGHLIGHT[event.platform] ?? ''}\n${code}\`\`\``;
  }
  if (event.logentry) return `**New message event:** ${common}\`\`\``;
  throw unsupportedEvent('Sentry', 'unknown-event type');
}

function issueBody(action: string, issue: Issue, actor: { name: string }): string {
  const assignee = issue.assignedTo ? (issue.assignedTo.type === 'team' ? `team ${issue.assignedTo.name}` : issue.assignedTo.name) : 'No one';
  switch (action) {
    case 'created':
      return `**New issue created:** ${issue.title}\n\`\`\`quote\n**level:** ${issue.level}\n**timestamp:** ${globalTime(issue.lastSeen)}\n**assignee:** ${assignee}\n\`\`\``;
    case 'resolved':
      return `Issue **${issue.title}** was marked as resolved by **${actor.name}**.`;
    case 'assigned':
      return `Issue **${issue.title}** has now been assigned to **${assignee}** by **${actor.name}**.`;
    case 'ignored':
      return `Issue **${issue.title}** was ignored by **${actor.name}**.`;
    default:
      throw unsupportedEvent('Sentry', 'unknown-issue-action type');
  }
}

/** The webhook plugin's payload, given the link and time the internal integration's has. */
function fromPlugin(payload: Record<string, any>): { event: Event } | null {
  const event = payload.event;
  if (!event?.event_id) return null;
  const seconds: number = event.timestamp ?? event.received;
  return { event: { ...event, web_url: new URL(`events/${event.event_id}/`, payload.url).href, datetime: new Date(seconds * 1000).toISOString() } };
}

export const sentry: Integration = {
  name: 'sentry',
  displayName: 'Sentry',
  client: 'Sentry',
  setup:
    'In Sentry, Settings → Developer Settings → New Internal Integration: paste the URL as its webhook URL, turn on "Alert Rule Action" and the issue webhooks, then use it in an alert rule.',
  message(request) {
    const payload = parsePayload(request.body) as Record<string, any>;
    const data = payload.data ?? fromPlugin(payload);
    if (!data) {
      const content = `New [issue](${payload.url}) (level: ${String(payload.level).toUpperCase()}):\n\n\`\`\` quote\n${payload.message}\n\`\`\``;
      return { topic: String(payload.project_name), content };
    }
    if (data.event) return { topic: data.event.title, content: eventBody(data.event) };
    if (data.issue) return { topic: data.issue.title, content: issueBody(payload.action, data.issue, payload.actor) };
    throw unsupportedEvent(
      'Sentry',
      `[${Object.keys(data)
        .map((k) => `'${k}'`)
        .join(', ')}]`,
    );
  },
};
