import { startTestSandbox, type TestSandbox, type TestSandboxOptions } from './sandbox';
import { startWebhookSink, type WebhookSink } from './webhook-sink';

/**
 * A test sandbox whose webhooks go to a local sink, started before the enclosing describe block's tests
 * and closed after them. Read `sb` and `sink` inside tests (they are set by then).
 */
export function sandboxWithSink(options: Omit<TestSandboxOptions, 'webhookUrl'>): {
  readonly sb: TestSandbox;
  readonly sink: WebhookSink;
} {
  const fx = {} as { sb: TestSandbox; sink: WebhookSink };
  beforeAll(async () => {
    fx.sink = await startWebhookSink();
    fx.sb = await startTestSandbox({ ...options, webhookUrl: fx.sink.url });
  });
  afterAll(async () => {
    await fx.sb?.close();
    await fx.sink?.close();
  });
  return fx;
}
