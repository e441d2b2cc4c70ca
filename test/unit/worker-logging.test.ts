/**
 * The Temporal SDK's logs as the worker writes them (workers/logging.ts): the workflow id as `sessionId`,
 * no task token, and a failed activity's error with its type and message (JSON alone prints an Error as
 * `{}`, which said nothing when webhooks could not be verified).
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { temporalLogger } from '../../workers/logging';

function captured() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: temporalLogger(pino({ level: 'debug' }, sink)) };
}

it('writes an activity failure with its error type and message, the session id, and no task token', async () => {
  const { lines, logger } = captured();
  logger.warn('Activity failed', {
    workflowId: 'ps_1795794720606551',
    activityType: 'verifyProviderEvent',
    taskToken: 'opaque',
    error: new TypeError('no provider service public key configured'),
  });
  await new Promise((r) => setImmediate(r));
  expect(lines).toHaveLength(1);
  const [line] = lines;
  expect(line).toMatchObject({
    level: 40,
    msg: 'Activity failed',
    sessionId: 'ps_1795794720606551',
    activityType: 'verifyProviderEvent',
    error: { type: 'TypeError', message: 'no provider service public key configured' },
  });
  expect(line).not.toHaveProperty('taskToken');
  expect((line!.error as { stack: string }).stack.split('\n')[0]).toBe(
    'TypeError: no provider service public key configured',
  );
});
