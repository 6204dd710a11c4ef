/**
 * Market intelligence and taxonomies (indexed, 1 credit a call): counts over the stored
 * corpora, as pure functions of their parameters.
 *
 * - skillsMarket: postings per skill per week or month, and the skills most often asked for
 *   beside it.
 * - newsVolume: articles per UTC day and source for a keyword query (the /v1/news language)
 *   or a bge-m3 vector above a cosine floor (the /v1/match range search).
 * - skillsTaxonomy / sourcesTaxonomy: the skill vocabulary, the outlets.
 */
import { AppError } from '../errors.js';
import type { OutletRecord } from '../ingest/index.js';
import type { Skill, Vocabulary } from '../jobs/index.js';
import { parseQuery, resolveSkills, type JobsIndex, type NewsIndex } from '../keyword/index.js';
import { normalise, type Domain, type VectorSearch } from '../search/index.js';
import { resolveSources, type Catalog, type SourceRecord, type Store } from '../store/index.js';

const DAY = 86_400;
/** Buckets a series may have (ten years of weeks). */
const MAX_BUCKETS = 530;
const CO_OCCURRING = 10;

export interface MarketDeps {
  store: Store;
  catalog: Catalog;
  search: VectorSearch;
  news: NewsIndex;
  jobsIndex: JobsIndex;
  vocabulary: Vocabulary;
  catchUp(): Promise<void>;
  outletNames?: () => Set<string>;
}

/** Inclusive bounds on a posting's or an article's time, Unix seconds. */
export interface TimeRange {
  since?: number;
  until?: number;
}

export interface SkillsMarketQuery extends TimeRange {
  /** Vocabulary names or aliases. */
  skills: string[];
  interval: 'week' | 'month';
}

export interface SkillSeries {
  name: string;
  category: string;
  total: number;
  series: { period_start: string; postings: number }[];
  co_occurring: { name: string; postings: number }[];
}

/** The first second of the week (Monday, UTC) or month holding `t`, and the one after. */
function bucketOf(t: number, interval: 'week' | 'month'): number {
  const d = new Date(t * 1000);
  if (interval === 'month') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000;
  const day = Math.floor(t / DAY);
  return (day - ((new Date(day * DAY * 1000).getUTCDay() + 6) % 7)) * DAY;
}
function nextBucket(b: number, interval: 'week' | 'month'): number {
  if (interval === 'week') return b + 7 * DAY;
  const d = new Date(b * 1000);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000;
}
const isoDay = (t: number) => new Date(t * 1000).toISOString().slice(0, 10);

export async function skillsMarket(deps: MarketDeps, p: SkillsMarketQuery) {
  const names = resolveSkills(deps.vocabulary, p.skills);
  if (names.length === 0) throw new AppError('bad_parameter', 'skills is required: comma-separated names from GET /v1/taxonomies/skills');
  const { interval } = p;
  const range = { since: p.since, until: p.until };
  // The keyword index caught up and read on its threads, off the event loop.
  await deps.jobsIndex.fresh();
  const skills = await Promise.all(
    names.map(async (name): Promise<SkillSeries> => {
      const [times, coOccurring] = await Promise.all([
        deps.jobsIndex.queryPostedTimes(name, range.since, range.until),
        deps.jobsIndex.queryCoOccurring(name, range.since, range.until, CO_OCCURRING),
      ]);
      const counts = new Map<number, number>();
      for (const t of times) counts.set(bucketOf(t, interval), (counts.get(bucketOf(t, interval)) ?? 0) + 1);
      return {
        name,
        category: deps.vocabulary.resolve(name)!.category,
        total: times.length,
        series: [...counts].map(([b, n]) => ({ period_start: isoDay(b), postings: n })),
        co_occurring: coOccurring,
      };
    }),
  );
  // Every bucket from the first to the last, zeros included, the same for every skill.
  const all = skills.flatMap((s) => s.series.map((x) => Date.parse(`${x.period_start}T00:00:00Z`) / 1000));
  const first = range.since !== undefined ? bucketOf(range.since, interval) : all.length ? Math.min(...all) : undefined;
  const last = range.until !== undefined ? bucketOf(range.until, interval) : all.length ? Math.max(...all) : undefined;
  const buckets: number[] = [];
  if (first !== undefined && last !== undefined) {
    for (let b = first; b <= last; b = nextBucket(b, interval)) {
      if (buckets.length >= MAX_BUCKETS) throw new AppError('bad_parameter', `more than ${MAX_BUCKETS} ${interval}s: narrow since/until or use interval=month`);
      buckets.push(b);
    }
  }
  for (const s of skills) {
    const have = new Map(s.series.map((x) => [x.period_start, x.postings]));
    s.series = buckets.map((b) => ({ period_start: isoDay(b), postings: have.get(isoDay(b)) ?? 0 }));
  }
  return { interval, since: first === undefined ? null : isoDay(first), until: last === undefined ? null : isoDay(last), skills };
}

/** The filters of /v1/news (GET) and /v1/match (POST) a volume is counted under. */
export interface VolumeFilters extends TimeRange {
  /** Source names to keep, or to drop: not both (400). */
  sources?: string[];
  exclude_sources?: string[];
  include_edits: boolean;
}

/** GET /v1/market/news-volume: a keyword query (the /v1/news language). */
export interface KeywordVolumeQuery extends VolumeFilters {
  q: string;
}

/** POST /v1/market/news-volume: a bge-m3 vector and a cosine floor. */
export interface VectorVolumeQuery extends VolumeFilters {
  vector: number[];
  min_score: number;
}

