#!/usr/bin/env node
// Verify one webhook delivery with the Standard Webhooks JavaScript library.
//
// An independent verifier for our signatures: the `standardwebhooks` npm
// package (version 1.1.1), `new Webhook(secret).verify(body, headers)`.
//
// Usage:
//
//     node verify_standardwebhooks.mjs SECRET WEBHOOK_ID WEBHOOK_TIMESTAMP WEBHOOK_SIGNATURE BODY_FILE
//     node verify_standardwebhooks.mjs --check
//
// - SECRET: the endpoint's secret, `whsec_...`.
// - WEBHOOK_ID, WEBHOOK_TIMESTAMP, WEBHOOK_SIGNATURE: the three header
//   values, exactly as delivered.
// - BODY_FILE: a file holding the raw body bytes, or `-` to read them from
//   standard input.
//
// Exit status:
//
// - 0: the delivery verifies (prints `verified`).
// - 1: it does not; the library's error is printed on standard error.
// - 2: usage error.
// - 3: the `standardwebhooks` package is not installed (`--check` exits 0
//   and prints its version when it is).
//
// The package is looked for first under `$WEBHOOK_VERIFIERS_DIR/node`
// (default: `target/webhook-verifiers/node` at the repository root, where
// `.ci/run` installs it with `npm install --prefix`), then the usual way
// from this script's directory (and `NODE_PATH`).
//
// The library checks the timestamp against the real clock with a 5-minute
// tolerance, so sign with the current time. The body is checked as bytes
// (it must be UTF-8, as the library decodes it), not parsed as JSON.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const USAGE =
  "usage: verify_standardwebhooks.mjs SECRET WEBHOOK_ID WEBHOOK_TIMESTAMP WEBHOOK_SIGNATURE BODY_FILE\n" +
  "       verify_standardwebhooks.mjs --check";

const here = fileURLToPath(import.meta.url);
const verifiersDir =
  process.env.WEBHOOK_VERIFIERS_DIR ||
  path.resolve(path.dirname(here), "..", "..", "..", "target", "webhook-verifiers");

/** The package's exports and its version, or null when it is not installed. */
function load() {
  for (const from of [path.join(verifiersDir, "node", "package.json"), here]) {
    const require = createRequire(from);
    try {
      const library = require("standardwebhooks");
      const { version } = require("standardwebhooks/package.json");
      return { library, version };
    } catch (e) {
      if (e.code !== "MODULE_NOT_FOUND") {
        throw e;
      }
    }
  }
  return null;
}

function main(argv) {
  const loaded = load();
  if (loaded === null) {
    console.error("standardwebhooks is not installed");
    return 3;
  }
  if (argv.length === 1 && argv[0] === "--check") {
    console.log(`standardwebhooks ${loaded.version}`);
    return 0;
  }
  if (argv.length !== 5) {
    console.error(USAGE);
    return 2;
  }

  const [secret, id, timestamp, signature, bodyFile] = argv;
  const body = readFileSync(bodyFile === "-" ? 0 : bodyFile);
  const headers = {
    "webhook-id": id,
    "webhook-timestamp": timestamp,
    "webhook-signature": signature,
  };
  try {
    new loaded.library.Webhook(secret).verify(body, headers, { jsonParse: false });
  } catch (e) {
    console.error(`${e.name}: ${e.message}`);
    return 1;
  }
  console.log("verified");
  return 0;
}

process.exitCode = main(process.argv.slice(2));
