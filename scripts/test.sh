#!/usr/bin/env bash
# Run the whole test suite (unit, data-plane and end-to-end; the network tests need root).
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -m pytest "$@"
