// The incoming-webhook integrations this server has, in Zulip's order (by name), and the map from
// every URL segment (names and aliases) to them.
import type { Integration } from '../integration.ts';
import { alertmanager } from './alertmanager.ts';
import { gitea, gogs } from './gitea.ts';
import { github } from './github.ts';
import { gitlab } from './gitlab.ts';
import { grafana } from './grafana.ts';
import { jira } from './jira.ts';
import { json } from './json.ts';
import { opsgenie } from './opsgenie.ts';
import { pagerduty } from './pagerduty.ts';
import { sentry } from './sentry.ts';
import { slackIncoming } from './slack-incoming.ts';
import { ifttt, zapier } from './zapier.ts';

export const INTEGRATION_LIST: readonly Integration[] = [
  alertmanager,
  gitea,
  github,
  gitlab,
  gogs,
  grafana,
  ifttt,
  jira,
  json,
  opsgenie,
  pagerduty,
  sentry,
  slackIncoming,
  zapier,
];

export const INTEGRATIONS: ReadonlyMap<string, Integration> = new Map(
  INTEGRATION_LIST.flatMap((i) => [i.name, ...(i.aliases ?? [])].map((name) => [name, i] as const)),
);
