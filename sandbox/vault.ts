import { createHmac, randomBytes } from 'node:crypto';
import { opaqueToken } from './ids';
import { cardProfile, type CardProfile } from './test-cards';

/**
 * Cards the sandbox has seen, as references. The PAN itself is not kept: a keyed hash (per-process key)
 * recognizes the same card again, and BIN + last 4 are all that is ever shown. CVVs are never stored.
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
    return out;
  }

  byHashedNumber(hashedNumber: string): CardRecord | undefined {
    const id = this.hashed.get(hashedNumber);
    return id === undefined ? undefined : this.cards.get(id);
  }

  issueToken(cardId: string): string {
    const token = opaqueToken('ct');
    this.tokens.set(token, cardId);
    return token;
  }

  byToken(token: string): CardRecord | undefined {
    const id = this.tokens.get(token);
    return id === undefined ? undefined : this.cards.get(id);
  }

  get size(): number {
    return this.cards.size;
  }
}
