#!/usr/bin/env bash
# Installs espeak-ng, the offline text-to-speech engine of --tau2-speech-complexity (docs/voice.md).
# Idempotent: does nothing when it is there. Uses Debian's package (apt-get); needs root. Elsewhere it
# says what to do and exits 0: a phone-call run is then refused with one line, and its tests skip.
set -uo pipefail

note() { echo "install-speech.sh: $*" >&2; }

if command -v espeak-ng >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  note "espeak-ng missing and cannot install it here (needs root and apt-get)." \
    "Install it yourself (Debian/Ubuntu: sudo apt-get install espeak-ng)."
  exit 0
fi
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends espeak-ng >/dev/null 2>&1; then
  apt-get update >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends espeak-ng >/dev/null 2>&1 \
    || note "apt-get could not install espeak-ng; --tau2-speech-complexity will be refused"
fi
exit 0
