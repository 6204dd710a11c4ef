/**
 * `newsmatch demo` end to end: the command fills a temp DATA_DIR, then every curl it prints is
 * run against the service built in-process, and the answers are checked against the topics
 * the generator wrote (src/demo/).
 */
import fs from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { buildApp } from '../src/http/app.js';
import { openService } from '../src/service.js';
import { DEMO_MIN_SCORE, DEMO_TOPICS, generateDemoCorpus, newestOfTopic, type DemoCorpus, type DemoTopic } from '../src/demo/index.js';
import { cli } from './helpers/cli.js';
import { makeTempDir, type App, type Service } from './helpers/service.js';

const DAY_MS = 86_400_000;

/** The words of one shell line, as bash splits them (single and double quotes, no expansions but $KEY). */
function shellWords(line: string, key: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === ' ') {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      const end = line.indexOf('"', i + 1);
      word = (word ?? '') + line.slice(i + 1, end).replaceAll('$KEY', key);
      i = end;
    } else word = (word ?? '') + c;
  }
  if (word !== null) words.push(word);
  return words;
}

interface Curl {
  comment: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
}

function parseCurl(line: string, comment: string, key: string): Curl {
  const words = shellWords(line, key);
  expect(words.slice(0, 2)).toEqual(['curl', '-s']);
  const c: Curl = { comment, url: new URL(words[2]), headers: {} };
  for (let i = 3; i < words.length; i += 2) {
    const [flag, arg] = [words[i], words[i + 1]];
    if (flag === '-H') {
      const at = arg.indexOf(':');
      c.headers[arg.slice(0, at).toLowerCase()] = arg.slice(at + 1).trim();
    } else if (flag === '-d') c.body = arg.startsWith('@') ? fs.readFileSync(arg.slice(1), 'utf8') : arg;
    else throw new Error(`unexpected curl flag ${flag} in ${line}`);
  }
  return c;
}

