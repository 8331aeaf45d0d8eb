#!/usr/bin/env bash
# Installs a real VS Code for extension end-to-end tests, using only the npm
# registry and Debian's apt repositories:
#   - code-server (VS Code 1.100.3 served to a browser) from npm,
#   - Debian's chromium, to be driven by playwright-core (a project devDependency).
# Idempotent: a second run only checks and prints the paths.
# Usage: setup.sh [PREFIX]   (default: $VSCODE_E2E_HOME or $HOME/.cache/vscode-e2e)
# Prints KEY=value lines at the end and writes them to PREFIX/paths.env.
set -euo pipefail

CS_VERSION="${CODE_SERVER_VERSION:-4.100.3}"   # bundles VS Code 1.100.3; needs Node 20
PREFIX="${1:-${VSCODE_E2E_HOME:-$HOME/.cache/vscode-e2e}}"
mkdir -p "$PREFIX" && PREFIX="$(cd "$PREFIX" && pwd)"
CS_DIR="$PREFIX/code-server"
CS_BIN="$CS_DIR/node_modules/.bin/code-server"

# code-server's install script refuses any Node major other than 20.
node_major="$(node -p 'process.versions.node.split(".")[0]')"
[ "$node_major" = 20 ] || { echo "setup.sh: code-server $CS_VERSION needs Node 20, found $(node -v)" >&2; exit 1; }

# 1. Debian packages: chromium (the browser), ripgrep (feeds the ripgrep cache below),
#    libkrb5-dev (headers for VS Code's native 'kerberos' module), build tools for node-gyp.
missing=()
for p in chromium ripgrep libkrb5-dev g++ make python3; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The first run of code-server writes ~/.config/code-server/config.yaml and logs that
# before the version line, so pick the line that starts with a digit.
cs_version() { "$CS_BIN" --version 2>/dev/null | grep -E '^[0-9]' | head -n1 || true; }

# 2. code-server from npm, unless this version is already there.
if [[ "$(cs_version)" != "$CS_VERSION "* ]]; then
  # @vscode/ripgrep's postinstall downloads rg from GitHub unless it finds this archive in
  # $TMPDIR/vscode-ripgrep-cache-<pkg version>/; build it from Debian's rg instead.
  # (Pinned for code-server 4.100.3: @vscode/ripgrep 1.15.11 fetches ripgrep v13.0.0-10.)
  RG_CACHE="$PREFIX/tmp/vscode-ripgrep-cache-1.15.11"
  mkdir -p "$RG_CACHE" "$PREFIX/tmp/rg"
  cp /usr/bin/rg "$PREFIX/tmp/rg/rg"
  tar czf "$RG_CACHE/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$PREFIX/tmp/rg" rg

  rm -rf "$CS_DIR" && mkdir -p "$CS_DIR"
  echo '{"name":"vscode-e2e-code-server","private":true}' > "$CS_DIR/package.json"
  # unsafe_perm: code-server's postinstall (npm install in lib/vscode) demands it when run as root.
  # argon2 tries a prebuilt download, fails, and builds from source (needs g++/make/python3).
  (cd "$CS_DIR" && TMPDIR="$PREFIX/tmp" npm_config_unsafe_perm=true npm_config_yes=true \
     npm install --no-audit --no-fund --loglevel=error "code-server@$CS_VERSION")
  [[ "$(cs_version)" == "$CS_VERSION "* ]] || { echo "setup.sh: code-server install failed" >&2; exit 1; }
fi

# 3. Report.
{
  echo "CODE_SERVER=$CS_BIN"
  echo "CODE_SERVER_VSCODE_DIR=$CS_DIR/node_modules/code-server/lib/vscode"
  echo "CHROMIUM=/usr/bin/chromium"
  echo "VSCODE_E2E_HOME=$PREFIX"
} | tee "$PREFIX/paths.env"
cs_version
/usr/bin/chromium --version 2>/dev/null   # stderr hidden: /etc/chromium.d may print a harmless '[: ...: unexpected operator'

