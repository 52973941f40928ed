#!/usr/bin/env bash
# The built-in web engine renders JavaScript, and the OAuth pages are tested, in Debian's headless Chromium
# (driven by playwright-core; no browser download). Installs it when missing.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -n "${TOLLGATE_CHROMIUM_PATH:-}" ]; then exit 0; fi
echo "chromium not found; installing Debian's chromium package…" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
command -v chromium >/dev/null
