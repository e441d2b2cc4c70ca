/**
 * The worker's logs: pino JSON lines carrying `sessionId` (= workflow id) for everything a session does,
 * the Temporal SDK's logger over them, and the Runtime that forwards the SDK core's own logs. Card data
 * never reaches a worker (docs/decisions/002-card-data-never-enters-temporal.md); the formatter still blanks
 * any card field (provider/schemas/card.ts) and key material.
 */
import type { LogLevel, LogMetadata, Logger } from '@temporalio/common';
import { Runtime } from '@temporalio/worker';
import pino, { type Logger as PinoLogger } from 'pino';
import { redactFields } from '../provider/schemas/card';
import { noticeCoreLog } from './lost-task';

/** Key material and credentials, blanked like card fields. */
const SECRET_FIELDS = ['privateKey', 'partnerPrivateKey', 'authorization'];
const redactSecretFields = (value: unknown) => redactFields(value, SECRET_FIELDS);

export const PINO_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type PinoLevel = (typeof PINO_LEVELS)[number];

export interface CreateLoggerOptions {
  level?: PinoLevel;
  /** `service` field of every line (children add `component`). */
  service: string;
  /** 1: stdout (default), 2: stderr. */
  fd?: 1 | 2;
}

/** A pino logger with paysaga's conventions: JSON lines, `service`, card-looking fields blanked. */
export function createLogger(o: CreateLoggerOptions): PinoLogger {
  return pino(
    {
      level: o.level ?? 'info',
      base: { service: o.service },
      formatters: { log: (obj) => redactSecretFields(obj) as Record<string, unknown> },
    },
    pino.destination({ fd: o.fd ?? 1, sync: true }),
  );
}

export function parseLogLevel(value: string | undefined, fallback: PinoLevel): PinoLevel {
  if (value === undefined || value === '') return fallback;
  const v = value.toLowerCase();
  if (!(PINO_LEVELS as readonly string[]).includes(v))
    throw new Error(`log level must be one of ${PINO_LEVELS.join(', ')}, got ${value}`);
  return v as PinoLevel;
}

const TO_PINO: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * Temporal metadata as log fields: the workflow id is the session id; task tokens are noise. The SDK
 * passes a failed activity's error as `error`, which JSON would print as `{}`: it is written with its
 * type, message and stack.
 */
function sessionFields(meta: LogMetadata | undefined): Record<string, unknown> {
  if (!meta) return {};
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(meta))
    if (k !== 'taskToken') fields[k] = v instanceof Error ? pino.stdSerializers.err(v) : v;
  if (typeof meta.workflowId === 'string') fields.sessionId = meta.workflowId;
  return fields;
}

/** The Temporal SDK's Logger interface over pino (SDK, workflow and activity logs). */
export function temporalLogger(logger: PinoLogger): Logger {
  const log = (level: LogLevel, message: string, meta?: LogMetadata) => {
    logger[TO_PINO[level] ?? 'info'](sessionFields(meta), message);
    noticeCoreLog(level, message);
  };
  return {
    log,
    trace: (m, meta) => log('TRACE', m, meta),
    debug: (m, meta) => log('DEBUG', m, meta),
    info: (m, meta) => log('INFO', m, meta),
    warn: (m, meta) => log('WARN', m, meta),
    error: (m, meta) => log('ERROR', m, meta),
  };
}

/**
 * Installs the Temporal Runtime once per process with `logger` (native core logs forwarded to it).
 * `shutdownSignals`: the SDK's default (SIGINT, SIGTERM, SIGQUIT, SIGUSR2) shuts every worker down by
 * itself; `[]` leaves stopping to the caller (`paysaga dev` stops the API first). Returns false when a
 * Runtime already existed (its settings stay).
 */
export function installRuntime(
  logger: PinoLogger,
  shutdownSignals?: NodeJS.Signals[],
  /** host:port for a Prometheus `/metrics` endpoint of the SDK's worker metrics (PAYSAGA_WORKER_METRICS). */
  metricsAddress?: string,
): boolean {
  try {
    Runtime.install({
      logger: temporalLogger(logger),
      telemetryOptions: {
        logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
        ...(metricsAddress ? { metrics: { prometheus: { bindAddress: metricsAddress } } } : {}),
      },
      ...(shutdownSignals ? { shutdownSignals } : {}),
    });
    return true;
  } catch {
    return false;
  }
}
