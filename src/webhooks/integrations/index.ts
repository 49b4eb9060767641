// The incoming-webhook integrations this server has, by their URL segment.
import type { Integration } from '../integration.ts';
import { github } from './github.ts';
import { json } from './json.ts';
import { slackIncoming } from './slack-incoming.ts';

export const INTEGRATIONS: ReadonlyMap<string, Integration> = new Map([github, json, slackIncoming].map((i) => [i.name, i]));
