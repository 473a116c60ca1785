#!/usr/bin/env bash
# Install what mrc-fabric needs on Debian 12 (run as root): system packages, a virtualenv in
# .venv and the project itself (editable, with test extras). Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
need=()
# tshark (with Lua, for tools/wireshark/mrc.lua) and chromium (headless, for the live view's test).
for cmd_pkg in ip:iproute2 tshark:tshark ethtool:ethtool make:make chromium:chromium; do
  cmd=${cmd_pkg%%:*}; pkg=${cmd_pkg##*:}
  command -v "$cmd" >/dev/null 2>&1 || need+=("$pkg")
done
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
# ptf depends on netifaces, which has no wheel for recent Pythons: pip builds it from source.
command -v gcc >/dev/null 2>&1 || need+=(gcc)
py_inc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
[ -f "$py_inc/Python.h" ] || need+=(python3-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing system packages: ${need[*]}"
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating virtualenv .venv"
  python3 -m venv .venv
fi
.venv/bin/pip install -q --upgrade pip >/dev/null
echo "setup: installing mrc-fabric into .venv"
.venv/bin/pip install -q -e '.[test]'
echo "setup: done"
