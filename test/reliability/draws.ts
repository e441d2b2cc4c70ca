/**
 * Seeded choices of the reliability suite. Every draw is a function of the seed and the draw's name
 * (SHA-256 of `seed/name`), not of the order of earlier draws: the plan of session 17 is the same whether
 * or not a profile adds sessions or faults before it, and a printed seed repeats a run exactly.
 */
import { createHash } from 'node:crypto';

export class Draws {
  constructor(
    readonly seed: string,
    private readonly scope = '',
  ) {}

  /** The draws of a part of the plan (`session/17`, `fault/3`). */
  child(name: string | number): Draws {
    return new Draws(this.seed, `${this.scope}${name}/`);
  }

  /** In [0, 1). */
  float(name: string): number {
    const digest = createHash('sha256').update(`${this.seed}/${this.scope}${name}`).digest();
    // 48 bits are plenty and exact in a double.
    return digest.readUIntBE(0, 6) / 2 ** 48;
  }

  /** An integer in [min, max]. */
  int(name: string, min: number, max: number): number {
    return min + Math.floor(this.float(name) * (max - min + 1));
  }

  chance(name: string, p: number): boolean {
    return this.float(name) < p;
  }

  pick<T>(name: string, items: readonly T[]): T {
    if (items.length === 0) throw new Error(`nothing to pick for ${name}`);
    return items[Math.floor(this.float(name) * items.length)]!;
  }

  /** One of `weights`' keys, each as likely as its weight. */
  weighted<K extends string>(name: string, weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][];
    const total = entries.reduce((n, [, w]) => n + w, 0);
    let x = this.float(name) * total;
    for (const [k, w] of entries) {
      if (x < w) return k;
      x -= w;
    }
    return entries.at(-1)![0];
  }
}

/** A fresh seed to print: short enough to type again. */
export function newSeed(): string {
  return createHash('sha256')
    .update(`${Date.now()}-${process.pid}-${Math.random()}`)
    .digest('hex')
    .slice(0, 10);
}
