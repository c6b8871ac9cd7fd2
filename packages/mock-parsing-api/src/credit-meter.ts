/**
 * The credits the mock's documents have cost: one per document the service parses, none
 * for a document rejected as a duplicate or as an invalid type, as the service's public
 * description says. A document whose conversion failed was attempted, so it costs its credit:
 * the description is silent there and the mock takes the reading that never under-counts
 * (README.md, "What the mock decides for itself").
 */
export interface CreditMeter {
  readonly used: number;
  charge(): void;
}

export function createCreditMeter(): CreditMeter {
  let used = 0;
  return {
    get used() {
      return used;
    },
    charge() {
      used += 1;
    },
  };
}
