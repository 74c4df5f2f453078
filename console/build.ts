/**
 * @module console/build
 * Builds the web console: one minified ES module and one stylesheet from `console/src`, with
 * content-hashed names under `assets/`, and `index.html` naming them (no inline script or
 * style, so the gateway's CSP can forbid both). Deterministic: the same sources give the same
 * bytes, which `test/console-build.test.ts` checks against the committed `console/dist`.
 *
 *   npm run console:build            # writes console/dist
 *   node --import tsx console/build.ts <dir>
 */
import { createHash } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type BuildOptions, build, type OutputFile } from "esbuild";

const HERE = fileURLToPath(new URL(".", import.meta.url));
export const DEFAULT_OUT = join(HERE, "dist");

export interface ConsoleBuild {
  /** Paths relative to the output directory, e.g. `assets/main-3f2a1b09c4.js`. */
  script: string;
  style: string;
  /** The uPlot chart module, loaded on demand. */
  chart: string;
  files: string[];
}

function indexHtml(script: string, style: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Switchyard console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/${style}">
<script type="module" src="/console/${script}"></script>
</head>
<body>
<noscript>The Switchyard console needs JavaScript. The HTTP API works without it: see docs/console.md.</noscript>
<div id="app"></div>
</body>
</html>
`;
}

const COMMON = {
  bundle: true,
  minify: true,
  format: "esm",
  target: ["es2022", "chrome111", "firefox111", "safari16"],
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "none",
  sourcemap: false,
  write: false,
  logLevel: "warning",
} satisfies BuildOptions;

/**
 * Writes esbuild's outputs under `assets/`, each named by a hash of its bytes alone (esbuild's
 * own hash also covers where the inputs sit on disk, which differs between checkouts).
 */
function writeHashed(outDir: string, files: OutputFile[]): string[] {
  return files.map((file) => {
    const hash = createHash("sha256").update(file.contents).digest("hex").slice(0, 10);
    const name = basename(file.path).replace(/\.(js|css)$/, `-${hash}.$1`);
    writeFileSync(join(outDir, "assets", name), file.contents);
    return `assets/${name}`;
  });
}

export async function buildConsole(outDir: string = DEFAULT_OUT): Promise<ConsoleBuild> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(join(outDir, "assets"), { recursive: true });
  // uPlot first, as its own module: the main bundle loads it by its hashed name when a page
  // draws a chart.
  const chart = await build({
    ...COMMON,
    entryPoints: [join(HERE, "src/uplot-chart.ts")],
    outdir: join(outDir, "assets"),
  });
  const [chartFile] = writeHashed(outDir, chart.outputFiles);
  const main = await build({
    ...COMMON,
    entryPoints: [join(HERE, "src/main.tsx")],
    outdir: join(outDir, "assets"),
    define: { UPLOT_CHART_URL: JSON.stringify(`/console/${chartFile}`) },
    external: ["/console/assets/*"],
  });
  const outputs = writeHashed(outDir, main.outputFiles);
  const script = outputs.find((path) => path.endsWith(".js"));
  const style = outputs.find((path) => path.endsWith(".css"));
  if (!chartFile || !script || !style)
    throw new Error(`expected the chart module, one .js and one .css, got ${outputs.join(", ")}`);
  writeFileSync(join(outDir, "index.html"), indexHtml(script, style));
  return { script, style, chart: chartFile, files: ["index.html", chartFile, ...outputs].sort() };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2] ? resolve(process.argv[2]) : DEFAULT_OUT;
  const built = await buildConsole(out);
  console.log(`console built into ${out}: ${built.files.join(", ")}`);
}
