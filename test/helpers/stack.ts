/**
 * The whole partner side for integration tests: a real sandbox over HTTP with real keys, a real
 * paysaga worker on the shared Temporal dev server, the PaymentsClient, and a webhook receiver that
 * verifies and routes exactly as the API does (or forwards to the API under test).
 */
import type { ProjectUse } from '../../provider/config';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { request } from 'undici';
import { PaymentsClient } from '../../client/payments-client';
import { mergeSettings, DEFAULT_SETTINGS, type SettingsOverrides } from '../../common/settings';
import { handleProviderWebhook, type WebhookHandling } from '../../client/webhook-handler';
import { createWebhookVerifier, ProviderClient } from '../../provider';
import type { ProjectConfigInput } from '../../sandbox/config';
import type { EventWorkerSettings } from '../../workers/event-config';
import { createPaysagaWorker } from '../../workers/worker';
import { keepWorker, type KeptWorker } from '../../workers/kept-worker';
import type { WorkerVersion } from '../../workers/versioning';
import { EventDispatcher } from '../../workers/event-dispatcher';
import { DEFAULT_EVENT_DELIVERY } from '../../common/event-delivery';
import { parseSigningKeys, type SigningKeys } from '../../platform/event-secrets';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { SessionSettings } from '../../common/settings';
import { startTestSandbox, type TestSandbox, type TestSandboxOptions } from './sandbox';
import { testStore, type TestStore } from './store';
import { storedStates } from '../../store/sessions';
import { OutboundGuard, type OutboundPolicy } from '../../platform/outbound-guard';
import { testOutboundPolicy } from './outbound';
import {
  connectTestClient,
  sharedWorkflowBundlePath,
  testAddress,
  testNamespace,
  uniqueTaskQueue,
} from './temporal';

export interface StackOptions {
  webhooks?: boolean;
  hold?: boolean;
  autoApprove?: boolean;
  /** The provider reports its commission (fee_info) on this project's operations. */
  fees?: ProjectConfigInput['fees'];
  /** More sandbox projects (e.g. a second one for cross-project tokens). */
  extraProjects?: TestSandboxOptions['projects'];
  /**
   * More projects paysaga itself uses (PAYSAGA_PROJECTS): each gets a key pair of its own, a sandbox
   * project with its public key, and the uses it takes from the default project.
   */
  projects?: { id: string; use: ProjectUse[] }[];
  sandbox?: Omit<TestSandboxOptions, 'projects' | 'webhookUrl'>;
  settings?: SettingsOverrides;
  providerRetries?: number;
  /**
   * Encrypt payloads with this codec in the worker and the client
   * (docs/decisions/002-card-data-never-enters-temporal.md).
   */
  codec?: PayloadCodec;
  /** A namespace of its own (registered beforehand), instead of the run's shared one. */
  namespace?: string;
  /** The worker's workflow cache: a small one evicts (and so replays) workflows all the time. */
  maxCachedWorkflows?: number;
  /** The worker's workflow code (default: the run's shared bundle) and its version (default: none). */
  build?: { bundlePath: string; version?: WorkerVersion };
  /** Outbound events: delivery policy (tests shorten the pauses) and configured endpoints. */
  events?: Partial<Pick<EventWorkerSettings, 'policy' | 'configured' | 'pollMs'>> & {
    /** Where deliveries and registrations may go (default: loopback over http, test/helpers/outbound.ts). */
    outbound?: OutboundPolicy;
  };
}

/**
 * Short timings for tests: polling within a second, deadlines within a minute, and a session's workflow
 * that follows it for a few seconds after its result (refunds and late events after that open a new run).
 */
export const TEST_SETTINGS: SessionSettings = mergeSettings(DEFAULT_SETTINGS, {
  polling: { lateAfterMs: 2_000, initialMs: 250, maxMs: 1_000, factor: 1.5 },
  deadlines: { payerActionMs: 30_000, sessionMs: 90_000, startMs: 15_000 },
  followMs: 5_000,
  recheckMs: 60_000,
});

