#!/usr/bin/env bash
# Installs the headless Chromium that the HTML report's browser tests drive (tests/report/).
# Idempotent: does nothing when a Chromium is already there. Uses Debian's package (apt-get),
# so no browser is downloaded at test time; needs root. Elsewhere it says what to do and exits 0,
# and the browser tests skip with that reason (under CI=true they fail instead).
#
#   TAU2_CHROMIUM=/path/to/chromium   use that browser (checked, nothing installed)
set -uo pipefail

note() { echo "install-browser.sh: $*" >&2; }

find_chromium() {
  if [ -n "${TAU2_CHROMIUM:-}" ]; then
    [ -x "$TAU2_CHROMIUM" ] && echo "$TAU2_CHROMIUM"
    return
  fi
  command -v chromium || command -v chromium-browser || command -v google-chrome || true
}

found="$(find_chromium)"
if [ -n "$found" ]; then
  exit 0
fi
if [ -n "${TAU2_CHROMIUM:-}" ]; then
  note "TAU2_CHROMIUM=$TAU2_CHROMIUM is not an executable file; the browser tests will not run"
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  note "no Chromium found and cannot install one here (needs root and apt-get)." \
    "Install it yourself (Debian/Ubuntu: sudo apt-get install chromium) or set TAU2_CHROMIUM;" \
    "the HTML report's browser tests skip until then."
  exit 0
fi
note "installing chromium with apt-get (once; the HTML report's browser tests use it)"
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }; then
  note "apt-get could not install chromium; the browser tests will skip (fail under CI=true)"
  exit 0
fi
note "installed $(command -v chromium)"
