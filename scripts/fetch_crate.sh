#!/usr/bin/env bash
# fetch_crate.sh NAME VERSION DESTDIR
#
# Obtain the source of one crate at an exact version through cargo's ordinary client and unpack
# it into DESTDIR/NAME-VERSION/.  We let cargo resolve and download it (so its configured
# registry, mirrors and proxies apply) instead of naming a registry host here: a throw-away
# Cargo project pins the crate, `cargo fetch` fills $CARGO_HOME/registry/cache, and the
# .crate file found there (a tar.gz) is extracted.
#
# Exit status: 0 on success (DESTDIR/NAME-VERSION exists), non-zero otherwise.
set -euo pipefail

if [ $# -ne 3 ]; then
    echo "usage: $0 NAME VERSION DESTDIR" >&2
    exit 2
fi
name=$1
version=$2
dest=$3

if [ -d "$dest/$name-$version" ]; then
    echo "fetch_crate: $dest/$name-$version already present" >&2
    exit 0
fi

if ! command -v cargo >/dev/null 2>&1; then
    echo "fetch_crate: cargo not found" >&2
    exit 1
fi

cargo_home=${CARGO_HOME:-$HOME/.cargo}

find_crate() {
    # The cache directory is named after the registry (e.g. index.crates.io-<hash>); any will do.
    local f
    for f in "$cargo_home"/registry/cache/*/"$name-$version.crate"; do
        if [ -f "$f" ]; then
            echo "$f"
            return 0
        fi
    done
    return 1
}

crate=$(find_crate || true)
if [ -z "$crate" ]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    mkdir -p "$tmp/src"
    cat >"$tmp/Cargo.toml" <<TOML
[package]
name = "cb-fetch-crate"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
$name = "=$version"
TOML
    echo 'fn main() {}' >"$tmp/src/main.rs"
    # cargo fetch downloads the whole dependency graph; we only keep the one crate.
    if ! (cd "$tmp" && cargo fetch --quiet); then
        echo "fetch_crate: cargo fetch failed for $name $version" >&2
        exit 1
    fi
    crate=$(find_crate || true)
    if [ -z "$crate" ]; then
        echo "fetch_crate: $name-$version.crate not found under $cargo_home/registry/cache" >&2
        exit 1
    fi
fi

# Unpack into a temporary directory next to the destination, then rename, so that an
# interrupted run never leaves a half-extracted tree that looks complete.
mkdir -p "$dest"
stage=$(mktemp -d "$dest/.fetch.XXXXXX")
if ! tar -xzf "$crate" -C "$stage"; then
    rm -rf "$stage"
    echo "fetch_crate: cannot extract $crate" >&2
    exit 1
fi
if [ ! -d "$stage/$name-$version" ]; then
    rm -rf "$stage"
    echo "fetch_crate: $crate does not contain $name-$version/" >&2
    exit 1
fi
mv "$stage/$name-$version" "$dest/$name-$version"
rmdir "$stage"
echo "fetch_crate: unpacked $crate into $dest/$name-$version" >&2
