/** What a workflow's history says it showed in the Temporal UI (its search-attribute upserts). */
import type { temporal } from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The PaymentStatus values upserted, in order. */
export function statusesUpserted(events: HistoryEvent[]): string[] {
  return events.flatMap((e) => {
    const field =
      e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.PaymentStatus;
    return field ? [JSON.parse(Buffer.from(field.data ?? []).toString('utf8')) as string] : [];
  });
}