export interface TestStack {
  sandbox: TestSandbox;
  provider: ProviderClient;
  temporal: Client;
  taskQueue: string;
  /** The stack's own store (a schema of the run's embedded store). */
  store: TestStore;
  /** The master key endpoint secrets derive from (PAYSAGA_EVENT_SIGNING_KEY of this stack). */
  signingKeys: SigningKeys;
  /** The outbound policy of this stack's dispatcher (an API over it registers under the same). */
  outbound: OutboundPolicy;
  payments: PaymentsClient;
  settings: SessionSettings;
  serviceKeys: string[];
  /** Every webhook the receiver handled, with what it answered. */
  webhooks: WebhookHandling[];
  /** Send the sandbox's webhooks (raw bytes + headers) on to this URL instead of handling them here. */
  forwardWebhooksTo(url: string | undefined): void;
  /** Shuts the paysaga worker down (as a crash or a deploy would); sessions wait, nothing runs them. */
  stopWorker(): Promise<void>;
  /** The Temporal worker at work (a new one once the SDK lost a workflow task); none while stopped. */
  worker(): Worker | undefined;
  /** Starts a fresh worker on the same task queue (no-op when one is running). */
  startWorker(): Promise<void>;
  /** stopWorker() then startWorker(). */
  restartWorker(): Promise<void>;
  /** One more worker on the stack's task queue, of another build (a release); resolves to its stop. */
  addWorker(build: { bundlePath: string; version: WorkerVersion }): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export async function startStack(opts: StackOptions = {}): Promise<TestStack> {
  const taskQueue = uniqueTaskQueue('stack');
  const settings = mergeSettings(TEST_SETTINGS, {
    ...opts.settings,
    polling: { webhooks: opts.webhooks !== false, ...opts.settings?.polling },
  });
  const dataConverter = opts.codec ? { payloadCodecs: [opts.codec] } : undefined;
  const { client: temporal, close: closeClient } = await connectTestClient({
    ...(dataConverter ? { dataConverter } : {}),
    ...(opts.namespace ? { namespace: opts.namespace } : {}),
  });
  const store = await testStore();
  const outbound = opts.events?.outbound ?? testOutboundPolicy();
  const signingKeys = parseSigningKeys(`k1:${randomBytes(32).toString('base64')}`, 'test signing key');
  const handled: WebhookHandling[] = [];
  // Set once the sandbox (and so its service key) exists, and by forwardWebhooksTo.
  const routing: { forwardTo?: string; verify?: ReturnType<typeof createWebhookVerifier> } = {};

  const receiver: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const signature = req.headers['x-signature'] as string | undefined;
      const answer = async (): Promise<number> => {
        if (routing.forwardTo) {
          const r = await request(routing.forwardTo, {
            method: 'POST',
            body: raw,
            headers: {
              'content-type': 'application/json',
              ...(signature ? { 'x-signature': signature } : {}),
            },
          });
          await r.body.dump();
          return r.statusCode;
        }
        const h = await handleProviderWebhook(raw, signature, {
          verify: routing.verify!,
          temporal,
          taskQueue,
          stored: storedStates(store),
        });
        handled.push(h);
        return h.status;
      };
      answer().then(
        (status) => res.writeHead(status).end(),
        () => res.writeHead(500).end(),
      );
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/provider`;

  const ownProjects = (opts.projects ?? []).map((p) => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    return { ...p, privateKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
  });
  const sandbox = await startTestSandbox({
    ...opts.sandbox,
    projects: [
      {
        webhooks: opts.webhooks !== false,
        hold: !!opts.hold,
        autoApprove: !!opts.autoApprove,
        webhookUrl,
        ...(opts.fees ? { fees: opts.fees } : {}),
      },
      ...(opts.extraProjects ?? []).map((p) => ({ webhookUrl, ...p })),
      ...ownProjects.map((p) => ({ id: p.id, publicKey: p.publicPem, webhookUrl })),
    ],
  });
  const serviceKeys = [sandbox.keys.service.publicPem];
  routing.verify = createWebhookVerifier(serviceKeys);
  const provider = new ProviderClient({
    baseUrl: sandbox.url,
    projectId: sandbox.projectId,
    privateKey: sandbox.keys.partner.privateKey,
    maxRetries: opts.providerRetries ?? 0,
    timeoutMs: 10_000,
    ...(ownProjects.length
      ? { projects: ownProjects.map((p) => ({ id: p.id, privateKey: p.privateKey })) }
      : {}),
  });

  const connection = await NativeConnection.connect({ address: testAddress() });
  let current: { worker: KeptWorker; dispatcher: EventDispatcher } | undefined;
  const newWorker = (build: StackOptions['build']) =>
    createPaysagaWorker({
      connection,
      namespace: opts.namespace ?? testNamespace(),
      taskQueue,
      provider,
      verifyWebhook: routing.verify!,
      store,
      workflowBundlePath: build?.bundlePath ?? sharedWorkflowBundlePath(),
      ...(build?.version ? { version: build.version } : {}),
      ...(dataConverter ? { dataConverter } : {}),
      ...(opts.events?.policy ? { events: { policy: opts.events.policy } } : {}),
      ...(opts.maxCachedWorkflows ? { tuning: { maxCachedWorkflows: opts.maxCachedWorkflows } } : {}),
    });
  const startWorker = async () => {
    if (current) return;
    const worker = await newWorker(opts.build);
    // The worker process's event deliveries (workers/main.ts starts the same beside its worker).
    const dispatcher = new EventDispatcher({
      store,
      policy: opts.events?.policy ?? DEFAULT_EVENT_DELIVERY,
      configuredSecrets: new Map((opts.events?.configured ?? []).map((c) => [c.id, c.secrets])),
      signingKeys,
      concurrency: 50,
      pollMs: opts.events?.pollMs ?? 200,
      guard: new OutboundGuard(outbound),
    });
    dispatcher.start();
    const kept = keepWorker(
      worker,
      () => newWorker(opts.build),
      (message) => process.stderr.write(`[stack ${taskQueue}] ${message}\n`),
    );
    current = { worker: kept, dispatcher };
  };
  const stopWorker = async () => {
    const stopping = current;
    current = undefined;
    if (!stopping) return;
    stopping.worker.shutdown();
    await stopping.worker.done.catch(() => undefined);
    await stopping.dispatcher.stop();
  };
  await startWorker();
  const payments = new PaymentsClient({
    temporal,
    provider,
    taskQueue,
    store,
    settings,
    // The sandbox is the provider's test environment: subscriptions may bill every few seconds.
    providerEnvironment: 'test',
    ...(ownProjects.length
      ? { projectFor: (use: ProjectUse) => ownProjects.find((p) => p.use.includes(use))?.id }
      : {}),
  });

  return {
    sandbox,
    provider,
    temporal,
    taskQueue,
    store,
    signingKeys,
    outbound,
    payments,
    settings,
    serviceKeys,
    webhooks: handled,
    forwardWebhooksTo: (url) => (routing.forwardTo = url),
    stopWorker,
    worker: () => current?.worker.current,
    startWorker,
    async restartWorker() {
      await stopWorker();
      await startWorker();
    },
    async addWorker(build) {
      const worker = await newWorker(build);
      const running = worker.run();
      return async () => {
        worker.shutdown();
        await running.catch(() => undefined);
      };
    },
    async close() {
      await stopWorker();
      await connection.close();
      await sandbox.close();
      await provider.close();
      await new Promise<void>((r) => {
        receiver.closeAllConnections();
        receiver.close(() => r());
      });
      await closeClient();
      await store.close();
    },
  };
}
