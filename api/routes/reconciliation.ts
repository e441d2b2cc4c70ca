/**
 * `GET /v1/reconciliation`: what the task queue's reconciler (workflows/reconciler.ts) found: the last
 * pass, the pass in progress, totals (sessions checked, drift found, repairs) and the latest findings.
 */
import type { FastifyPluginAsync } from 'fastify';
import { reconciliationReport } from '../../client/reconciler';
import { reconciliationView } from '../../common/views';
import { endpoints } from '../../client/http/endpoints';
import type { ApiDeps } from '../deps';
import { tableRoute } from '../http';
import { docSchema, errorResponses } from '../schemas';

export const reconciliationRoutes: FastifyPluginAsync<ApiDeps> = async (app, deps) => {
  tableRoute(
    app,
    endpoints.getReconciliation,
    {
      schema: {
        tags: ['operations'],
        summary: "The reconciler's report",
        description:
          'The reconciler re-reads finished money-moving sessions from the provider, pass after pass ' +
          '(a worker with PAYSAGA_RECONCILE_EVERY_MS starts it): what it checked, repaired (news a session ' +
          'had missed, now applied) and found drifting (the provider contradicts a final result: reported ' +
          'with session.drift_detected, never rewritten). Also the Prometheus counter ' +
          '`paysaga_reconciler_findings_total{outcome}` of the workers (PAYSAGA_WORKER_METRICS).',
        security: [{ bearerAuth: [] }],
        response: { 200: docSchema(reconciliationView, { io: 'output' }), ...errorResponses },
      },
    },
    async () => reconciliationReport(deps.temporal, deps.store, deps.taskQueue),
  );
};
