/**
 * docs/decisions/002-card-data-never-enters-temporal.md, checked over the whole test run: before the shared
 * dev server stops, every workflow history it holds is exported and searched for the test card numbers and
 * card field names. Payload bytes are searched as they are stored (protobuf), so plain JSON payloads are read
 * and encrypted ones (codec tests) are opaque by construction.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { TEST_CARDS } from '../sandbox/test-cards';
import { EVENT_SECRET_PREFIX } from '../platform/event-signature';

/**
 * Test card numbers, card fields as JSON keys (`"card_details"` is also a legitimate type value), and
 * event endpoint secrets (shown once to whoever registers an endpoint, never kept).
 */
export const CARD_NEEDLES = [
  ...Object.keys(TEST_CARDS),
  '"card_number":',
  '"card_code":',
  '"card_details":',
  '"hashed_card_number":',
  '"hashed_card_details":',
  EVENT_SECRET_PREFIX,
];

export interface HistoryScan {
  scanned: number;
  findings: string[];
}

export async function scanAllHistories(client: Client): Promise<HistoryScan> {
  const findings: string[] = [];
  let scanned = 0;
  // The raw listing: client.workflow.list() decodes memos, which an encrypted run's are not for this client.
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.listWorkflowExecutions({
      namespace: client.options.namespace,
      pageSize: 1000,
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    for (const wf of page.executions ?? []) {
      const workflowId = wf.execution?.workflowId ?? '';
      const history = await client.workflow
        .getHandle(workflowId, wf.execution?.runId ?? undefined)
        .fetchHistory();
      const bytes = Buffer.from(temporal.api.history.v1.History.encode(history).finish()).toString('latin1');
      scanned++;
      for (const needle of CARD_NEEDLES) {
        if (bytes.includes(needle))
          findings.push(
            `${workflowId} (${wf.type?.name ?? '?'}) holds ${needle.startsWith('"') ? needle : `${needle.slice(0, 6)}…${needle.slice(-4)}`}`,
          );
      }
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return { scanned, findings };
}
