#!/usr/bin/env bash
# Installs what coprove builds with, from Debian's packages (run as root on a fresh machine).
set -euo pipefail
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake ninja-build git curl ca-certificates \
  libboost1.81-dev libboost-log1.81-dev libboost-json1.81-dev libboost-program-options1.81-dev \
  libboost-thread1.81-dev catch2 libbenchmark-dev clang libclang-rt-14-dev >/dev/null
echo "setup: packages installed"
