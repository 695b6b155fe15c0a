#!/usr/bin/env bash
# Installs what coprove builds with, from Debian's packages (run as root on a fresh machine).
set -euo pipefail
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build git curl ca-certificates \
  libboost1.81-dev libboost-log1.81-dev libboost-json1.81-dev libboost-program-options1.81-dev \
  libboost-thread1.81-dev catch2 clang libclang-rt-14-dev python3 >/dev/null
echo "setup: packages installed"

# Node.js and the npm packages that the tests cross-check against (@noble/curves, snarkjs), into the
# git-ignored node_modules/ at the repository root, at the versions package-lock.json pins.
# Debian 12's nodejs is 18.x; @noble/curves 2.x asks for Node >= 20.19, so a machine that already
# has a newer node keeps it.
if ! command -v node >/dev/null 2>&1; then
  $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
elif ! command -v npm >/dev/null 2>&1; then
  $SUDO apt-get install -y -qq --no-install-recommends npm >/dev/null
fi
node_version="$(node --version)"
case "$node_version" in
  v1[0-9].*|v20.1[0-8].*|v20.[0-9].*)
    echo "setup: warning: node $node_version is older than the 20.19 that @noble/curves 2.x asks for" >&2 ;;
esac
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(cd "$repo_root" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
node --input-type=module -e "import('$repo_root/node_modules/@noble/curves/bls12-381.js')" \
  || { echo "setup: node cannot load @noble/curves from $repo_root/node_modules" >&2; exit 1; }
echo "setup: node $node_version and the npm test packages installed"
