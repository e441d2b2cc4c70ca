import { createHmac, randomBytes } from 'node:crypto';
import { opaqueToken } from './ids';
import { MemoryStore, type SandboxStore } from './store';
import { cardProfile, type CardProfile } from './test-cards';

/**
 * Cards the sandbox has seen, as references. The PAN itself is not kept: a keyed hash (per-process key)
 * recognizes the same card again, and BIN + last 4 are all that is ever shown. CVVs are never stored.
 *
 * The store keeps the cards and the hashed numbers and card tokens that stand for them, not the keyed
 * hashes or their key (with BIN and last 4 known, those would give the PAN back): after a restart a card
 * typed again gets a new reference, while everything issued earlier still works.
 */
export interface CardRecord extends CardProfile {
  id: string;
  bin: string;
  last4: string;
}

export interface HashedCard {
  hashed_card_number: string;
  hashed_card_exp_date?: string;
  hashed_name_on_card?: string;
  hashed_card_code?: string;
}

export class CardVault {
  private readonly key = randomBytes(32);
  private readonly cards = new Map<string, CardRecord>();
  private readonly byHash = new Map<string, string>();
  private readonly hashed = new Map<string, string>();
  private readonly tokens = new Map<string, string>();
  private seq = 0;

  constructor(private readonly store: SandboxStore = new MemoryStore()) {}

  /** The card's reference; the same PAN always gives the same reference. */
  register(pan: string): CardRecord {
    const fingerprint = createHmac('sha256', this.key).update(pan).digest('hex');
    const known = this.byHash.get(fingerprint);
    if (known) return this.cards.get(known)!;
    const card: CardRecord = {
      id: `card_${++this.seq}`,
      bin: pan.slice(0, 6),
      last4: pan.slice(-4),
      ...cardProfile(pan),
    };
    this.cards.set(card.id, card);
    this.byHash.set(fingerprint, card.id);
    this.store.put('cards', card.id, card);
    return card;
  }

  get(id: string): CardRecord | undefined {
    return this.cards.get(id);
  }

  /**
   * What the tokenization widget hands the partner: opaque strings standing for the card fields.
   * Only the number maps back to the card; the others show which fields were entered.
   */
  issueHashed(cardId: string, entered: { exp: boolean; name: boolean; code: boolean }): HashedCard {
    const out: HashedCard = { hashed_card_number: opaqueToken('hcn') };
    if (entered.exp) out.hashed_card_exp_date = opaqueToken('hce');
    if (entered.name) out.hashed_name_on_card = opaqueToken('hnm');
    if (entered.code) out.hashed_card_code = opaqueToken('hcc');
    this.hashed.set(out.hashed_card_number, cardId);
    this.store.put('card_refs', out.hashed_card_number, { kind: 'hashed', cardId });
    return out;
  }

  byHashedNumber(hashedNumber: string): CardRecord | undefined {
    const id = this.hashed.get(hashedNumber);
    return id === undefined ? undefined : this.cards.get(id);
  }

  issueToken(cardId: string): string {
    const token = opaqueToken('ct');
    this.tokens.set(token, cardId);
    this.store.put('card_refs', token, { kind: 'token', cardId });
    return token;
  }

  byToken(token: string): CardRecord | undefined {
    const id = this.tokens.get(token);
    return id === undefined ? undefined : this.cards.get(id);
  }

  /** The cards, hashed numbers and card tokens of an earlier run. */
  restore(cards: Map<string, unknown>, refs: Map<string, unknown>): void {
    for (const [id, card] of cards) {
      this.cards.set(id, card as CardRecord);
      this.seq = Math.max(this.seq, Number(id.slice('card_'.length)) || 0);
    }
    for (const [ref, value] of refs) {
      const { kind, cardId } = value as { kind: 'hashed' | 'token'; cardId: string };
      (kind === 'hashed' ? this.hashed : this.tokens).set(ref, cardId);
    }
  }

  get size(): number {
    return this.cards.size;
  }
}
