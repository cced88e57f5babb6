#!/usr/bin/env python3
"""Verify one webhook delivery with the Standard Webhooks Python library.

An independent verifier for our signatures: the `standardwebhooks` package
from PyPI (version 1.1.0), `Webhook(secret).verify(body, headers)`.

Usage:

    python3 verify_standardwebhooks.py SECRET WEBHOOK_ID WEBHOOK_TIMESTAMP WEBHOOK_SIGNATURE BODY_FILE
    python3 verify_standardwebhooks.py --check

- SECRET: the endpoint's secret, `whsec_...`.
- WEBHOOK_ID, WEBHOOK_TIMESTAMP, WEBHOOK_SIGNATURE: the three header values,
  exactly as delivered.
- BODY_FILE: a file holding the raw body bytes, or `-` to read them from
  standard input.

Exit status:

- 0: the delivery verifies (prints `verified`).
- 1: it does not; the library's error is printed on standard error.
- 2: usage error.
- 3: the `standardwebhooks` package is not installed (`--check` exits 0 and
  prints its version when it is).

The package is looked for first in `$WEBHOOK_VERIFIERS_DIR/python`
(default: `target/webhook-verifiers/python` at the repository root, where
`.ci/run` installs it with `pip install --target`), then on Python's usual
path (`pip3 install standardwebhooks==1.1.0`).

The library checks the timestamp against the real clock with a 5-minute
tolerance, so sign with the current time. The body is checked as bytes
(it must be UTF-8, as the library decodes it), not parsed as JSON.
"""

import os
import sys
from pathlib import Path

USAGE = (
    "usage: verify_standardwebhooks.py SECRET WEBHOOK_ID WEBHOOK_TIMESTAMP "
    "WEBHOOK_SIGNATURE BODY_FILE\n"
    "       verify_standardwebhooks.py --check"
)


def verifiers_dir() -> Path:
    configured = os.environ.get("WEBHOOK_VERIFIERS_DIR")
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parents[3] / "target" / "webhook-verifiers"


def main(argv: list[str]) -> int:
    local = verifiers_dir() / "python"
    if local.is_dir():
        sys.path.insert(0, str(local))
    try:
        from standardwebhooks.webhooks import Webhook
    except ImportError as e:
        print(f"standardwebhooks is not installed: {e}", file=sys.stderr)
        return 3

    if argv == ["--check"]:
        from importlib.metadata import version

        print(f"standardwebhooks {version('standardwebhooks')}")
        return 0
    if len(argv) != 5:
        print(USAGE, file=sys.stderr)
        return 2

    secret, msg_id, timestamp, signature, body_file = argv
    if body_file == "-":
        body = sys.stdin.buffer.read()
    else:
        body = Path(body_file).read_bytes()
    headers = {
        "webhook-id": msg_id,
        "webhook-timestamp": timestamp,
        "webhook-signature": signature,
    }
    try:
        Webhook(secret).verify(body, headers, json_parse=False)
    except Exception as e:  # noqa: BLE001 - any failure is a refusal
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print("verified")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
