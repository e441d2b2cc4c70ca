/** Configuration of worker and API processes from the environment (documented in the README). */
export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
}

export function temporalSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): TemporalSettings {
  return {
    address: env.TEMPORAL_ADDRESS || '127.0.0.1:7233',
    namespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.PAYSAGA_TASK_QUEUE || 'paysaga',
  };
}
