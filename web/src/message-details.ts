// What a message's menu looks up or sends beyond the message itself: who has read it
// (GET /messages/{id}/read_receipts), its edit history (GET /messages/{id}/history) and a report
// to the organization's moderators (POST /messages/{id}/report).
import type { Api } from './api.ts';
import type { ReportType } from '../../src/domain/report-reasons.ts';

/** One state of a message in its history, oldest first as Zulip shows them. */
export interface Snapshot {
  timestamp: number;
  user_id: number | null;
  topic: string;
  rendered_content: string;
  prev_topic?: string;
  prev_rendered_content?: string;
  /** The server's word diff: `highlight_text_inserted` and `highlight_text_deleted` spans. */
  content_html_diff?: string;
  prev_stream?: number;
  stream?: number;
}

export async function readReceipts(api: Api, messageId: number): Promise<number[]> {
  return (await api.get<{ user_ids: number[] }>(`/messages/${messageId}/read_receipts`)).user_ids;
}

export async function messageHistory(api: Api, messageId: number): Promise<Snapshot[]> {
  return (await api.get<{ message_history: Snapshot[] }>(`/messages/${messageId}/history`)).message_history;
}

export async function reportMessage(api: Api, messageId: number, reportType: ReportType, description: string): Promise<void> {
  await api.post(`/messages/${messageId}/report`, { report_type: reportType, description });
}
