// Builds src/agentcell/static/{widget,batch}.{js,css}: each entry (js/src/widget.js, js/src/batch.js) is
// bundled by esbuild, then wrapped by js/src/loader-entry.js, which holds that bundle as a string and
// imports it when the first view renders (js/src/loader.js says why). `--dev`: not minified, with inline
// source maps.
import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { build } from "esbuild";

const OUT = "src/agentcell/static";
const ENTRIES = { widget: "js/src/widget.js", batch: "js/src/batch.js" };
const dev = process.argv.includes("--dev");
const common = { bundle: true, format: "esm", minify: !dev, sourcemap: dev ? "inline" : false, write: false, logLevel: "warning" };

await mkdir(OUT, { recursive: true });
for (const [name, file] of Object.entries(ENTRIES)) {
  const inner = await build({ ...common, entryPoints: { [name]: file }, outdir: OUT });
  const js = inner.outputFiles.find((f) => f.path.endsWith(".js")).text;
  const css = inner.outputFiles.find((f) => f.path.endsWith(".css"));
  const key = `${name}:${createHash("sha256").update(js).digest("hex").slice(0, 16)}`;
  const outer = await build({
    ...common,
    entryPoints: ["js/src/loader-entry.js"],
    outfile: `${OUT}/${name}.js`,
    define: { __AGENTCELL_CODE__: JSON.stringify(js), __AGENTCELL_KEY__: JSON.stringify(key) },
  });
  await writeFile(`${OUT}/${name}.js`, outer.outputFiles[0].text);
  if (css) await writeFile(`${OUT}/${name}.css`, css.text);
  console.log(`${OUT}/${name}.js  ${(outer.outputFiles[0].text.length / 1024).toFixed(1)} KB (${key})`);
}
