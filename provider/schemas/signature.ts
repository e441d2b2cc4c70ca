/**
 * The provider's webhook signature (spec, Authentication rules 2-3: RSA with SHA-256 over the body's
 * bytes, Base64), checked with plain JavaScript so that workflow code can check it too: a session that
 * holds the service key an earlier event of its own was verified with checks the next one itself, with
 * no local activity (workflows/session/inbox.ts). The worker's check (node:crypto, provider/signing.ts)
 * stays the authority: a signature this one does not accept goes there, so it only needs never to
 * accept what that one refuses. It accepts exactly RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8017 8.2.2):
 * the whole expected encoding is compared, never parsed out of the signature.
 */
import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils';
import { base64 } from '@scure/base';

/** An RSA public key as numbers: the modulus in big-endian hex, and the public exponent. */
export interface RsaPublicNumbers {
  n: string;
  e: number;
}

/** SHA-256's DigestInfo (RFC 8017 9.2, note 1), which the signed encoding wraps around the hash. */
const SHA256_DIGEST_INFO = '3031300d060960864801650304020105000420';
/** EMSA-PKCS1-v1_5 needs at least eight bytes of 0xff padding (RFC 8017 9.2 step 3). */
const MIN_PADDING = 8;

function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  let b = base % modulus;
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % modulus;
    b = (b * b) % modulus;
  }
  return result;
}

export class RsaSha256Verifier {
  private readonly n: bigint;
  private readonly e: bigint;
  /** The modulus's length in bytes: a signature is exactly this long. */
  private readonly size: number;
  /** The signed encoding up to the hash (hex), the same for every message; none for a key too short. */
  private readonly prefix: string | undefined;

  constructor(readonly numbers: RsaPublicNumbers) {
    if (!/^[0-9a-f]+$/i.test(numbers.n) || !Number.isSafeInteger(numbers.e) || numbers.e < 3)
      throw new TypeError('an RSA public key needs a hex modulus and an integer exponent of at least 3');
    this.n = BigInt(`0x${numbers.n}`);
    this.e = BigInt(numbers.e);
    this.size = Math.ceil(this.n.toString(16).length / 2);
    const padding = this.size - 3 - SHA256_DIGEST_INFO.length / 2 - 32;
    this.prefix = padding < MIN_PADDING ? undefined : `0001${'ff'.repeat(padding)}00${SHA256_DIGEST_INFO}`;
  }

  /** The signature (Base64, padded) is this key's over the UTF-8 bytes of `text`. */
  verify(text: string, signatureB64: string): boolean {
    return this.verifyBytes(utf8ToBytes(text), signatureB64);
  }

  /** The signature (Base64, padded) is this key's over exactly `message`. */
  verifyBytes(message: Uint8Array, signatureB64: string): boolean {
    let signature: Uint8Array;
    try {
      signature = base64.decode(signatureB64);
    } catch {
      return false;
    }
    if (signature.length !== this.size || this.prefix === undefined) return false;
    const s = BigInt(`0x${bytesToHex(signature)}`);
    if (s >= this.n) return false;
    const expected = `${this.prefix}${bytesToHex(sha256(message))}`;
    // Both sides are below 256^size, so equal numbers are equal encodings, byte for byte.
    return modPow(s, this.e, this.n) === BigInt(`0x${expected}`);
  }
}
