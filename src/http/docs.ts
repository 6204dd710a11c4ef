/**
 * GET /docs: the API reference, rendered in the browser by Scalar's standalone bundle from
 * /openapi.json, with a client that sends requests with the reader's own key. Everything is
 * served from here: the bundle ships inside @scalar/fastify-api-reference, and the page's
 * configuration turns off what would reach out (web fonts, telemetry, the request proxy, the
 * hosted developer tools, the AI agent and MCP buttons). No key, not metered.
 *
 * The plugin's own routes are not mounted: they build a URL from the Host header (a 500 on a
 * malformed one) and redirect /docs to /docs/. The bundle is taken from the plugin once, on a
 * throwaway instance, when it is first asked for, and served by the routes below. The plugin is
 * imported then too: its 4 MB module took ~0.5 s of every start-up (`npm run bench:startup`).
 */
import Fastify, { type FastifyInstance } from 'fastify';

export const DOCS_PATH = '/docs';
export const DOCS_SCRIPT = '/docs/scalar.js';

/**
 * The configuration the page hands to `Scalar.createApiReference`. Absolute paths, so the page
 * works at /docs and /docs/ alike.
 */
const PAGE_CONFIG = {
  url: '/openapi.json',
  // The default fonts are fetched from fonts.scalar.com; the system's fonts serve.
  withDefaultFonts: false,
  telemetry: false,
  // Requests go straight to this server: no third-party proxy ever sees a key.
  proxyUrl: '',
  // Its "share" and "generate MCP" tools upload the document to Scalar's services.
  showDeveloperTools: 'never',
  agent: { disabled: true },
  // "Generate MCP" uploads the document to Scalar's API.
  mcp: { disabled: true },
  // "Open API Client" leaves for Scalar's hosted client; the built-in one sends from this page.
  hideClientButton: true,
  persistAuth: false,
  authentication: { preferredSecurityScheme: 'bearer' },
} as const;

/** The page: the bundle, then the reference mounted on #app. `<` is escaped so the JSON cannot close the script. */
export function docsPage(): string {
  const config = JSON.stringify(PAGE_CONFIG).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>newsmatch API reference</title>
  </head>
  <body>
    <div id="app"></div>
    <script src="${DOCS_SCRIPT}"></script>
    <script>Scalar.createApiReference('#app', ${config})</script>
  </body>
</html>
`;
}

let bundle: Promise<string> | undefined;

/** Scalar's standalone bundle (about 4 MB), as the plugin serves it: read once a process, on the first request for it (not at start-up). */
function scalarBundle(): Promise<string> {
  bundle ??= (async () => {
    const { default: scalar } = await import('@scalar/fastify-api-reference');
    const donor = Fastify({ logger: false });
    try {
      await donor.register(scalar, { routePrefix: '/r', configuration: { url: '/openapi.json' } });
      const res = await donor.inject({ method: 'GET', url: '/r/js/scalar.js' });
      if (res.statusCode !== 200) throw new Error(`@scalar/fastify-api-reference served its bundle with ${res.statusCode}`);
      return res.body;
    } finally {
      await donor.close();
    }
  })().catch((e: unknown) => {
    // A failed read is tried again by the next request, not kept.
    bundle = undefined;
    throw e;
  });
  return bundle;
}

export async function docsRoutes(app: FastifyInstance): Promise<void> {
  const page = docsPage();
  const config = { schema: { hide: true }, logLevel: 'warn' } as const;
  for (const url of [DOCS_PATH, `${DOCS_PATH}/`]) {
    app.get(url, config, async (_req, reply) => reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(page));
  }
  // The bundle changes only with the package: a day in caches.
  app.get(DOCS_SCRIPT, config, async (_req, reply) =>
    reply
      .type('application/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=86400')
      .send(await scalarBundle()),
  );
}
