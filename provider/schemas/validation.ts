import type { z } from 'zod';

/**
 * Turns zod issues into the provider's description shape `<field path>.<rule>`
 * (e.g. `customer.reference.not_blank`), so the client and the sandbox name fields the same way.
 */
export function issueRule(issue: z.core.$ZodIssue, root: unknown): string {
  switch (issue.code) {
    case 'invalid_type':
      // Absent from what was parsed: the provider says not_null (zod says "invalid type" for both).
      return valueAt(root, issue.path) === undefined ? 'not_null' : 'invalid_type';
    case 'too_small': {
      const i = issue as { origin?: string; minimum?: unknown; inclusive?: boolean };
      if (i.origin === 'string' && Number(i.minimum) === 1) return 'not_blank';
      if (i.origin === 'number' && Number(i.minimum) === 0 && i.inclusive === false) return 'positive';
      if (i.origin === 'array') return 'not_empty';
      return `min_${String(i.minimum)}`;
    }
    case 'too_big':
      return `max_${String((issue as { maximum?: unknown }).maximum)}`;
    case 'invalid_format':
      // A pattern may name its rule (`not_blank`); zod's own messages are sentences.
      return NAMED_RULES.has(issue.message) ? issue.message : 'invalid_format';
    case 'invalid_value':
      return 'invalid_value';
    case 'invalid_union':
      return 'invalid_value';
    case 'unrecognized_keys':
      return 'unknown_field';
    case 'custom':
      return NAMED_RULES.has(issue.message) ? issue.message : 'invalid';
    default:
      return 'invalid';
  }
}

/** The rules the provider's schemas name as a check's message (`.regex(re, 'invalid_format')`). */
const NAMED_RULES: ReadonlySet<string> = new Set(['invalid_format', 'not_blank', 'not_null']);

/** The value at `path` inside `root` (undefined when any step is missing). */
function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let at = root;
  for (const key of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}

export function issuePath(issue: z.core.$ZodIssue): string {
  return issue.path.map(String).join('.');
}

/**
 * For a union (e.g. card details given as an instance or as fields), the branch issue that reaches
 * deepest names the field the caller got wrong (`card_details.card_number`), not the union itself.
 */
export function innermostIssue(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union' || !Array.isArray(issue.errors) || issue.errors.length === 0)
    return issue;
  let best: z.core.$ZodIssue = issue;
  for (const branch of issue.errors) {
    for (const inner of branch) {
      const candidate = innermostIssue({
        ...inner,
        path: [...issue.path, ...inner.path],
      } as z.core.$ZodIssue);
      if (candidate.path.length > best.path.length) best = candidate;
    }
  }
  return best;
}

/** `field.rule` of the first issue: the provider names one field per error. */
export function describeIssue(raw: z.core.$ZodIssue, root: unknown): string {
  const issue = innermostIssue(raw);
  const path = issuePath(issue);
  return path ? `${path}.${issueRule(issue, root)}` : issueRule(issue, root);
}

export function describeIssues(error: z.ZodError, root: unknown): string[] {
  return error.issues.map((issue) => describeIssue(issue, root));
}