export interface NewsVolume {
  total: number;
  days: { date: string; count: number; by_source: Record<string, number> }[];
  sources: { name: string; count: number }[];
}

function volumeOf(rows: { day: string; sourceId: number; n: number }[], sources: SourceRecord[]): NewsVolume {
  const names = new Map(sources.map((s) => [s.id, s.name]));
  const days = new Map<string, NewsVolume['days'][number]>();
  const bySource = new Map<string, number>();
  let total = 0;
  for (const r of rows) {
    const name = names.get(r.sourceId) ?? '';
    let d = days.get(r.day);
    // Null prototype: a source may be named `__proto__` or `toString` (its own key either way).
    if (!d) days.set(r.day, (d = { date: r.day, count: 0, by_source: Object.create(null) as Record<string, number> }));
    d.count += r.n;
    d.by_source[name] = (d.by_source[name] ?? 0) + r.n;
    bySource.set(name, (bySource.get(name) ?? 0) + r.n);
    total += r.n;
  }
  return {
    total,
    days: [...days.values()].sort((a, b) => a.date.localeCompare(b.date)),
    sources: [...bySource].map(([name, count]) => ({ name, count })).sort((a, b) => b.count - a.count || a.name.localeCompare(b.name)),
  };
}

function domainOf(deps: MarketDeps, f: VolumeFilters) {
  if (f.sources && f.exclude_sources) throw new AppError('bad_parameter', 'sources and exclude_sources are mutually exclusive');
  const sources = deps.store.listSources();
  const allowed = resolveSources(
    sources,
    f.sources,
    f.exclude_sources,
    () => deps.outletNames?.() ?? new Set(),
    (m) => new AppError('unknown_source', m),
  );
  return { sources, domain: { since: f.since, until: f.until, includeEdits: f.include_edits, sources: allowed } satisfies Domain };
}

/** GET: articles a keyword query matches, per day and source. */
export async function newsVolumeByKeyword(deps: MarketDeps, p: KeywordVolumeQuery): Promise<NewsVolume> {
  const query = parseQuery(p.q);
  const { sources, domain } = domainOf(deps, p);
  await deps.news.fresh();
  return volumeOf(await deps.news.queryVolume({ match: query.match, ...domain }), sources);
}

/** POST: articles within a cosine floor of a bge-m3 vector, per day and source. */
export async function newsVolumeByVector(deps: MarketDeps, b: VectorVolumeQuery): Promise<NewsVolume> {
  const query = normalise(b.vector);
  if (!query) throw new AppError('bad_parameter', 'vector: an all-zero vector has no direction');
  const { sources, domain } = domainOf(deps, b);
  await deps.catchUp();
  const hits = await deps.search.range(query, b.min_score, domain);
  const counts = new Map<string, { day: string; sourceId: number; n: number }>();
  for (const h of hits) {
    const day = isoDay(deps.catalog.eventTime[h.ord]);
    const sourceId = deps.catalog.sourceId[h.ord];
    const key = `${day}\0${sourceId}`;
    const c = counts.get(key);
    if (c) c.n++;
    else counts.set(key, { day, sourceId, n: 1 });
  }
  return volumeOf([...counts.values()], sources);
}

/** The vocabulary, or one category of it (a name of `vocabulary.categories`, as the route's schema checks). */
export function skillsTaxonomy(vocabulary: Vocabulary, p: { category?: string }): { count: number; categories: readonly string[]; skills: Skill[] } {
  const { category } = p;
  const skills = vocabulary.skills.filter((s) => category === undefined || s.category === category);
  return { count: skills.length, categories: vocabulary.categories, skills: skills.map((s) => ({ name: s.name, category: s.category, aliases: s.aliases })) };
}

export interface SourceTaxon {
  name: string;
  homepage: string | null;
  language: string | null;
  country: string | null;
  article_count: number;
}

/**
 * Every source with articles and every outlet, with language and country where known: as
 * given to `sources add`, else the country of the homepage's country-code domain.
 */
export function sourcesTaxonomy(stored: SourceRecord[], outlets: OutletRecord[]): { count: number; sources: SourceTaxon[] } {
  const byName = new Map<string, SourceTaxon>();
  for (const s of stored) byName.set(s.name, { name: s.name, homepage: s.homepage, language: null, country: null, article_count: s.articleCount });
  for (const o of outlets) {
    const t = byName.get(o.name) ?? { name: o.name, homepage: o.homepage, language: null, country: null, article_count: 0 };
    t.homepage ??= o.homepage;
    t.language = o.language ?? null;
    t.country = o.country ?? null;
    byName.set(o.name, t);
  }
  for (const t of byName.values()) t.country ??= countryOfHost(t.homepage);
  const sources = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { count: sources.length, sources };
}

/** ISO 3166-1 code of a homepage's country-code top-level domain (`.co.uk` → GB), or null. */
function countryOfHost(homepage: string | null): string | null {
  if (!homepage) return null;
  let host: string;
  try {
    host = new URL(homepage).hostname;
  } catch {
    return null;
  }
  const tld = host.split('.').pop() ?? '';
  if (!/^[a-z]{2}$/.test(tld)) return null;
  // Two-letter domains sold as generic names say nothing of a country.
  if (['io', 'ai', 'co', 'tv', 'me', 'fm', 'ly', 'gg', 'sh', 'to', 'cc', 'ws', 'eu'].includes(tld)) return null;
  return tld === 'uk' ? 'GB' : tld.toUpperCase();
}
