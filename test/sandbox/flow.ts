import type { TestSandbox } from '../helpers/sandbox';

/* Helpers that drive sandbox flows through its public routes (events log, state polling). */

/* eslint-disable @typescript-eslint/no-explicit-any */

export async function eventTypes(sb: TestSandbox, sessionId: string): Promise<string[]> {
  const res = await sb.plain('GET', `/sandbox/events?session_id=${sessionId}`);
  return res.body.events.map((e: { type: string }) => e.type);
}

/** Waits until the session has emitted `type` (count times), whether or not webhooks are on. */
export async function waitForEvent(
  sb: TestSandbox,
  sessionId: string,
  type: string,
  count = 1,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const types = await eventTypes(sb, sessionId);
    if (types.filter((t) => t === type).length >= count) return;
    if (Date.now() > deadline)
      throw new Error(
        `session ${sessionId}: no ${type} within ${timeoutMs} ms (events: ${types.join(', ')})`,
      );
    await new Promise((r) => setTimeout(r, 10));
  }
}

export async function state(sb: TestSandbox, sessionId: string, projectId?: string): Promise<any> {
  const res = await sb.post('transaction/state', { session_id: sessionId }, projectId ? { projectId } : {});
  return res.body.session_info;
}

/** init/checkout and approve once approve_pending is there; returns the session id. */
export function checkoutApproved(
  sb: TestSandbox,
  body: Record<string, unknown>,
  opts: { projectId?: string } = {},
): Promise<string> {
  return initApproved(sb, 'checkout', body, opts);
}

/** init/transfer and approve once approve_pending is there; returns the session id. */
export function transferApproved(
  sb: TestSandbox,
  body: Record<string, unknown>,
  opts: { projectId?: string } = {},
): Promise<string> {
  return initApproved(sb, 'transfer', body, opts);
}

async function initApproved(
  sb: TestSandbox,
  kind: 'checkout' | 'transfer',
  body: Record<string, unknown>,
  opts: { projectId?: string },
): Promise<string> {
  const res = await sb.post(`transaction/init/${kind}`, body, opts);
  if (res.body.status !== 'ok') throw new Error(`init/${kind} refused: ${res.text}`);
  const id: string = res.body.session_info.id;
  await waitForEvent(sb, id, 'approve_pending');
  const approved = await sb.post('transaction/approve', { session_id: id }, opts);
  if (approved.body.status !== 'ok') throw new Error(`approve refused: ${approved.text}`);
  return id;
}

/** Parses the first <form> of an HTML page: action, method and fields. */
export function parseForm(html: string): { action: string; method: string; fields: Record<string, string> } {
  const form = /<form[^>]*>/i.exec(html)?.[0] ?? '';
  const attr = (tag: string, name: string) => new RegExp(`${name}="([^"]*)"`, 'i').exec(tag)?.[1] ?? '';
  const unescape = (v: string) => v.replace(/&#(\d+);/g, (_m, c: string) => String.fromCharCode(Number(c)));
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input[^>]*>/gi)) {
    const name = attr(m[0], 'name');
    if (name) fields[name] = unescape(attr(m[0], 'value'));
  }
  return {
    action: unescape(attr(form, 'action')),
    method: attr(form, 'method').toUpperCase() || 'GET',
    fields,
  };
}
