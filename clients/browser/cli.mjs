// `node clients/browser/cli.mjs FILE [URL...]`: the browser extension's WebAssembly check core
// run outside the browser. Prints exactly the lines `phishbloom check FILE [URL...]` prints
// (URLs from standard input, one per line, when none are given) and exits like it: 0 if any
// URL is listed, 1 if none, 2 on an error. The parity test compares the two byte for byte.
// The .wasm is dist/phishbloom.wasm (built by build.sh), or the file $PHISHBLOOM_WASM names.
// `--json` (first argument) prints `phishbloom check --json` lines instead.

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Core } from "./src/core.mjs";

async function main(argv) {
  let json = false;
  if (argv[0] === "--json") {
    json = true;
    argv = argv.slice(1);
  }
  if (argv.length === 0) {
    throw new Error("usage: node cli.mjs [--json] FILE [URL...]");
  }
  const [file, ...urls] = argv;
  const here = dirname(fileURLToPath(import.meta.url));
  const wasmPath = process.env.PHISHBLOOM_WASM || join(here, "dist", "phishbloom.wasm");
  const core = await Core.load(readFileSync(wasmPath));
  const handle = core.loadList(file, readFileSync(file));
  let listed = 0;
  const chunks = [];
  if (urls.length === 0) {
    const answer = core.checkLines(handle, readFileSync(0), json);
    listed = answer.listed;
    chunks.push(answer.bytes);
  } else {
    for (const url of urls) {
      const answer = core.check(handle, url, json);
      listed += answer.code === 1 ? 1 : 0;
      chunks.push(answer.bytes);
    }
  }
  await new Promise((resolve, reject) =>
    process.stdout.write(Buffer.concat(chunks), (e) => (e ? reject(e) : resolve())),
  );
  return listed > 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`error: ${error.message}\n`);
    process.exitCode = 2;
  },
);
