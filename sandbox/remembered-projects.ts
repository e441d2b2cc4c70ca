import { createPublicKey } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { projectConfigSchema, type Project, type ResolvedSandboxConfig } from './config';
import type { SandboxStore } from './store';

/*
 * Projects are part of what the provider remembers. The config given at start wins for every project it
 * names (the operator may change a webhook URL or a key there); a project the data folder knows but the
 * config no longer names keeps working as last configured, so its sessions in flight still end and its
 * partner can still ask about them. Keys are stored as PEM (public keys only).
 */

export function rememberProjects(
  cfg: ResolvedSandboxConfig,
  saved: Map<string, unknown>,
  store: SandboxStore,
  log: FastifyBaseLogger,
): ResolvedSandboxConfig {
  const projects = new Map<string, Project>(cfg.projects);
  for (const [id, doc] of saved) {
    if (projects.has(id)) continue;
    const parsed = projectConfigSchema.safeParse(doc);
    if (!parsed.success) {
      log.error(
        { projectId: id },
        'a project in the sandbox store cannot be read; its sessions are unusable',
      );
      continue;
    }
    projects.set(id, { ...parsed.data, publicKey: createPublicKey(parsed.data.publicKey) });
    log.warn({ projectId: id }, 'project kept from the data folder (the config no longer names it)');
  }
  for (const p of cfg.projects.values())
    store.put('projects', p.id, { ...p, publicKey: p.publicKey.export({ type: 'spki', format: 'pem' }) });
  return { ...cfg, projects };
}
