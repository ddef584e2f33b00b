#!/usr/bin/env bash
# Installs a real VS Code for the extension's end-to-end tests, offline from the npm registry
# and Debian: code-server 4.100.3 (VS Code 1.100.3, the last release that runs on Node 20) and
# Debian's chromium, which playwright-core drives. @vscode/test-electron would download a
# desktop VS Code build, which needs network access to update.code.visualstudio.com.
#
# Usage: test/e2e/install.sh [DIR]   (default: .e2e/ in the repository; idempotent)
set -euo pipefail
cd "$(dirname "$0")/../.."
DIR="${1:-$PWD/.e2e}"
mkdir -p "$DIR" && DIR="$(cd "$DIR" && pwd)"   # absolute: the script changes directory below
VERSION=4.100.3

# Prints the version; fails when code-server cannot start (e.g. a native module is missing).
# --config and the XDG dirs keep it from writing config and logs into the home directory.
verify() {
  local tmp rc=0
  tmp="$(mktemp -d)"
  XDG_CONFIG_HOME="$tmp" XDG_DATA_HOME="$tmp" XDG_CACHE_HOME="$tmp" \
    "$DIR/code-server/node_modules/.bin/code-server" --config "$tmp/config.yaml" --version >&2 || rc=$?
  rm -rf "$tmp"
  return "$rc"
}

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  missing=()
  for p in chromium libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev pkg-config ripgrep; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

# The marker is written only after the install was verified; an install that no longer starts
# (an older version of this script left argon2 unbuilt) is redone.
if [ -f "$DIR/code-server/.installed-$VERSION" ]; then
  if verify 2>/dev/null; then
    echo "code-server $VERSION already installed in $DIR/code-server" >&2
    exit 0
  fi
  echo "code-server in $DIR/code-server does not start; installing again" >&2
  rm -f "$DIR/code-server/.installed-$VERSION"
fi

mkdir -p "$DIR/code-server"
cd "$DIR/code-server"
# A folder of its own with a package.json: an npm install elsewhere cannot remove it.
[ -f package.json ] || npm init -y >/dev/null
export npm_config_yes=true npm_config_unsafe_perm=true npm_config_nodedir=/usr npm_config_audit=false npm_config_fund=false
# Its postinstall downloads ripgrep from GitHub; run the steps it would run by hand instead.
npm install "code-server@$VERSION" --ignore-scripts --no-save=false >/dev/null
cd node_modules/code-server/lib/vscode
npm install --omit=dev --ignore-scripts >/dev/null
mkdir -p node_modules/@vscode/ripgrep/bin
cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
npm rebuild >/dev/null
ln -sfn node_modules node_modules.asar
(cd bin/remote-cli && ln -sfn code-linux.sh code-server)
(cd bin/helpers && ln -sfn browser-linux.sh browser.sh)
(cd extensions && npm install --omit=dev >/dev/null)
# argon2 is hoisted to the install root ($DIR/code-server/node_modules), not into
# node_modules/code-server: rebuild it from the root, or code-server cannot start.
cd "$DIR/code-server"
npm rebuild argon2 >/dev/null
verify   # set -e: no marker when it does not start
touch "$DIR/code-server/.installed-$VERSION"
echo "installed code-server $VERSION in $DIR/code-server" >&2
