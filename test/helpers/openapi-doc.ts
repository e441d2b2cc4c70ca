/**
 * The API's OpenAPI document as it serves it, without a stack or a socket: routes only describe
 * themselves, so no request reaches a dependency. GET /openapi.json answers `swagger()` as JSON; this is
 * the same call and the same JSON round trip, in memory.
 */
import { buildApi, type ApiDeps } from '../../api/app';
import { EncryptionCodec, generateCodecKeySpec, parseCodecKeys } from '../../platform/codec';

export type Schema = Record<string, unknown>;

export async function servedOpenApi(): Promise<Schema> {
  const codec = new EncryptionCodec(parseCodecKeys(generateCodecKeySpec('doc')));
  const api = buildApi({
    apiTokens: ['t'.repeat(40)],
    codec,
    codecTokens: ['c'.repeat(40)],
  } as unknown as ApiDeps);
  try {
    // The internal listener's document merges in the public one's routes: both must be ready.
    await api.public.ready();
    await api.internal.ready();
    return JSON.parse(JSON.stringify(api.internal.swagger())) as Schema;
  } finally {
    await api.close();
  }
}
