/** A feed that cannot be read (not XML, not RSS/RDF/Atom, undecodable). Apart from feed.ts so the pool can rethrow it without loading feedsmith. */
export class FeedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FeedError';
  }
}
