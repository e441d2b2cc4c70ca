/**
 * The tables a reliability run prints at its end (plain text): sessions by kind and phase, the faults
 * injected, what the partner's calls heard, and the verdict rule by rule with every violation.
 */
import type { Session } from '../../client/http';
import { FAULT_FAMILIES, MIX_KINDS, MONEY_MOVING_ENDPOINTS } from './plan';
import { isUnreadable, type Evidence } from './truth';
import { RULES, type Rule, type Violation } from './verdict';

function table(head: string[], rows: (string | number)[][]): string[] {
  const cells = rows.map((r) => r.map(String));
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)];
}

const PHASES = ['succeeded', 'failed', 'canceled'] as const;

export function sessionsTable(ev: Evidence): string[] {
  const rows = new Map<string, Record<string, number>>();
  const bump = (kind: string, col: string) => {
    const r = rows.get(kind) ?? {};
    r[col] = (r[col] ?? 0) + 1;
    rows.set(kind, r);
  };
  const phaseOf = (id: string) => {
    const v = ev.views.get(id);
    if (!v || isUnreadable(v)) return 'unreadable';
    const s = v as Session;
    return s.final ? s.phase : 'not final';
  };
  for (const r of ev.journal.sessions) {
    const kind = r.plan.kind;
    const id = r.sessionIds[0];
    bump(kind, id ? phaseOf(id) : 'never created');
  }
  for (const s of ev.subscriptions.values())
    if (!isUnreadable(s)) for (const c of s.charges) bump('subscription charge', phaseOf(c.sessionId));
  const cols = [...PHASES, 'not final', 'never created', 'unreadable'];
  const order = ['token', ...MIX_KINDS, 'subscription charge'];
  const body = order
    .filter((k) => rows.has(k))
    .map((k) => {
      const r = rows.get(k)!;
      return [k, Object.values(r).reduce((a, b) => a + b, 0), ...cols.map((c) => r[c] ?? 0)];
    });
  const total = cols.map((_, i) => body.reduce((n, r) => n + (r[i + 2] as number), 0));
  return table(['SESSIONS', 'N', ...cols], [...body, ['total', total.reduce((a, b) => a + b, 0), ...total]]);
}

export function faultsTable(ev: Evidence): string[] {
  const rows: (string | number)[][] = [];
  for (const family of FAULT_FAMILIES) {
    const windows = ev.chaos.windows.filter((w) => w.window.family === family);
    if (windows.length === 0) continue;
    const labels = new Set(windows.map((w) => w.window.id));
    const rules = ev.faultRules.filter((r) => r.label && labels.has(r.label));
    rows.push([
      family,
      windows.filter((w) => w.appliedAtMs !== undefined).length,
      Math.round(windows.reduce((n, w) => n + w.window.forMs, 0) / 1000),
      rules.reduce((n, r) => n + r.fired, 0),
      windows
        .map(
          (w) =>
            `${Math.round(w.window.atMs / 1000)}-${Math.round((w.window.atMs + w.window.forMs) / 1000)}s`,
        )
        .join(' '),
    ]);
    // Commit-then-drop, endpoint by endpoint: each money-moving endpoint should see its own drops.
    if (family === 'commit_drop')
      for (const endpoint of MONEY_MOVING_ENDPOINTS) {
        const fired = rules
          .filter((r) => r.kind === 'drop_after_commit' && r.path === endpoint)
          .reduce((n, r) => n + r.fired, 0);
        rows.push([`  ${endpoint}`, '', '', fired, '']);
      }
  }
  const names = {
    worker_kill: 'worker SIGKILL',
    api_restart: 'API restart',
    temporal_restart: 'Temporal restart',
    store_restart: 'PostgreSQL crash',
  } as const;
  for (const what of ['worker_kill', 'api_restart', 'temporal_restart', 'store_restart'] as const) {
    const done = ev.chaos.disruptions.filter((d) => d.disruption.what === what);
    if (done.length === 0) continue;
    rows.push([
      names[what],
      done.filter((d) => d.downMs !== undefined).length,
      '',
      done.length,
      done
        .map(
          (d) =>
            `${Math.round((d.startedAtMs ?? d.disruption.atMs) / 1000)}s${d.disruption.what === 'api_restart' ? ` ${d.disruption.signal}` : ''} (back in ${d.downMs !== undefined ? `${(d.downMs / 1000).toFixed(1)} s` : 'never'})`,
        )
        .join(', '),
    ]);
  }
  const outage = ev.chaos.storeOutage;
  if (outage)
    rows.push([
      'PostgreSQL outage',
      outage.downMs !== undefined ? 1 : 0,
      Math.round(outage.forMs / 1000),
      '',
      `${Math.round((outage.startedAtMs ?? outage.atMs) / 1000)}s (back in ${outage.downMs !== undefined ? `${(outage.downMs / 1000).toFixed(1)} s` : `never: ${outage.error ?? '?'}`})`,
    ]);
  return table(['FAULTS', 'WINDOWS', 'SECONDS', 'FIRED', 'WHEN'], rows);
}

export function partnerTable(ev: Evidence): string[] {
  const decisions = new Map<string, number>();
  for (const r of ev.journal.sessions)
    for (const d of r.decisions) {
      const key = `${d.plan.kind} ${d.outcome ?? '?'}${d.outcome === 'refused' ? ` ${d.code}` : ''}`;
      decisions.set(key, (decisions.get(key) ?? 0) + 1);
    }
  const refunds = new Map<string, number>();
  for (const r of ev.journal.sessions)
    for (const f of r.refunds) {
      const key = `refund ${f.outcome ?? '?'}${f.code ? ` ${f.code}` : ''}`;
      refunds.set(key, (refunds.get(key) ?? 0) + 1);
    }
  const unhappy = [...ev.journal.answers].filter(([k]) => / (5\d\d|network)$/.test(k));
  const rows = [
    ...[...decisions].sort(([a], [b]) => a.localeCompare(b)),
    ...[...refunds].sort(([a], [b]) => a.localeCompare(b)),
    ...unhappy
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, n]) => [`answered ${k}`, n] as [string, number]),
  ];
  return table(['PARTNER CALLS', 'N'], rows);
}

export function verdictTable(violations: Violation[], limit = 40): string[] {
  const rows = (Object.keys(RULES) as Rule[]).map((rule) => {
    const n = violations.filter((x) => x.rule === rule).length;
    return [RULES[rule], n === 0 ? 'ok' : `${n} FAILED`];
  });
  const lines = table(['VERDICT', ''], rows);
  if (violations.length) {
    lines.push('', 'violations:');
    for (const x of violations.slice(0, limit)) lines.push(`  [${x.rule}] ${x.subject}: ${x.detail}`);
    if (violations.length > limit)
      lines.push(`  ... and ${violations.length - limit} more (the report file has all)`);
  }
  return lines;
}

export function fullReport(ev: Evidence, violations: Violation[], header: string[]): string[] {
  return [
    ...header,
    '',
    ...sessionsTable(ev),
    '',
    ...faultsTable(ev),
    '',
    ...partnerTable(ev),
    '',
    ...verdictTable(violations),
  ];
}
