/**
 * The playground: `GET /` (a page to try /v1/match and /v1/news with a key) and its assets
 * under /playground/. Free and keyless (no `auth`, no `product` in the route config), hidden
 * from /openapi.json, and served under a Content-Security-Policy that allows this origin only
 * and no inline script or style.
 *
 * The page's script is TypeScript in browser/, compiled for the browser by
 * tsconfig.playground.json (`npm run build`) into dist/ beside this module. Run from the
 * sources (tests, tsx) it is compiled on first request with TypeScript's `transpileModule`
 * instead: the served script is then always the source in the tree, never a stale dist/, and a
 * built server never needs TypeScript (a dev dependency). The same test as worker-file.ts
 * tells the two apart: this module's own extension.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { ICON_SVG, PAGE_HTML, STYLE_CSS } from './page.js';

/** The browser modules, by the name the page loads them under (`/playground/<name>.js`). */
const SCRIPTS = ['app', 'format'] as const;

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  // A redeploy's page and script are picked up at once; they are a few kilobytes.
  'cache-control': 'no-cache',
};

/** Loads a browser module's JavaScript: read from dist/ when built, compiled from browser/*.ts from the sources. */
function scriptLoader(): (name: (typeof SCRIPTS)[number]) => Promise<string> {
  const self = fileURLToPath(import.meta.url);
  const dir = path.join(path.dirname(self), 'browser');
  if (path.extname(self) !== '.ts') {
    // Built: read now, so a build that skipped tsconfig.playground.json fails at start, saying so.
    const built = new Map<string, string>();
    for (const name of SCRIPTS) {
      const file = path.join(dir, `${name}.js`);
      try {
        built.set(name, readFileSync(file, 'utf8'));
      } catch (e) {
        throw new Error(`the playground script ${file} is missing: run \`npm run build\` (it compiles tsconfig.playground.json)`, { cause: e });
      }
    }
    return async (name) => built.get(name)!;
  }
  const compiled = new Map<string, Promise<string>>();
  return (name) => {
    let js = compiled.get(name);
    if (!js) {
      js = (async () => {
        const { default: ts } = await import('typescript');
        const source = await readFile(path.join(dir, `${name}.ts`), 'utf8');
        const out = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 }, fileName: `${name}.ts` });
        return out.outputText;
      })();
      compiled.set(name, js);
    }
    return js;
  };
}

/** Registers `GET /` and `GET /playground/{app.js, format.js, style.css, icon.svg}`. */
export function playgroundRoutes(app: FastifyInstance): void {
  const script = scriptLoader();
  const hidden = { schema: { hide: true } };
  const fixed = (url: string, type: string, body: string) => app.get(url, hidden, async (_req, reply) => reply.headers(SECURITY_HEADERS).type(type).send(body));
  fixed('/', 'text/html; charset=utf-8', PAGE_HTML);
  fixed('/playground/style.css', 'text/css; charset=utf-8', STYLE_CSS);
  fixed('/playground/icon.svg', 'image/svg+xml', ICON_SVG);
  for (const name of SCRIPTS) {
    app.get(`/playground/${name}.js`, hidden, async (_req, reply) =>
      reply
        .headers(SECURITY_HEADERS)
        .type('text/javascript; charset=utf-8')
        .send(await script(name)),
    );
  }
}
