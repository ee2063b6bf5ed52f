#!/usr/bin/env bash
# Installs bubblewrap and ripgrep, which --tau2-retrieval terminal_use (banking_knowledge's shell
# tool) runs its commands with (docs/tau2-banking-knowledge.md; bwrap 0.8+ adds --disable-userns to its
# bounds, older ones still run it). Idempotent: does nothing when both
# are there. Uses Debian's packages (apt-get); needs root. Elsewhere it says what to do and exits 0:
# the configuration is then refused with one line, and its sandbox tests skip.
set -uo pipefail

note() { echo "install-sandbox.sh: $*" >&2; }

if command -v bwrap >/dev/null 2>&1 && command -v rg >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  note "bwrap or rg missing and cannot install them here (needs root and apt-get)." \
    "Install them yourself (Debian/Ubuntu: sudo apt-get install bubblewrap ripgrep)."
  exit 0
fi
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends bubblewrap ripgrep >/dev/null 2>&1; then
  apt-get update >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends bubblewrap ripgrep >/dev/null 2>&1 \
    || note "apt-get could not install bubblewrap and ripgrep; terminal_use will be refused"
fi
exit 0
