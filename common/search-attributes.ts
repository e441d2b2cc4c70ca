/**
 * Typed search attributes shared by workflows (upsert), the API/client (visibility queries), the dev
 * server (`paysaga dev`) and the test server (test/global-setup.ts).
 *
 * Safe to import from workflow code: it imports only from @temporalio/common.
 */
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';
import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';

/** Namespace paysaga uses unless configured otherwise (the dev server creates it). */
export const DEFAULT_TEMPORAL_NAMESPACE = 'default';

/** Session kind: `payment`, `payout`, `refund`, `recurring`, ... */
export const PaymentKind = defineSearchAttributeKey('PaymentKind', SearchAttributeType.KEYWORD);
/** Current session status as the workflow sees it. */
export const PaymentStatus = defineSearchAttributeKey('PaymentStatus', SearchAttributeType.KEYWORD);
/** The partner's own reference for the session. */
export const ClientReference = defineSearchAttributeKey('ClientReference', SearchAttributeType.KEYWORD);
/** Amount in minor units (cents, kopecks, ...). */
export const AmountMinor = defineSearchAttributeKey('AmountMinor', SearchAttributeType.INT);
/** ISO 4217 currency code. */
export const CurrencyCode = defineSearchAttributeKey('CurrencyCode', SearchAttributeType.KEYWORD);

/** True while paysaga could not learn or act for a session and keeps trying (the reason is in the session). */
export const NeedsAttention = defineSearchAttributeKey('NeedsAttention', SearchAttributeType.BOOL);
/** When the session (or subscription) was created: search by time range, newest first. */
export const CreatedAt = defineSearchAttributeKey('CreatedAt', SearchAttributeType.DATETIME);

/** What a paysaga workflow is started (or upserts itself) with; absent fields are left out. */
export interface SessionAttributes {
  kind: string;
  status: string;
  reference?: string;
  amount?: number;
  currency?: string;
  createdAt?: Date;
  needsAttention?: boolean;
}

export function sessionSearchAttributes(a: SessionAttributes): SearchAttributePair[] {
  return [
    { key: PaymentKind, value: a.kind },
    { key: PaymentStatus, value: a.status },
    ...(a.reference !== undefined ? [{ key: ClientReference, value: a.reference }] : []),
    ...(a.amount !== undefined ? [{ key: AmountMinor, value: a.amount }] : []),
    ...(a.currency ? [{ key: CurrencyCode, value: a.currency }] : []),
    ...(a.createdAt ? [{ key: CreatedAt, value: a.createdAt }] : []),
    ...(a.needsAttention !== undefined ? [{ key: NeedsAttention, value: a.needsAttention }] : []),
  ];
}

/**
 * All paysaga search attributes. This is the form `TestWorkflowEnvironment.createLocal({ server: {
 * searchAttributes } })` accepts (`SearchAttributeKey[]`). Do not mutate.
 */
export const PAYSAGA_SEARCH_ATTRIBUTES: SearchAttributeKey<SearchAttributeType>[] = [
  PaymentKind,
  PaymentStatus,
  ClientReference,
  AmountMinor,
  CurrencyCode,
  NeedsAttention,
  CreatedAt,
];

/** Type names as the Temporal CLI / server spell them (`--search-attribute Name=Keyword`). */
const CLI_TYPE_NAMES: Record<SearchAttributeType, string> = {
  [SearchAttributeType.TEXT]: 'Text',
  [SearchAttributeType.KEYWORD]: 'Keyword',
  [SearchAttributeType.INT]: 'Int',
  [SearchAttributeType.DOUBLE]: 'Double',
  [SearchAttributeType.BOOL]: 'Bool',
  [SearchAttributeType.DATETIME]: 'Datetime',
  [SearchAttributeType.KEYWORD_LIST]: 'KeywordList',
};

/** `['PaymentKind=Keyword', ..., 'AmountMinor=Int', ...]`. */
export function searchAttributeSpecs(
  keys: readonly SearchAttributeKey<SearchAttributeType>[] = PAYSAGA_SEARCH_ATTRIBUTES,
): string[] {
  return keys.map((key) => `${key.name}=${CLI_TYPE_NAMES[key.type]}`);
}

/**
 * Arguments for `temporal server start-dev` that register the search attributes:
 * `['--search-attribute', 'PaymentKind=Keyword', '--search-attribute', ...]`.
 */
export function searchAttributeCliArgs(
  keys: readonly SearchAttributeKey<SearchAttributeType>[] = PAYSAGA_SEARCH_ATTRIBUTES,
): string[] {
  return searchAttributeSpecs(keys).flatMap((spec) => ['--search-attribute', spec]);
}
