/**
 * Provider service keys withdrawn while processes run: a list of key fingerprints in a file
 * (PAYSAGA_WITHDRAWN_KEYS), written by `paysaga keys withdraw` and read by every API and worker. A
 * webhook signed with a listed key is refused by both, within {@link WITHDRAWN_KEYS_CHECK_MS} of the
 * file's change and with no restart: the API answers 401, and the worker's verification (the only proof
 * a session believes) refuses it, so no session applies anything that key signed from then on. Each
 * line is `sha256:<64 hex digits>`, optionally followed by `#` and a note; `#` lines and blank lines
 * are ignored. A missing file lists nothing. A file that cannot be read, or a line that is not a
 * fingerprint, is an error at start and, later, on every verification until it is fixed: no key is
 * believed while the list is in doubt (the provider delivers again; sessions read transaction/state).
 */
import { createHash, type KeyObject } from 'node:crypto';
import * as fs from 'node:fs';

/** How often the list file is looked at again (on use: a stat, and a read only when it changed). */
export const WITHDRAWN_KEYS_CHECK_MS = 2_000;

const FINGERPRINT = /^sha256:[0-9a-f]{64}$/;

/** A public key's fingerprint: SHA-256 of its SubjectPublicKeyInfo (DER), as `sha256:<hex>`. */
export function keyFingerprint(key: KeyObject): string {
  const der = key.export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(der).digest('hex')}`;
}

export function isKeyFingerprint(value: string): boolean {
  return FINGERPRINT.test(value);
}

/** The fingerprints a list file holds; throws naming the file and line of anything else. */
export function parseWithdrawnKeys(text: string, file: string): Set<string> {
  const listed = new Set<string>();
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/#.*$/, '').trim();
    if (!line) return;
    if (!FINGERPRINT.test(line.toLowerCase()))
      throw new Error(
        `withdrawn-keys list ${file}, line ${i + 1}: not a key fingerprint (sha256:<64 hex digits>)`,
      );
    listed.add(line.toLowerCase());
  });
  return listed;
}

export class WithdrawnKeys {
  private listed = new Set<string>();
  private seen = '';
  private checkedAt = 0;
  private error: Error | undefined;

  /** Reads the file now: an unreadable file or a bad line throws here, at start. */
  constructor(
    readonly file: string,
    private readonly o: { checkEveryMs?: number; now?: () => number } = {},
  ) {
    this.refresh(true);
    if (this.error) throw this.error;
  }

  /** Whether `fingerprint` is withdrawn now. Throws while the file cannot be read or has a bad line. */
  has(fingerprint: string): boolean {
    this.refresh(false);
    if (this.error) throw this.error;
    return this.listed.has(fingerprint);
  }

  private refresh(force: boolean): void {
    const now = (this.o.now ?? Date.now)();
    if (!force && now - this.checkedAt < (this.o.checkEveryMs ?? WITHDRAWN_KEYS_CHECK_MS)) return;
    this.checkedAt = now;
    try {
      let stat: fs.Stats | undefined;
      try {
        stat = fs.statSync(this.file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      const version = stat ? `${stat.ino}:${stat.size}:${stat.mtimeMs}` : 'none';
      if (version === this.seen && !this.error) return;
      this.listed = stat ? parseWithdrawnKeys(fs.readFileSync(this.file, 'utf8'), this.file) : new Set();
      this.seen = version;
      this.error = undefined;
    } catch (err) {
      const message = (err as Error).message;
      this.error = new Error(
        message.startsWith('withdrawn-keys list')
          ? message
          : `withdrawn-keys list ${this.file} cannot be read: ${message}`,
      );
    }
  }
}

/**
 * Adds `fingerprint` to the list file (created if missing), with a note; the file is replaced whole
 * (written beside it, then renamed), so a reader never sees half of it. False: it was already listed.
 */
export function withdrawKey(file: string, fingerprint: string, note: string): boolean {
  if (!FINGERPRINT.test(fingerprint)) throw new Error(`not a key fingerprint: ${fingerprint}`);
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (parseWithdrawnKeys(text, file).has(fingerprint)) return false;
  const line = `${fingerprint} # ${note.replace(/[\r\n]+/g, ' ')}\n`;
  const next = text === '' || text.endsWith('\n') ? `${text}${line}` : `${text}\n${line}`;
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, next, { mode: 0o644 });
  fs.renameSync(temp, file);
  return true;
}
