/**
 * FPS identity checks of payout recipients. sbp/identity_check takes no idempotency key: the reference's
 * workflow is the lock (client/starter.ts), so a repeat, even a concurrent one, gets the same session and
 * never a second check.
 */
import type { SessionView } from '../common/views';
import type { ClientContext } from './context';
import { parse } from './context';
import * as inputs from './inputs';
import * as bodies from './provider-bodies';
import type { Started } from './reads';
import { startSession, type StartOptions } from './starter';

export class IdentityChecks {
  constructor(private readonly ctx: ClientContext) {}

  async start(input: inputs.IdentityCheckInput, o: StartOptions = {}): Promise<Started<SessionView>> {
    const i = parse(inputs.identityCheckInput, input);
    const body = bodies.identityCheckBody(i.phone, i.bankId, i.payee);
    this.ctx.provider.validate('identityCheck', body);
    return startSession(
      this.ctx,
      {
        kind: 'identity_check',
        reference: i.reference,
        ...(i.settings ? { settings: i.settings } : {}),
        ...(i.submerchantId ? { submerchantId: i.submerchantId } : {}),
        ...this.ctx.projectOf('identity_check'),
        open: { by: 'identity_check', body },
        start: { by: 'provider' },
        fingerprintOf: i,
      },
      o,
    );
  }
}
