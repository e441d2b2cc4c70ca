/**
 * The API's OpenAPI document as it serves it, without a stack: routes only describe themselves, so no
 * request reaches a dependency.
 */
import { request } from 'undici';
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
    const { internalUrl } = await api.listen({
      public: { host: '127.0.0.1', port: 0 },
      internal: { host: '127.0.0.1', port: 0 },
    });
    return (await (await request(`${internalUrl}/openapi.json`)).body.json()) as Schema;
  } finally {
    await api.close();
  }
}
