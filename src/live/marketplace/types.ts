/** Records the marketplace parsers return. */

/** A search or storefront result card. */
export interface Card {
  position: number;
  asin: string;
  title: string;
  url: string;
  price_text: string | null;
  price: number | null;
  currency: string;
  original_price_text: string | null;
  original_price: number | null;
  rating: number | null;
  ratings_count: number | null;
  badge: string | null;
  sales_volume: string | null;
  image_url: string | null;
  sponsored: boolean;
  is_prime: boolean;
  delivery: string | null;
  coupon: { text: string; price_text: string; price: number } | null;
  other_offers: { min_price_text: string; min_price: number; count: number } | null;
}

/** What every marketplace parser is told about the page it reads. */
export interface PageContext {
  /** The site's origin, e.g. https://www.amazon.com: relative links are resolved against it. */
  origin: string;
  /** ISO 4217 currency of the site. */
  currency: string;
}
