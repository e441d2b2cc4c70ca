/**
 * Whether a namespace has paysaga's search attributes (PAYSAGA_SEARCH_ATTRIBUTES) with the right types.
 * `paysaga setup` adds what is missing; the worker and the API check at start, so a namespace nobody
 * set up fails there with "run paysaga setup" instead of later, when every session start is refused.
 */
import { isGrpcServiceError, type Connection } from '@temporalio/client';
import { SearchAttributeType } from '@temporalio/common';
import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';
import { temporal } from '@temporalio/proto';
import { PAYSAGA_SEARCH_ATTRIBUTES } from '../common/search-attributes';

type IndexedValueType = temporal.api.enums.v1.IndexedValueType;
const Indexed = temporal.api.enums.v1.IndexedValueType;

export const INDEXED_VALUE_TYPE: Record<SearchAttributeType, IndexedValueType> = {
  [SearchAttributeType.TEXT]: Indexed.INDEXED_VALUE_TYPE_TEXT,
  [SearchAttributeType.KEYWORD]: Indexed.INDEXED_VALUE_TYPE_KEYWORD,
  [SearchAttributeType.INT]: Indexed.INDEXED_VALUE_TYPE_INT,
  [SearchAttributeType.DOUBLE]: Indexed.INDEXED_VALUE_TYPE_DOUBLE,
  [SearchAttributeType.BOOL]: Indexed.INDEXED_VALUE_TYPE_BOOL,
  [SearchAttributeType.DATETIME]: Indexed.INDEXED_VALUE_TYPE_DATETIME,
  [SearchAttributeType.KEYWORD_LIST]: Indexed.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

/** `Keyword`, `Int`, ... as the Temporal CLI and UI spell them. */
export function indexedTypeName(t: IndexedValueType | null | undefined): string {
  const name = t === null || t === undefined ? undefined : Indexed[t];
  if (!name) return `type ${String(t)}`;
  return name
    .replace('INDEXED_VALUE_TYPE_', '')
    .toLowerCase()
    .replace(/(^|_)(\w)/g, (_m, _sep: string, c: string) => c.toUpperCase());
}

export interface SearchAttributeComparison {
  /** `Name=Type` of those registered with the right type. */
  present: string[];
  missing: SearchAttributeKey<SearchAttributeType>[];
  /** `Name is Keyword, paysaga needs Int`. */
  conflicts: string[];
}

/** Compares what a namespace lists (`customAttributes` of ListSearchAttributes) with what paysaga needs. */
export function compareSearchAttributes(
  existing: Record<string, IndexedValueType>,
  keys: readonly SearchAttributeKey<SearchAttributeType>[] = PAYSAGA_SEARCH_ATTRIBUTES,
): SearchAttributeComparison {
  const out: SearchAttributeComparison = { present: [], missing: [], conflicts: [] };
  for (const key of keys) {
    const want = INDEXED_VALUE_TYPE[key.type];
    if (!(key.name in existing)) out.missing.push(key);
    else if (existing[key.name] !== want)
      out.conflicts.push(
        `${key.name} is ${indexedTypeName(existing[key.name])}, paysaga needs ${indexedTypeName(want)}`,
      );
    else out.present.push(`${key.name}=${indexedTypeName(want)}`);
  }
  return out;
}

/** The namespace lacks search attributes paysaga writes (or has them with another type). */
export class SearchAttributesMissingError extends Error {
  override name = 'SearchAttributesMissingError';
}

const NOT_PERMITTED = [7 /* PERMISSION_DENIED */, 12 /* UNIMPLEMENTED */, 16 /* UNAUTHENTICATED */];

/**
 * Throws {@link SearchAttributesMissingError} naming what is missing and `paysaga setup`. Credentials
 * that may not list search attributes (some Temporal Cloud keys) cannot be checked: that passes.
 */
export async function assertSearchAttributesRegistered(
  connection: Connection,
  namespace: string,
): Promise<void> {
  let existing: Record<string, IndexedValueType>;
  try {
    existing = (await connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {};
  } catch (err) {
    if (isGrpcServiceError(err) && NOT_PERMITTED.includes(err.code as number)) return;
    throw err;
  }
  const { missing, conflicts } = compareSearchAttributes(existing);
  if (missing.length === 0 && conflicts.length === 0) return;
  const problems = [
    ...(missing.length ? [`missing ${missing.map((k) => k.name).join(', ')}`] : []),
    ...conflicts,
  ];
  throw new SearchAttributesMissingError(
    `namespace ${namespace} is not set up for paysaga (search attributes: ${problems.join('; ')}): ` +
      'run `paysaga setup` with the same Temporal settings first',
  );
}
