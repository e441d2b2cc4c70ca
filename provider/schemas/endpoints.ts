import type { z } from 'zod';
import * as s from './index';

export interface EndpointDef<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  /** Path below `/api/v1`. */
  path: string;
  method: 'GET' | 'POST';
  request: Req;
  response: Res;
  /** Whether `X-PARTNER-IDEMPOTENCY-KEY` is accepted (nine methods). */
  idempotent: boolean;
  /** Moves money or changes state: never resent blindly after an unknown outcome. */
  mutating: boolean;
}

const def = <Req extends z.ZodType, Res extends z.ZodType>(d: EndpointDef<Req, Res>) => d;

/** Every endpoint of the spec, as data. The client and the sandbox are both driven by this table. */
export const endpoints = {
  publicToken: def({
    path: 'public_token',
    method: 'POST',
    request: s.publicTokenRequest,
    response: s.publicTokenResponse,
    idempotent: false,
    mutating: true,
  }),
  recurringTokenDisable: def({
    path: 'recurring_token/disable',
    method: 'POST',
    request: s.recurringTokenDisableRequest,
    response: s.recurringTokenDisableResponse,
    idempotent: false,
    mutating: true,
  }),
  initiate: def({
    path: 'transaction/initiate',
    method: 'POST',
    request: s.initiateRequest,
    response: s.sessionResponse,
    idempotent: true,
    mutating: true,
  }),
  initCheckout: def({
    path: 'transaction/init/checkout',
    method: 'POST',
    request: s.initCheckoutRequest,
    response: s.sessionResponse,
    idempotent: true,
    mutating: true,
  }),
  initTransfer: def({
    path: 'transaction/init/transfer',
    method: 'POST',
    request: s.initTransferRequest,
    response: s.sessionResponse,
    idempotent: true,
    mutating: true,
  }),
  startCheckout: def({
    path: 'transaction/start/checkout',
    method: 'POST',
    request: s.startCheckoutRequest,
    response: s.sessionResponse,
    idempotent: true,
    mutating: true,
  }),
  startTransfer: def({
    path: 'transaction/start/transfer',
    method: 'POST',
    request: s.startTransferRequest,
    response: s.sessionResponse,
    idempotent: true,
    mutating: true,
  }),
  approve: def({
    path: 'transaction/approve',
    method: 'POST',
    request: s.sessionOnlyRequest,
    response: s.sessionResponse,
    idempotent: true,
    mutating: true,
  }),
  cancel: def({
    path: 'transaction/cancel',
    method: 'POST',
    request: s.sessionOnlyRequest,
    response: s.sessionResponse,
    idempotent: true,
    mutating: true,
  }),
  finalize: def({
    path: 'transaction/finalize',
    method: 'POST',
    request: s.finalizeRequest,
    response: s.sessionResponse,
    idempotent: true,
    mutating: true,
  }),
  refund: def({
    path: 'transaction/refund',
    method: 'POST',
    request: s.refundRequest,
    response: s.sessionResponse,
    idempotent: true,
    mutating: true,
  }),
  state: def({
    path: 'transaction/state',
    method: 'POST',
    request: s.sessionOnlyRequest,
    response: s.sessionResponse,
    idempotent: false,
    mutating: false,
  }),
  publicTokenState: def({
    path: 'public_token/state',
    method: 'POST',
    request: s.publicTokenStateRequest,
    response: s.publicTokenStateResponse,
    idempotent: false,
    mutating: false,
  }),
  sbpBanks: def({
    path: 'sbp/banks',
    method: 'GET',
    request: s.sbpBanksRequest,
    response: s.banksResponse,
    idempotent: false,
    mutating: false,
  }),
  identityCheck: def({
    path: 'sbp/identity_check',
    method: 'POST',
    request: s.identityCheckRequest,
    response: s.sessionResponse,
    idempotent: false,
    mutating: true,
  }),
} as const;

export type Endpoints = typeof endpoints;
export type EndpointName = keyof Endpoints;
export type RequestOf<N extends EndpointName> = z.input<Endpoints[N]['request']>;
export type ResponseOf<N extends EndpointName> = z.output<Endpoints[N]['response']>;

export const API_PREFIX = '/api/v1';
export const IDEMPOTENCY_HEADER = 'x-partner-idempotency-key';
