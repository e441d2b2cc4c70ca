/**
 * What `paysaga setup` does to a Temporal cluster, idempotently, through the SDK connection's workflow
 * and operator services (no Temporal CLI needed):
 *
 *  1. the namespace: described; registered when missing and the server allows it (a self-hosted
 *     cluster); when registration is not permitted (Temporal Cloud creates namespaces in its own
 *     console or with `tcld`) that is said and setup goes on only if the namespace exists;
 *  2. paysaga's search attributes (PAYSAGA_SEARCH_ATTRIBUTES, the one list): those missing are added,
 *     and setup waits until the server lists them; one that exists with another type is an error.
 *
 * A second run changes nothing and says so.
 */
import { isGrpcServiceError, type Connection } from '@temporalio/client';
import type { SearchAttributeType } from '@temporalio/common';
import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';
import { msToTs } from '@temporalio/common/lib/time';
import { compareSearchAttributes, INDEXED_VALUE_TYPE } from '../platform/search-attribute-check';
import { PAYSAGA_SEARCH_ATTRIBUTES, searchAttributeSpecs } from '../common/search-attributes';

/** gRPC status codes setup tells apart. */
const GRPC = {
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  UNIMPLEMENTED: 12,
  UNAUTHENTICATED: 16,
};

/** `unchecked`: the credentials may not describe namespaces (then they may not register one either). */
export type NamespaceOutcome = 'exists' | 'registered' | 'unchecked';

export interface SetupReport {
  namespace: string;
  namespaceOutcome: NamespaceOutcome;
  /** Search attributes added by this run (`Name=Type`). */
  added: string[];
  /** Search attributes that were there already. */
  present: string[];
  /** False when the run changed nothing. */
  changed: boolean;
}

export interface SetupOptions {
  namespace: string;
  /** Retention of closed workflows in a namespace setup registers. */
  retentionDays: number;
  searchAttributes?: readonly SearchAttributeKey<SearchAttributeType>[];
  /** Progress lines. */
  log?: (line: string) => void;
  /** How long to wait for a new namespace or new attributes to show (default 60 s). */
  settleTimeoutMs?: number;
}

/** A cluster that cannot be set up as asked: what is wrong and what to do. */
export class SetupError extends Error {
  override name = 'SetupError';
}

const notPermitted = (err: unknown) =>
  isGrpcServiceError(err) &&
  [GRPC.PERMISSION_DENIED, GRPC.UNIMPLEMENTED, GRPC.UNAUTHENTICATED].includes(err.code as number);
const notFound = (err: unknown) => isGrpcServiceError(err) && err.code === GRPC.NOT_FOUND;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Retries `fn` while it fails with NOT_FOUND (a namespace just registered, not yet in every cache). */
async function whileNotFound<T>(deadline: number, fn: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!notFound(err) || Date.now() > deadline) throw err;
      await sleep(500);
    }
  }
}

/** true / false, or undefined when these credentials may not describe it (a namespace-scoped key). */
async function namespaceExists(connection: Connection, namespace: string): Promise<boolean | undefined> {
  try {
    await connection.workflowService.describeNamespace({ namespace });
    return true;
  } catch (err) {
    if (notFound(err)) return false;
    if (notPermitted(err)) return undefined;
    throw err;
  }
}

async function ensureNamespace(
  connection: Connection,
  o: SetupOptions,
  log: (l: string) => void,
): Promise<NamespaceOutcome> {
  const exists = await namespaceExists(connection, o.namespace);
  if (exists) {
    log(`namespace ${o.namespace}: exists`);
    return 'exists';
  }
  if (exists === undefined) {
    log(
      `namespace ${o.namespace}: not checked (these credentials may not describe it); ` +
        'going on with the search attributes',
    );
    return 'unchecked';
  }
  try {
    await connection.workflowService.registerNamespace({
      namespace: o.namespace,
      description: 'paysaga payment sessions',
      workflowExecutionRetentionPeriod: msToTs(o.retentionDays * 86_400_000),
    });
  } catch (err) {
    if (isGrpcServiceError(err) && err.code === GRPC.ALREADY_EXISTS) {
      log(`namespace ${o.namespace}: exists (registered meanwhile by someone else)`);
      return 'exists';
    }
    if (notPermitted(err))
      throw new SetupError(
        `namespace ${o.namespace} does not exist and this server does not let us register it ` +
          `(${err instanceof Error ? err.message : String(err)}). On Temporal Cloud create it in the ` +
          'Cloud UI or with `tcld namespace create`; on a self-hosted cluster ask its operator, or use ' +
          'credentials that may register namespaces. Then run `paysaga setup` again.',
      );
    throw err;
  }
  log(`namespace ${o.namespace}: registered (retention ${o.retentionDays} days)`);
  return 'registered';
}

async function listCustom(connection: Connection, namespace: string, deadline: number) {
  const res = await whileNotFound(deadline, () =>
    connection.operatorService.listSearchAttributes({ namespace }),
  );
  return res.customAttributes ?? {};
}

/** Registers the namespace (when missing and allowed) and the search attributes; see the file comment. */
export async function setupTemporal(connection: Connection, o: SetupOptions): Promise<SetupReport> {
  const log = o.log ?? (() => undefined);
  const keys = o.searchAttributes ?? PAYSAGA_SEARCH_ATTRIBUTES;
  const settleMs = o.settleTimeoutMs ?? 60_000;

  const namespaceOutcome = await ensureNamespace(connection, o, log);
  const deadline = Date.now() + settleMs;

  const existing = await listCustom(connection, o.namespace, deadline);
  const { present, missing, conflicts } = compareSearchAttributes(existing, keys);
  if (conflicts.length)
    throw new SetupError(
      `search attributes of another type in namespace ${o.namespace}: ${conflicts.join('; ')}. ` +
        'A search attribute cannot change type: use another namespace, or remove it ' +
        '(`temporal operator search-attribute remove`) if nothing uses it.',
    );
  if (present.length) log(`search attributes present: ${present.join(', ')}`);

  const added = searchAttributeSpecs(missing);
  if (missing.length) {
    try {
      await whileNotFound(deadline, () =>
        connection.operatorService.addSearchAttributes({
          namespace: o.namespace,
          searchAttributes: Object.fromEntries(missing.map((k) => [k.name, INDEXED_VALUE_TYPE[k.type]])),
        }),
      );
    } catch (err) {
      if (notPermitted(err))
        throw new SetupError(
          `cannot add search attributes ${added.join(', ')} to namespace ${o.namespace} ` +
            `(${err instanceof Error ? err.message : String(err)}). On Temporal Cloud add them with ` +
            `\`tcld namespace search-attributes add -n ${o.namespace} ${added.map((s) => `--sa ${s}`).join(' ')}\` ` +
            'or in the Cloud UI, then run `paysaga setup` again.',
        );
      throw err;
    }
    // Workflows started before the server lists them would be refused: wait until it does.
    for (;;) {
      const now = await listCustom(connection, o.namespace, deadline);
      if (missing.every((k) => k.name in now)) break;
      if (Date.now() > deadline)
        throw new SetupError(
          `search attributes ${added.join(', ')} were added to namespace ${o.namespace} but the server ` +
            `does not list them after ${Math.round(settleMs / 1000)} s`,
        );
      await sleep(500);
    }
    log(`search attributes added: ${added.join(', ')}`);
  }

  return {
    namespace: o.namespace,
    namespaceOutcome,
    added,
    present,
    changed: namespaceOutcome === 'registered' || added.length > 0,
  };
}
