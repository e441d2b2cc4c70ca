/**
 * Pass-through routes to the provider: public tokens for widgets, the FPS bank list, token
 * information and disabling a recurring token. Bodies use the provider's field names; they are
 * validated here with the provider client's own schemas so errors name the field and rule.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { schemas, type RequestOf } from '../../provider';
import { endpoints } from '../../client/http/endpoints';
import type { ApiDeps } from '../deps';
import { objectBody, parse, tableRoute } from '../http';
import { docSchema, errorResponses, refusalResponses } from '../schemas';
import { boundedJson } from '../../common/json-bounds';

const disableBody = z.object({ token: z.string().min(1).max(256) });

/** Pass-through bodies are small objects of the provider's: bounded like any free-form input. */
const PASS_THROUGH_BOUNDS = { maxBytes: 8_192, maxDepth: 6 };
const publicTokenBody = boundedJson(schemas.publicTokenRequest, PASS_THROUGH_BOUNDS);
const tokenStateBody = boundedJson(schemas.publicTokenStateRequest, PASS_THROUGH_BOUNDS);

/** The provider's answer as this API sends it: without the envelope's `status`. */
const answer = <S extends number>(schema: z.ZodObject, status: S, description: string) =>
  ({ [status]: { description, ...docSchema(schema.omit({ status: true }), { io: 'output' }) } }) as Record<
    S,
    object
  >;

const passThrough = <R extends object>(
  summary: string,
  description: string,
  body: object | undefined,
  response: R,
) => ({
  tags: ['provider'],
  summary,
  description,
  security: [{ bearerAuth: [] }],
  ...(body ? { body } : {}),
  response: { ...response, ...refusalResponses, ...errorResponses },
});

/** The provider's answer without its envelope `status` (the HTTP status says it). */
function withoutStatus<T extends { status: string }>(res: T): Omit<T, 'status'> {
  const { status: _status, ...rest } = res;
  return rest;
}

export const tokenRoutes: FastifyPluginAsync<ApiDeps> = async (app, { provider }) => {
  tableRoute(
    app,
    endpoints.createPublicToken,
    {
      schema: passThrough(
        'Create a public token for a widget',
        'Exactly the provider public_token request: one of card_tokenize (allow_tokenization, lang), ' +
          'payment_form_config (session_id, show_autopay_option, lang) or fps_widget. Valid 24 h, one operation.',
        docSchema(publicTokenBody, { name: 'PublicTokenRequest' }),
        answer(schemas.publicTokenResponse, 201, 'The public token.'),
      ),
    },
    async (request, reply) => {
      const body = objectBody(request.body);
      parse(publicTokenBody, body);
      const res = await provider.publicToken(body as RequestOf<'publicToken'>);
      return reply.code(201).send(withoutStatus(res));
    },
  );

  tableRoute(
    app,
    endpoints.listBanks,
    {
      schema: passThrough(
        'List FPS banks',
        'The provider sbp/banks list: id, eng_name, ru_name.',
        undefined,
        answer(schemas.banksResponse, 200, 'The banks.'),
      ),
    },
    async () => withoutStatus(await provider.sbpBanks()),
  );

  tableRoute(
    app,
    endpoints.getTokenInfo,
    {
      schema: passThrough(
        'Information about a card, public or recurring token',
        'Exactly the provider public_token/state request: type card_info (hashed_card_details), ' +
          'public_token or recurring_token, and the object of that name.',
        {
          ...docSchema(tokenStateBody, { name: 'TokenStateRequest' }),
          discriminator: { propertyName: 'type' },
        },
        answer(schemas.publicTokenStateResponse, 200, 'What the provider knows of it.'),
      ),
    },
    async (request) => {
      const body = objectBody(request.body);
      parse(tokenStateBody, body);
      return withoutStatus(await provider.publicTokenState(body as RequestOf<'publicTokenState'>));
    },
  );

  tableRoute(
    app,
    endpoints.disableRecurringToken,
    {
      schema: passThrough(
        'Disable a recurring token',
        'Payments with the token fail afterwards; the answer shows token_active false.',
        docSchema(disableBody, { name: 'DisableTokenRequest' }),
        answer(schemas.recurringTokenDisableResponse, 200, 'The token, now inactive.'),
      ),
    },
    async (request) => {
      const { token } = parse(disableBody, objectBody(request.body));
      return withoutStatus(await provider.recurringTokenDisable({ recurring_token_info: { token } }));
    },
  );
};