describe('newsmatch demo', () => {
  let dir: string;
  let env: Record<string, string>;
  let run: ReturnType<typeof cli>;
  let corpora: DemoCorpus[];
  let service: Service;
  let app: App;
  let key: string;
  let curls: Curl[];

  /** Which topic wrote the article at this URL. */
  const topicOf = (url: string): DemoTopic | undefined => {
    for (const c of corpora) {
      const a = c.articles.find((x) => x.url === url);
      if (a) return a.topic;
    }
    return undefined;
  };
  const inject = async (c: { method: 'GET' | 'POST'; url: string; headers: Record<string, string>; body?: string }) => {
    const res = await app.inject({ method: c.method, url: c.url, headers: c.headers, payload: c.body });
    return { status: res.statusCode, body: JSON.parse(res.body), raw: res.body };
  };
  const match = (body: object) =>
    inject({ method: 'POST', url: '/v1/match', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

  beforeAll(async () => {
    dir = makeTempDir('newsmatch-demo-');
    env = { DATA_DIR: join(dir, 'data'), PORT: '18181', LOG_LEVEL: 'silent' };
    const before = Date.now();
    run = cli(['demo'], env);
    // The corpus is made for the UTC day of the run: both days, should it have crossed midnight.
    const days = new Set([Math.floor(before / DAY_MS), Math.floor(Date.now() / DAY_MS)]);
    corpora = [...days].map((d) => generateDemoCorpus({ now: d * DAY_MS }));
    expect(run.status, run.stderr).toBe(0);
    key = /^KEY=(\S+)$/m.exec(run.stdout)![1];
    const lines = run.stdout.split('\n');
    curls = lines.flatMap((l, i) => (l.startsWith('curl ') ? [parseCurl(l, lines[i - 1], key)] : []));
    service = await openService(loadConfig(env));
    app = await buildApp(service);
    await app.ready();
  });

  afterAll(async () => {
    await app?.close();
    await service?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('imports the whole corpus and prints the key once', () => {
    const c = corpora[0];
    expect(run.stdout).toContain(`demo corpus: ${c.articles.length} articles (${c.revisions} new revisions, 0 unchanged)`);
    expect(run.stdout.split(key).length - 1).toBe(1);
    expect(service.keys.list().filter((k) => k.name === 'demo')).toHaveLength(1);
  });

  it('prints one curl a mode against 127.0.0.1:PORT, and no text query without a model', () => {
    expect(curls.map((c) => `${c.url.origin}${c.url.pathname}`)).toEqual([
      'http://127.0.0.1:18181/v1/match',
      'http://127.0.0.1:18181/v1/match',
      'http://127.0.0.1:18181/v1/match',
      'http://127.0.0.1:18181/v1/news',
      'http://127.0.0.1:18181/v1/sources',
    ]);
    const bodies = curls.filter((c) => c.body).map((c) => JSON.parse(c.body!));
    expect(bodies[0]).toEqual({ limit: 5 });
    expect(bodies[1]).toEqual({ vector: expect.any(Array), min_score: DEMO_MIN_SCORE, limit: 10 });
    expect(bodies[2]).toEqual({ vector: bodies[1].vector, order: 'relevance', limit: 10 });
    expect(bodies[1].vector).toHaveLength(1024);
    expect(run.stdout).not.toContain('"text"');
  });

  it('every printed curl answers 200 with results, and the results agree with the query', async () => {
    const strike = DEMO_TOPICS.find((t) => t.key === 'strike')!;
    const answers = [];
    for (const c of curls) {
      const res = await inject({ method: c.body === undefined ? 'GET' : 'POST', url: c.url.pathname + c.url.search, headers: c.headers, body: c.body });
      expect(res.status, `${c.comment}\n${res.raw.slice(0, 300)}`).toBe(200);
      answers.push(res.body);
    }
    const [newest, time, relevance, news, sources] = answers;
    expect(newest.items).toHaveLength(5);
    const times = newest.items.map((it: { event_time: string }) => it.event_time);
    expect(times).toEqual([...times].sort().reverse());
    // The vector is the headline chunk of the newest strike article: it comes first by relevance,
    // and every order=time row above the floor is a strike article.
    const query = newestOfTopic(corpora[0], 'strike');
    expect(relevance.items[0].source_url).toBe(query.url);
    expect(relevance.items[0].score).toBeGreaterThan(0.99);
    for (const items of [time.items, relevance.items]) {
      expect(items).toHaveLength(10);
      for (const it of items) {
        expect(topicOf(it.source_url)?.key).toBe('strike');
        expect(it.title.toLowerCase()).toContain(strike.word);
      }
    }
    expect(news.results.length).toBe(5);
    for (const r of news.results) expect(`${r.title} ${r.body}`.toLowerCase()).toContain('strike');
    expect(sources.sources.map((s: { name: string }) => s.name).sort()).toEqual(
      ['Café Économie', 'Daily Ledger', 'Harbor Post', 'Metro Courier', 'Northern Gazette', 'Wire One'].sort(),
    );
  });

  it("a vector query from any topic's article finds that topic first", async () => {
    for (const topic of DEMO_TOPICS) {
      const a = newestOfTopic(corpora[0], topic.key);
      for (const chunk of a.revisions[0].chunks.slice(0, 2)) {
        const res = await match({ vector: Array.from(chunk.vector), order: 'relevance', limit: 10 });
        expect(res.status).toBe(200);
        const same = res.body.items.filter((it: { source_url: string }) => topicOf(it.source_url) === topic);
        expect(same.length, `${topic.key}: ${res.body.items.map((it: { title: string }) => it.title).join(' | ')}`).toBeGreaterThanOrEqual(8);
        for (const it of same) expect(it.title.toLowerCase()).toContain(topic.word);
      }
    }
  });

  it('refuses a store that holds articles in one line (exit 2), and --force the same day changes nothing', async () => {
    const again = cli(['demo'], env);
    expect(again.status).toBe(2);
    expect(again.stdout).toBe('');
    expect(again.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(again.stderr).toMatch(/already holds 3000 articles.*--force/);
    const sameDay = Math.floor(Date.now() / DAY_MS) === corpora[0].anchor / 86_400;
    const forced = cli(['demo', '--force'], env);
    expect(forced.status, forced.stderr).toBe(0);
    // The service above holds the engine: the forced run writes records only, as import does.
    expect(forced.stderr).toContain('a running server owns the search engine');
    if (sameDay) expect(forced.stdout).toContain(`(0 new revisions, ${corpora.at(-1)!.revisions} unchanged)`);
  });
});

describe('the demo generator', () => {
  const now = Date.parse('2026-05-20T12:00:00Z');

  it('is deterministic: the same seed and day give the same corpus, another seed another', () => {
    const a = generateDemoCorpus({ now, articles: 200 });
    const b = generateDemoCorpus({ now, articles: 200 });
    const c = generateDemoCorpus({ now, articles: 200, seed: 7 });
    expect(b.articles[0].url).toBe(a.articles[0].url);
    expect(b.articles[0].revisions).toEqual(a.articles[0].revisions);
    expect(b.articles.map((x) => x.revisions.at(-1)!.title)).toEqual(a.articles.map((x) => x.revisions.at(-1)!.title));
    expect(c.articles[0].revisions[0].chunks[0].vector).not.toEqual(a.articles[0].revisions[0].chunks[0].vector);
  });

  it('writes readable articles on every topic, over the 60 days before the day, some edited', () => {
    const c = generateDemoCorpus({ now });
    expect(new Set(c.articles.map((a) => a.topic.key)).size).toBe(DEMO_TOPICS.length);
    expect(new Set(c.articles.map((a) => a.source.name)).size).toBeGreaterThanOrEqual(5);
    const edited = c.articles.filter((a) => a.revisions.length === 2);
    expect(edited.length).toBeGreaterThan(c.articles.length / 10);
    for (const a of c.articles) {
      const [first, edit] = a.revisions;
      for (const r of a.revisions) {
        expect(r.title.toLowerCase(), r.title).toContain(a.topic.word);
        expect(r.title).not.toMatch(/[{}]/);
        expect(r.text).not.toMatch(/[{}]/);
        expect(r.chunks.length).toBeGreaterThanOrEqual(4);
        expect(new Set(r.chunks.map((ch) => ch.text)).size).toBe(r.chunks.length);
      }
      expect(first.publishedAt).toBeLessThan(c.anchor);
      expect(first.publishedAt).toBeGreaterThanOrEqual(c.anchor - 61 * 86_400);
      if (edit) {
        expect(edit.revisedAt!).toBeGreaterThan(first.publishedAt);
        expect(edit.revisedAt!).toBeLessThan(c.anchor);
        expect(edit.title).not.toBe(first.title);
      }
    }
  });

  it('the README shows the demo and its curls on its first screen', () => {
    const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const head = readme.slice(0, readme.indexOf('\n## '));
    expect(head).toContain('npm run demo && npm start');
    expect(head).toContain('-d @data/demo-query.json');
    expect(head).not.toContain('…');
  });
});
