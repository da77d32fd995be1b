// `node clients/browser/bench.mjs LIST URLS [ROUNDS]`: measures the extension's WebAssembly
// core on a list file — the .wasm size, the module memory the list takes once loaded, the time
// to load it, and the time per navigation check (the service worker's call: one URL in, the
// warning out) over the URLs in the file URLS (one per line), best of ROUNDS (default 5).

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { Core } from "./src/core.mjs";

const [list, urlsFile, rounds = "5"] = process.argv.slice(2);
if (!list || !urlsFile) {
  console.error("usage: node bench.mjs LIST URLS [ROUNDS]");
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const wasmPath = process.env.PHISHBLOOM_WASM || join(here, "dist", "phishbloom.wasm");
const wasm = readFileSync(wasmPath);
const core = await Core.load(wasm);
const before = core.memoryBytes();
const bytes = readFileSync(list);
let start = process.hrtime.bigint();
const handle = core.loadList(list, bytes);
const loadMs = Number(process.hrtime.bigint() - start) / 1e6;
const info = core.info(handle);
const urls = readFileSync(urlsFile, "utf8").split("\n").filter(Boolean);
let best = Infinity;
let listed = 0;
for (let round = 0; round < Number(rounds); round++) {
  listed = 0;
  start = process.hrtime.bigint();
  for (const url of urls) if (core.warning(url)) listed += 1;
  best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e3 / urls.length);
}
console.log(
  JSON.stringify(
    {
      wasm_bytes: wasm.length,
      wasm_gzip_bytes: gzipSync(wasm, { level: 9 }).length,
      list_bytes: bytes.length,
      list: { name: info.name, version: info.version, entries: info.entries, kind: info.kind },
      memory_before_bytes: before,
      memory_after_load_bytes: core.memoryBytes(),
      load_ms: Number(loadMs.toFixed(2)),
      urls: urls.length,
      listed,
      us_per_navigation_check: Number(best.toFixed(3)),
    },
    null,
    2,
  ),
);
