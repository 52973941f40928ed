#!/usr/bin/env bash
# The PostgreSQL suites need a server: TOLLGATE_TEST_DATABASE_URL, or one at 127.0.0.1:5432, or a throw-away
# cluster that the tests' global set-up (test/helpers/pg-global.ts) starts from Debian's postgresql package.
# Installs that package when no server answers and it is missing.
set -euo pipefail
if [ -n "${TOLLGATE_TEST_DATABASE_URL:-}" ]; then exit 0; fi
if (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then exit 0; fi
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then exit 0; fi
echo "no PostgreSQL at 127.0.0.1:5432; installing Debian's postgresql package for a throw-away test cluster…" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# Installing starts Debian's own cluster where it can; the tests use it if it answers, else start their own.
$SUDO apt-get install -y -qq --no-install-recommends postgresql >/dev/null
ls /usr/lib/postgresql/*/bin/initdb >/dev/null
