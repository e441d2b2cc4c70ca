/**
 * Outbound events in tests: a backend's receiver (a real HTTP server on 127.0.0.1 recording every
 * delivery, answering as told), events made to the contract, and a publisher that sends them through
 * the real `publishEvent` activity from a tiny workflow (test/fixtures/publish-events-workflow.ts).
 */
import * as path from 'node:path';
import type { ServerResponse } from 'node:http';
import type { DataConverter } from '@temporalio/common';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { eventId, type EventType, type PaysagaEvent } from '../../common/events';
import { publishEventsWorkflow } from '../fixtures/publish-events-workflow';
import { startRecordingServer, type RecordedRequest } from './recording-server';
import { connectTestClient, testAddress, testNamespace, uniqueTaskQueue, uniqueWorkflowId } from './temporal';

/** A session event with sequence `sequence` (created: a fixed base + sequence seconds, so order shows). */
export function sessionEvent(
  subject: string,
  sequence: number,
  type: EventType,
  data: object = {},
): PaysagaEvent {
  return {
    id: eventId(subject, sequence),
    type,
    created: new Date(Date.now() + sequence).toISOString(),
    session_id: subject,
    sequence,
    data: { sessionId: subject, ...data },
  };
}

export function subscriptionEvent(subject: string, sequence: number, type: EventType): PaysagaEvent {
  return {
    id: eventId(subject, sequence),
    type,
    created: new Date(Date.now() + sequence).toISOString(),
    subscription_id: subject,
    sequence,
    data: { subscriptionId: subject },
  };
}

/** The ordinary life of a card session: sequences 1..6. */
export const SESSION_LIFE: EventType[] = [
  'session.created',
  'session.awaiting_payer',
  'session.awaiting_finalization',
  'session.succeeded',
  'session.refunded',
  'session.chargeback',
];

export function sessionLife(subject: string, types: EventType[] = SESSION_LIFE): PaysagaEvent[] {
  return types.map((t, i) => sessionEvent(subject, i + 1, t));
}

let subjects = 0;
/** A session id no other test uses. */
export const newSubject = (prefix = 'ps_evt') =>
  `${prefix}${Date.now().toString(36)}${process.pid}x${++subjects}`;

export interface Delivery {
  event: PaysagaEvent;
  raw: string;
  signature: string;
  eventIdHeader: string;
  contentType: string;
  /** What the receiver answered. */
  answered: number | 'hang';
}

export type Answer = (event: PaysagaEvent, nth: number) => number | 'hang';

export interface EventReceiver {
  url: string;
  deliveries: Delivery[];
  /** Deliveries answered 2xx. */
  accepted(): Delivery[];
  setAnswer(answer: Answer): void;
  /** Waits until `check` holds (polling), failing with `what` after `timeoutMs`. */
  until(check: (r: EventReceiver) => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** A backend's event receiver; `answer` decides each status (`'hang'`: never answer). */
export async function startEventReceiver(answer: Answer = () => 200): Promise<EventReceiver> {
  let current = answer;
  const deliveries: Delivery[] = [];
  const respond = (req: RecordedRequest, res: ServerResponse) => {
    const raw = req.body.toString('utf8');
    const event = JSON.parse(raw) as PaysagaEvent;
    const answered = current(event, deliveries.length + 1);
    deliveries.push({
      event,
      raw,
      signature: String(req.headers['paysaga-signature'] ?? ''),
      eventIdHeader: String(req.headers['paysaga-event-id'] ?? ''),
      contentType: String(req.headers['content-type'] ?? ''),
      answered,
    });
    if (answered !== 'hang') res.writeHead(answered, { 'content-type': 'text/plain' }).end('ok');
  };
  const server = await startRecordingServer(respond);
  const r: EventReceiver = {
    url: `${server.url}/paysaga/events`,
    deliveries,
    accepted: () => deliveries.filter((d) => typeof d.answered === 'number' && d.answered < 300),
    setAnswer: (a) => (current = a),
    async until(check, what, timeoutMs = 45_000) {
      const deadline = Date.now() + timeoutMs;
      while (!check(r)) {
        if (Date.now() > deadline)
          throw new Error(`${what}: not within ${timeoutMs} ms (${deliveries.length} deliveries received)`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => server.close(),
  };
  return r;
}

/** Ids received 2xx, per subject, in arrival order. */
export function acceptedBySubject(r: EventReceiver): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const d of r.accepted()) {
    const subject = d.event.session_id ?? d.event.subscription_id ?? '';
    out.set(subject, [...(out.get(subject) ?? []), d.event.sequence]);
  }
  return out;
}

export interface EventPublisher {
  /** Publishes through `publishEvent` on `taskQueue` (the paysaga worker's), waiting until all are handed over. */
  publish(
    taskQueue: string,
    events: PaysagaEvent[],
    o?: { mode?: 'sequential' | 'concurrent' },
  ): Promise<void>;
  close(): Promise<void>;
}

/** A worker running only the fixture workflow, on a task queue of its own, for the test file. */
export async function startEventPublisher(
  options: { dataConverter?: DataConverter } = {},
): Promise<EventPublisher> {
  const converter = options.dataConverter ? { dataConverter: options.dataConverter } : {};
  const { code } = await bundleWorkflowCode({
    workflowsPath: path.resolve(__dirname, '..', 'fixtures', 'publish-events-workflow.ts'),
  });
  const taskQueue = uniqueTaskQueue('publisher');
  const connection = await NativeConnection.connect({ address: testAddress() });
  const { client, close: closeClient } = await connectTestClient(converter);
  const worker = await Worker.create({
    connection,
    namespace: testNamespace(),
    taskQueue,
    workflowBundle: { code },
    ...converter,
  });
  const running = worker.run();
  return {
    async publish(target, events, o = {}) {
      await client.workflow.execute(publishEventsWorkflow, {
        taskQueue,
        workflowId: uniqueWorkflowId('publish'),
        args: [{ taskQueue: target, events, ...(o.mode ? { mode: o.mode } : {}) }],
      });
    },
    async close() {
      worker.shutdown();
      await running.catch(() => undefined);
      await closeClient();
      await connection.close();
    },
  };
}
