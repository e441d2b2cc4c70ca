import { reconcilerInputFromEnv } from '../../client/reconciler';

describe('reconciler configuration from the environment', () => {
  it('is off unless PAYSAGA_RECONCILE_EVERY_MS is set', () => {
    expect(reconcilerInputFromEnv({})).toBeUndefined();
    expect(reconcilerInputFromEnv({ PAYSAGA_RECONCILE_EVERY_MS: '' })).toBeUndefined();
  });

  it('takes the interval and fills the window and round size with defaults', () => {
    expect(reconcilerInputFromEnv({ PAYSAGA_RECONCILE_EVERY_MS: '900000' })).toEqual({
      everyMs: 900_000,
      windowMs: 30 * 24 * 60 * 60 * 1000,
      pageSize: 200,
    });
    expect(
      reconcilerInputFromEnv({
        PAYSAGA_RECONCILE_EVERY_MS: '1000',
        PAYSAGA_RECONCILE_WINDOW_MS: '60000',
        PAYSAGA_RECONCILE_PAGE_SIZE: '10',
      }),
    ).toEqual({ everyMs: 1000, windowMs: 60_000, pageSize: 10 });
  });

  it.each([
    ['PAYSAGA_RECONCILE_EVERY_MS', '15m'],
    ['PAYSAGA_RECONCILE_EVERY_MS', '0'],
    ['PAYSAGA_RECONCILE_WINDOW_MS', '-5'],
    ['PAYSAGA_RECONCILE_PAGE_SIZE', '2.5'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(() => reconcilerInputFromEnv({ PAYSAGA_RECONCILE_EVERY_MS: '1000', [name]: value })).toThrow(
      `${name} must be a positive whole number, got ${value}`,
    );
  });
});
