#!/usr/bin/env bash
# Installs the corpora of the search-quality benchmark (version 1).
# Debian packages go to their usual places; npm packages and the one zip-extracted
# corpus are unpacked under .bench/quality/<id>/ at the repository root.
# Idempotent: what is already there is skipped. Needs root (apt-get), npm and unzip.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
bench="$repo/.bench/quality"
mkdir -p "$bench/npm"

# --- Debian packages -------------------------------------------------------
debs=(golang-1.19-src libpython3.11-stdlib rust-src libruby3.1 perl-modules-5.36 lua-penlight
      php-league-commonmark erlang-src ocaml nim libgphobos-12-dev tcllib cl-alexandria
      swi-prolog-core openjdk-17-source nlohmann-json3-dev bash-completion postgresql-15
      elpa-magit guile-3.0-libs vim-runtime cmake-data unzip)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends golang-1.19-src libpython3.11-stdlib rust-src libruby3.1 perl-modules-5.36 lua-penlight php-league-commonmark erlang-src ocaml nim libgphobos-12-dev tcllib cl-alexandria swi-prolog-core openjdk-17-source nlohmann-json3-dev bash-completion postgresql-15 elpa-magit guile-3.0-libs vim-runtime cmake-data unzip
fi

# --- npm packages ------------------------------------------------------------
npm_corpus() { # id spec
  local id="$1" spec="$2"
  local dest="$bench/$id"
  if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$spec" ]; then return 0; fi
  local name="${spec%@*}" version="${spec##*@}"
  local tgz="$bench/npm/$(echo "${name#@}" | tr '/' '-')-$version.tgz"
  if [ ! -f "$tgz" ]; then
    (cd "$bench/npm" && npm pack --silent "$spec" >/dev/null)
  fi
  rm -rf "$dest"; mkdir -p "$dest"
  tar -xzf "$tgz" -C "$dest"
  echo "$spec" > "$dest/.installed"
}
npm_corpus ts-rxjs rxjs@7.8.1
npm_corpus js-moment moment@2.30.1
npm_corpus swift-capacitor @capacitor/ios@5.7.0
npm_corpus objc-cordova-ios cordova-ios@7.1.0
npm_corpus kotlin-expo expo-modules-core@1.11.8
npm_corpus c-libxml2 libxmljs2@0.33.0

# --- one module of the OpenJDK 17 sources (src.zip of openjdk-17-source) ----
zip_corpus() { # id zip member-dir
  local id="$1" zip="$2" member="$3"
  local dest="$bench/$id"
  if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$zip:$member" ]; then return 0; fi
  rm -rf "$dest"; mkdir -p "$dest"
  unzip -q "$zip" "$member/*" -d "$dest"
  echo "$zip:$member" > "$dest/.installed"
}
jdk_src_zip="$(ls /usr/lib/jvm/java-17-openjdk-*/lib/src.zip 2>/dev/null | head -n 1)"
[ -n "$jdk_src_zip" ] || { echo "openjdk-17-source: src.zip not found" >&2; exit 1; }
zip_corpus java-concurrent "$jdk_src_zip" java.base/java/util/concurrent

echo "bench corpora installed under $bench and in Debian's paths"
