import { DEFAULT_MAX_CACHED_WORKFLOWS, workerTuningFromEnv } from '../../workers/tuning';

describe('PAYSAGA_MAX_CACHED_WORKFLOWS', () => {
  it('unset or empty leaves the default to createPaysagaWorker', () => {
    expect(workerTuningFromEnv({})).toEqual({});
    expect(workerTuningFromEnv({ PAYSAGA_MAX_CACHED_WORKFLOWS: '' })).toEqual({});
    expect(DEFAULT_MAX_CACHED_WORKFLOWS).toBe(1_000);
  });

  it('takes a whole number of at least 2', () => {
    expect(workerTuningFromEnv({ PAYSAGA_MAX_CACHED_WORKFLOWS: '250' })).toEqual({ maxCachedWorkflows: 250 });
    expect(workerTuningFromEnv({ PAYSAGA_MAX_CACHED_WORKFLOWS: '2' })).toEqual({ maxCachedWorkflows: 2 });
  });

  it.each(['1', '0', '-5', '2.5', 'many'])('refuses %s, naming the variable', (raw) => {
    expect(() => workerTuningFromEnv({ PAYSAGA_MAX_CACHED_WORKFLOWS: raw })).toThrow(
      `PAYSAGA_MAX_CACHED_WORKFLOWS must be a whole number of at least 2, got ${raw}`,
    );
  });
});
