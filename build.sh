#!/usr/bin/env bash
# Builds everything jemalloc.NET needs on Linux x64, then (optionally) runs a command.
#
#   ./build.sh                 native jemalloc (if not up to date) + the solution in Release
#   ./build.sh jembench [ARGS] ... then runs jembench with ARGS; without ARGS, the main job:
#                              jembench array --fill 10000000 100000000 -l -u
#                              (installs Debian's libmimalloc2.0 if missing, for the alloc suite's row)
#   ./build.sh test            ... (all three natives) then runs the test suite natively (linux-x64), a
#                              representative part of it as linux-arm64 under qemu-user and as win-x64
#                              under wine (hard time limits), test-package and test-benchmark
#   ./build.sh native          only this machine's native library
#   ./build.sh native-all      the native libraries for linux-x64, linux-arm64 and win-x64
#   ./build.sh pack            ... then makes the NuGet package (all three natives) and the add-on packages
#                              (jemalloc.NET.Parquet, jemalloc.NET.Arrow, jemalloc.NET.Caching) into artifacts/packages
#   ./build.sh test-linux-arm64 [ARGS]  only the linux-arm64 part of test (ARGS go to the test runner)
#   ./build.sh test-win-x64 [ARGS]  only the win-x64 part of test (under wine)
#   ./build.sh test-package    an app referencing only the package, and one referencing the add-on
#                              packages, published and run per RID (under its emulator)
#   ./build.sh info-all        jembench info per RID under its emulator
#   ./build.sh test-emulated   test-linux-arm64, test-win-x64, test-package and info-all in one run
#   ./build.sh test-benchmark  an out-of-process benchmark smoke run in the source tree (jembench alloc
#                              --quick: BenchmarkDotNet builds and starts its benchmark processes), then
#                              fails if a symbolic link in the tree leads out of it (the end of test)
#   ./build.sh compare-builds OLD [NEW] [OPTIONS]  the library at revision OLD against NEW (a revision;
#                              by default the working tree): the same timing code (jemalloc.PerfCompare)
#                              built against each, both run in one invocation, interleaved round by round
#                              (FixedBuffer create+free, SafeArray indexer loops, JemMemoryPool rent,
#                              NativeBufferWriter throughput); prints new/old per measurement and PASS/FAIL
#                              at 3% (exit 5 when one fails); OPTIONS: ./build.sh compare-builds --help
#   ./build.sh docs            the documentation site (docs/ and the API reference, DocFX) into
#                              artifacts/docs; a DocFX warning fails it
#
# Environment:
#   JEMALLOC_SRC=path    a jemalloc 5.3.0 source tarball (.tar.bz2/.tar.gz) or directory to use
#                        instead of Debian's source package
#   JEMALLOC_DEBUG=1     build jemalloc with --enable-debug (a checked build; slow)
#   JEMALLOC_NET_NO_INSTALL=1  never install missing tools with apt-get; just report them
#   JEMALLOC_NET_EMULATED_TESTS=all  run the whole suite under the emulators, not the representative part
#   JEMALLOC_NET_EMULATED_TIMEOUT=s  hard limit for one emulated test run (default 1200 s; 0 = none)
#   JEMALLOC_NET_WINEPREFIX=path  the wine prefix to use (default: one per clone, outside the tree, in
#                        ${XDG_CACHE_HOME:-$HOME/.cache}/jemalloc.NET/wine/<folder>-<key>)
#   CONFIGURATION=Debug  build the solution in Debug instead of Release
set -Eeuo pipefail

readonly ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# The same folder with every symbolic link resolved: what a link's target is compared with.
readonly ROOT_REAL="$(cd "$ROOT" && pwd -P)"
readonly JEMALLOC_VERSION="5.3.0"
readonly JEMALLOC_GIT_VERSION="5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c"
readonly JEMALLOC_TARBALL="jemalloc_${JEMALLOC_VERSION}.orig.tar.bz2"
readonly JEMALLOC_SHA256="2db82d1e7119df3e71b7640219b6dfe84789bc0537983c3b7ac4f7189aecfeaa"
# The library's name carries a suffix so it can never be mistaken for a system libjemalloc.so.2 or a
# jemalloc.dll, which export no je_ symbols: libjemallocnet.so on Linux, jemallocnet.dll on Windows.
readonly NATIVE_DIR="$ROOT/jemalloc"
readonly DOWNLOAD_DIR="$NATIVE_DIR/download"
readonly CONFIGURATION="${CONFIGURATION:-Release}"
# The library's own defaults, compiled in (jemalloc's config.malloc_conf); Jem.Init / JE_MALLOC_CONF
# override them. Big arrays are this library's business, and measured here jemalloc's stock
# settings return every freed large block to the kernel at once (the dedicated oversize arena purges
# eagerly, and muzzy pages are purged immediately), so creating a 100M-element array again costs
# ~195,000 page faults each time. These keep freed large blocks on jemalloc's lists as MADV_FREE
# (lazily freed) pages, which the kernel still reclaims under memory pressure.
readonly JEMALLOC_DEFAULT_CONF="oversize_threshold:0,muzzy_decay_ms:-1"

step() { printf '\n==> %s\n' "$*"; }
# die exits with 3 so that the ERR trap, which also fires in the parent of a failing subshell,
# does not report the same failure twice.
die() { printf '\nbuild.sh: error: %s\n' "$*" >&2; exit 3; }
on_error() { local rc=$1; [ "$rc" -eq 3 ] && exit 3; die "command failed (exit $rc) at line $2: $3"; }
trap 'on_error $? $LINENO "$BASH_COMMAND"' ERR

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi; }

APT_UPDATED=0
apt_install() {
  [ "${JEMALLOC_NET_NO_INSTALL:-0}" = 1 ] && die "missing: $* (install them, or unset JEMALLOC_NET_NO_INSTALL)"
  command -v apt-get >/dev/null || die "missing: $* and no apt-get to install them with"
  if [ "$APT_UPDATED" = 0 ]; then as_root apt-get update -qq || die "apt-get update failed"; APT_UPDATED=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null \
    || die "apt-get install $* failed"
}

need_tools() {
  local missing=() tool
  for tool in gcc make bzip2 sha256sum objcopy nm; do command -v "$tool" >/dev/null || missing+=("$tool"); done
  if [ ${#missing[@]} -gt 0 ]; then
    step "installing build tools: ${missing[*]}"
    local pkgs=()
    for tool in "${missing[@]}"; do
      case "$tool" in gcc) pkgs+=(gcc libc6-dev) ;; sha256sum) pkgs+=(coreutils) ;; objcopy|nm) pkgs+=(binutils) ;; *) pkgs+=("$tool") ;; esac
    done
    apt_install "${pkgs[@]}"
  fi
  command -v dotnet >/dev/null || die "the .NET SDK 10 (dotnet) is not on PATH: install it first"
}

# Adds deb-src entries mirroring the machine's own Debian sources (no host name is written here:
# the URIs are copied from the entries apt already uses), then downloads the source package.
fetch_debian_source() {
  command -v apt-get >/dev/null || die "no apt-get: set JEMALLOC_SRC to a jemalloc $JEMALLOC_VERSION tarball"
  local src_list=/etc/apt/sources.list.d/jemalloc-net-src.sources
  if ! apt-get source --print-uris jemalloc >/dev/null 2>&1; then
    step "enabling Debian source packages"
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
      sed 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources | as_root tee "$src_list" >/dev/null
    elif [ -f /etc/apt/sources.list ]; then
      grep -E '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' \
        | as_root tee /etc/apt/sources.list.d/jemalloc-net-src.list >/dev/null
    else
      die "found no Debian apt sources to derive deb-src entries from; set JEMALLOC_SRC"
    fi
    as_root apt-get update -qq || die "apt-get update failed"
    APT_UPDATED=1
  fi
  step "downloading jemalloc $JEMALLOC_VERSION source (Debian source package)"
  mkdir -p "$DOWNLOAD_DIR"
  (cd "$DOWNLOAD_DIR" && apt-get source --download-only "jemalloc=${JEMALLOC_VERSION}-*" >/dev/null 2>&1 \
    || apt-get source --download-only jemalloc >/dev/null) || die "apt-get source jemalloc failed"
  [ -f "$DOWNLOAD_DIR/$JEMALLOC_TARBALL" ] || die "the source package has no $JEMALLOC_TARBALL (another jemalloc version?)"
}

verify_tarball() {
  local actual
  actual="$(sha256sum "$1" | cut -d' ' -f1)"
  [ "$actual" = "$JEMALLOC_SHA256" ] || die "checksum mismatch for $1: expected $JEMALLOC_SHA256, got $actual"
}

# Prints the path of an unpacked, verified jemalloc source tree.
prepare_source() {
  local src_dir="$NATIVE_DIR/src/jemalloc-$JEMALLOC_VERSION"
  if [ -n "${JEMALLOC_SRC:-}" ]; then
    if [ -d "$JEMALLOC_SRC" ]; then
      [ -f "$JEMALLOC_SRC/configure" ] || die "JEMALLOC_SRC=$JEMALLOC_SRC has no configure script"
      echo "$(cd "$JEMALLOC_SRC" && pwd)"; return
    fi
    [ -f "$JEMALLOC_SRC" ] || die "JEMALLOC_SRC=$JEMALLOC_SRC is neither a file nor a directory"
    # A user's tarball is checked only when it is the known release file.
    case "$(basename "$JEMALLOC_SRC")" in *.bz2) verify_tarball "$JEMALLOC_SRC" ;; esac
    local tarball="$JEMALLOC_SRC"
  else
    local tarball="$DOWNLOAD_DIR/$JEMALLOC_TARBALL"
    [ -f "$tarball" ] || fetch_debian_source >&2
    verify_tarball "$tarball"
  fi
  if [ ! -f "$src_dir/configure" ] || [ "$tarball" -nt "$src_dir/configure" ]; then
    step "unpacking $(basename "$tarball")" >&2
    rm -rf "$src_dir" && mkdir -p "$NATIVE_DIR/src"
    tar -xf "$tarball" -C "$NATIVE_DIR/src"
    [ -f "$src_dir/configure" ] || die "unpacking $tarball did not give $src_dir/configure"
    touch "$src_dir/configure"
  fi
  echo "$src_dir"
}

# ---- native targets -------------------------------------------------------------------------------
# Every target is built from the same verified source, with the same flags, into jemalloc/bin/<rid>/:
#   linux-x64    libjemallocnet.so  (gcc, or the x86_64 cross gcc on another host)
#   linux-arm64  libjemallocnet.so  (Debian's aarch64 cross gcc on an x64 host)
#   win-x64      jemallocnet.dll    (MinGW-w64; imports only KERNEL32.dll and msvcrt.dll)
readonly ALL_RIDS=(linux-x64 linux-arm64 win-x64)

host_rid() {
  case "$(uname -m)" in
    x86_64|amd64) echo linux-x64 ;;
    aarch64|arm64) echo linux-arm64 ;;
    *) die "no native target for this machine ($(uname -m)); jemalloc.NET builds for ${ALL_RIDS[*]}" ;;
  esac
}

# Sets, for one RID: T_CC (compiler), T_PREFIX (binutils prefix), T_PKGS (Debian packages that provide
# them), T_FLAGS (extra configure flags), T_BUILT (what make produces) and T_NAME (the shipped name).
target_settings() {
  local rid="$1" host
  host="$(host_rid)"
  T_FLAGS=() T_PREFIX="" T_CC=gcc T_PKGS=(gcc libc6-dev binutils)
  case "$rid" in
    linux-x64)
      T_NAME="libjemallocnet.so" T_BUILT="lib/libjemallocnet.so.2"
      if [ "$host" != linux-x64 ]; then
        T_PREFIX="x86_64-linux-gnu-" T_CC="x86_64-linux-gnu-gcc" T_PKGS=(gcc-x86-64-linux-gnu libc6-dev-amd64-cross)
        T_FLAGS+=(--host=x86_64-linux-gnu)
      fi ;;
    linux-arm64)
      T_NAME="libjemallocnet.so" T_BUILT="lib/libjemallocnet.so.2"
      if [ "$host" != linux-arm64 ]; then
        T_PREFIX="aarch64-linux-gnu-" T_CC="aarch64-linux-gnu-gcc" T_PKGS=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
        T_FLAGS+=(--host=aarch64-linux-gnu)
      fi
      # Page size. jemalloc fixes its page size (LG_PAGE) at compile time and, when it starts
      # (pages_boot in src/pages.c), refuses to run only if the kernel's page is LARGER than that:
      # "<jemalloc>: Unsupported system page size", and every allocation fails. A larger LG_PAGE on a
      # smaller-page kernel is fine, since every 64 KiB-aligned range it maps, commits or purges is also
      # a whole number of 4 KiB pages. ARM64 Linux kernels come with 4 KiB (most distributions,
      # Graviton's Amazon Linux) or 64 KiB pages (RHEL/Oracle/Ampere setups), and a configure run on
      # this x64 host would detect 4 KiB, so one binary for both must say 64 KiB. The price on 4 KiB
      # kernels: coarser purging (64 KiB) and bigger slabs; the smallest large size class is 256 KiB
      # instead of 16 KiB. Checked under qemu on a 4 KiB host: arenas.page reports 65536 and allocation
      # works. The huge page size is fixed too (configure would read THIS machine's /proc/meminfo): 2 MiB,
      # the PMD size of a 4 KiB kernel. It only matters with thp/metadata_thp options, which this library
      # does not enable on arm64 (HugePageInfo reports huge pages unavailable there).
      T_FLAGS+=(--with-lg-page=16 --with-lg-hugepage=21) ;;
    win-x64)
      # The "-win32" compiler uses Windows threads (the "-posix" one would make the DLL depend on
      # libwinpthread-1.dll), and -static-libgcc keeps libgcc_s_seh-1.dll out, so the DLL imports only
      # KERNEL32.dll and msvcrt.dll. It reads JE_MALLOC_CONF with msvcrt's getenv (see Jem.Init).
      T_NAME="jemallocnet.dll" T_BUILT="lib/jemallocnet.dll"
      T_PREFIX="x86_64-w64-mingw32-" T_CC="x86_64-w64-mingw32-gcc-win32" T_PKGS=(gcc-mingw-w64-x86-64 binutils-mingw-w64-x86-64)
      T_FLAGS+=(--host=x86_64-w64-mingw32) ;;
    *) die "unknown native target '$rid' (known: ${ALL_RIDS[*]})" ;;
  esac
}

# Installs what building for one RID needs (apt, one at a time: dpkg takes a lock).
need_toolchain() {
  local rid="$1"
  need_tools
  target_settings "$rid"
  local missing=() tool
  for tool in "$T_CC" "${T_PREFIX}objcopy" "${T_PREFIX}nm" "${T_PREFIX}objdump"; do
    command -v "$tool" >/dev/null || missing+=("$tool")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    step "installing the $rid toolchain: ${T_PKGS[*]}"
    apt_install "${T_PKGS[@]}"
    for tool in "${missing[@]}"; do command -v "$tool" >/dev/null || die "$tool is still missing after installing ${T_PKGS[*]}"; done
  fi
}

build_native_rid() {
  local rid="$1" started=$SECONDS
  need_toolchain "$rid"
  local src flavor flags
  src="$(prepare_source)"
  if [ "${JEMALLOC_DEBUG:-0}" = 1 ]; then flavor=debug; else flavor=release; fi
  flags=(--with-jemalloc-prefix=je_ --with-install-suffix=net --disable-initial-exec-tls --disable-cxx
         "--with-version=$JEMALLOC_GIT_VERSION" --disable-static --enable-stats
         "--with-malloc-conf=$JEMALLOC_DEFAULT_CONF" "${T_FLAGS[@]}")
  [ "$flavor" = debug ] && flags+=(--enable-debug)
  local build_dir="$NATIVE_DIR/build/$rid-$flavor" output_dir="$NATIVE_DIR/bin/$rid"
  local stamp="$build_dir/.configured" output="$output_dir/$T_NAME"
  local cc_env=()
  [ "$T_CC" != gcc ] && cc_env=("CC=$T_CC")
  [ "$rid" = win-x64 ] && cc_env+=("LDFLAGS=-static-libgcc")
  mkdir -p "$build_dir" "$output_dir"
  # The stamp holds the whole configure command: any change of flags or compiler reconfigures.
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "${cc_env[*]} ${flags[*]}" ] || [ "$src/configure" -nt "$stamp" ]; then
    step "configuring jemalloc for $rid ($flavor)"
    (cd "$build_dir" && env "${cc_env[@]}" "$src/configure" "${flags[@]}" >configure.log 2>&1) \
      || { tail -n 30 "$build_dir/configure.log" >&2; die "jemalloc configure for $rid failed (log: $build_dir/configure.log)"; }
    echo "${cc_env[*]} ${flags[*]}" >"$stamp"
  fi
  step "building jemalloc for $rid ($flavor)"
  # Only the shared library (no static library, tests or docs). A release build compiles without
  # debug information (-g0 comes after configure's -g3; the code is the same): the shipped file is
  # stripped of it anyway, and -g3 (with macro tables) is a good part of the compile time.
  local make_vars=()
  [ "$flavor" = release ] && make_vars=(EXTRA_CFLAGS=-g0)
  (cd "$build_dir" && make -j"$(nproc)" build_lib_shared "${make_vars[@]}" >make.log 2>&1) \
    || { tail -n 30 "$build_dir/make.log" >&2; die "jemalloc make for $rid failed (log: $build_dir/make.log)"; }
  local built="$build_dir/$T_BUILT"
  [ -f "$built" ] || die "make did not produce $built"
  if [ "$built" -nt "$output" ] || [ "$(cat "$output_dir/FLAVOR" 2>/dev/null)" != "$flavor" ]; then
    # The shipped library keeps only its symbols (a debug build's debug info stays in the build tree).
    "${T_PREFIX}objcopy" --strip-debug "$built" "$output"
    echo "$flavor" >"$output_dir/FLAVOR"
  fi
  check_native "$rid" "$output"
  echo "native library: $output ($rid, $flavor; $((SECONDS - started)) s)"
}

# The shipped file must export the je_ functions and, for Windows, need nothing but the system's DLLs.
check_native() {
  local rid="$1" file="$2"
  if [ "$rid" = win-x64 ]; then
    local dump imports
    dump="$("${T_PREFIX}objdump" -p "$file")"
    grep -qE '^[[:space:]]*\[ *[0-9]+\] je_mallocx$' <<<"$dump" \
      || die "$file does not export je_mallocx: the je_ prefix is missing"
    imports="$(sed -n 's/^[[:space:]]*DLL Name: //p' <<<"$dump" | tr 'A-Z' 'a-z' | sort -u | tr '\n' ' ')"
    [ "$imports" = "kernel32.dll msvcrt.dll " ] \
      || die "$file imports '$imports'; expected only kernel32.dll and msvcrt.dll (a MinGW runtime DLL would be missing on Windows)"
  else
    "${T_PREFIX}nm" -D --defined-only "$file" | grep -q ' je_mallocx$' \
      || die "$file does not export je_mallocx: the je_ prefix is missing"
  fi
}

build_native() { build_native_rid "$(host_rid)"; }

# The three builds run side by side: most of a fresh build is jemalloc's configure, one shell
# process each, so on a machine with few cores three at once take little longer than one. Tools and
# the source are prepared first, one at a time (apt and the unpacking must not race). Each build's
# output goes to its own log, printed when it ends.
build_native_all() {
  local rid started=$SECONDS pids=() failed=()
  for rid in "${ALL_RIDS[@]}"; do need_toolchain "$rid"; done
  prepare_source >/dev/null
  mkdir -p "$NATIVE_DIR/build"
  for rid in "${ALL_RIDS[@]}"; do
    ( build_native_rid "$rid" ) >"$NATIVE_DIR/build/$rid.log" 2>&1 &
    pids+=($!)
  done
  local i
  for i in "${!ALL_RIDS[@]}"; do
    wait "${pids[$i]}" || failed+=("${ALL_RIDS[$i]}")
    cat "$NATIVE_DIR/build/${ALL_RIDS[$i]}.log"
  done
  echo "native libraries (${ALL_RIDS[*]}) took $((SECONDS - started)) s"
  [ ${#failed[@]} -eq 0 ] || die "the native build failed for: ${failed[*]} (logs above)"
}

# mimalloc is only a comparison row of `jembench alloc`: without it (no apt-get, or
# JEMALLOC_NET_NO_INSTALL=1) jembench says so and leaves the row out; nothing else needs it.
need_mimalloc() {
  { ldconfig -p 2>/dev/null || true; } | grep -q 'libmimalloc\.so\.2' && return 0
  if [ "${JEMALLOC_NET_NO_INSTALL:-0}" = 1 ] || ! command -v apt-get >/dev/null; then
    echo "mimalloc (Debian's libmimalloc2.0) is missing: jembench alloc will skip its row"
    return 0
  fi
  step "installing libmimalloc2.0 (the mimalloc row of jembench alloc)"
  (apt_install libmimalloc2.0) || echo "could not install libmimalloc2.0: jembench alloc will skip its row"
}

# Apache Arrow for JavaScript: the independent reader and writer the Arrow add-on's tests check
# against (jemalloc.Arrow.Tests runs arrow-check.js under Node). Installed with npm into
# artifacts/node, which git ignores, the way missing toolchains are installed with apt-get.
readonly NODE_ARROW_VERSION="21.2.0"
readonly NODE_DIR="$ROOT/artifacts/node"

need_node_arrow() {
  local installed="$NODE_DIR/node_modules/apache-arrow/package.json"
  if [ -f "$installed" ] && grep -q "\"version\": \"$NODE_ARROW_VERSION\"" "$installed"; then return 0; fi
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    step "installing Node and npm (the Arrow tests' JavaScript client)"
    apt_install nodejs npm
  fi
  step "installing apache-arrow $NODE_ARROW_VERSION for Node into artifacts/node"
  mkdir -p "$NODE_DIR"
  npm install --prefix "$NODE_DIR" --no-audit --no-fund --no-save "apache-arrow@$NODE_ARROW_VERSION" >"$NODE_DIR/npm.log" 2>&1 \
    || { tail -n 20 "$NODE_DIR/npm.log" >&2; die "npm install apache-arrow@$NODE_ARROW_VERSION failed (log: $NODE_DIR/npm.log)"; }
}

build_solution() {
  step "building jemalloc.NET.sln ($CONFIGURATION)"
  dotnet build "$ROOT/jemalloc.NET.sln" -c "$CONFIGURATION" --nologo -v minimal \
    || die "dotnet build failed"
}

# The add-on packages: each depends on the core package (same version) and on its own library's
# package, which brings that library's natives; they carry no natives of their own.
readonly ADDON_PROJECTS=(jemalloc.Parquet/jemalloc.Parquet.csproj jemalloc.Arrow/jemalloc.Arrow.csproj jemalloc.Caching/jemalloc.Caching.csproj)

# The documentation site: DocFX, a local .NET tool (.config/dotnet-tools.json), reads the library's
# project for the API reference, and docs/, README.md and CHANGELOG.md for the articles (docfx.json,
# toc.yml). A warning (a broken link or bookmark, a missing file, an unresolved reference) fails it.
build_docs() {
  step "building the documentation site into artifacts/docs"
  (cd "$ROOT" && dotnet tool restore) >/dev/null || die "dotnet tool restore failed (DocFX, .config/dotnet-tools.json)"
  rm -rf "$ROOT/artifacts/docs" "$ROOT/artifacts/docs-api"
  # --warningsAsErrors makes DocFX exit non-zero on a warning, yet it still prints "Build succeeded with warning".
  (cd "$ROOT" && dotnet docfx docfx.json --warningsAsErrors) \
    || die "the documentation build failed: a DocFX warning counts as an error (see above)"
  # The site's home is the README (README.html); the template's home link and a served folder ask for index.html.
  printf '<!DOCTYPE html>\n<meta charset="utf-8">\n<meta http-equiv="refresh" content="0; url=README.html">\n<title>jemalloc.NET</title>\n<a href="README.html">jemalloc.NET</a>\n' \
    >"$ROOT/artifacts/docs/index.html"
  echo "documentation: $ROOT/artifacts/docs/index.html"
}

pack_package() {
  step "packing jemalloc.NET (linux-x64, linux-arm64, win-x64)"
  dotnet pack "$ROOT/jemalloc.Api/jemalloc.Api.csproj" -c "$CONFIGURATION" --no-build --nologo \
    -o "$ROOT/artifacts/packages" "$@" || die "dotnet pack failed"
  local project
  for project in "${ADDON_PROJECTS[@]}"; do
    step "packing the add-on $(basename "$project" .csproj)"
    dotnet pack "$ROOT/$project" -c "$CONFIGURATION" --no-build --nologo \
      -o "$ROOT/artifacts/packages" "$@" || die "dotnet pack $(basename "$project") failed"
  done
}

# ---- running other targets under emulators -------------------------------------------------------
# linux-arm64 runs under qemu-user (qemu-aarch64-static, with Debian's aarch64 C library from the
# cross toolchain as its root), win-x64 under wine. Both run self-contained .NET apps published for
# their RID: there is no SDK on the "target", as there is none on a user's server.
readonly EMULATED_DIR="$ROOT/artifacts/emulated"
# The wine prefix lives outside the source tree. A prefix is full of links out of itself: drive z:
# is /, the user's folders (Desktop, Documents, ...) are $HOME, com1 is /dev/ttyS0. Inside the tree
# (artifacts/emulated/wineprefix, until issue 33) they broke every out-of-process benchmark:
# BenchmarkDotNet looks for the benchmarks' project through the whole tree, following links into
# folders, and went through z: into / (UnauthorizedAccessException on /proc/1/map_files). One prefix
# per clone, keyed by the clone's folder: a run ends with `wineserver -k`, which stops every program
# of its prefix, so two clones sharing one would stop each other's tests (and could create it at the
# same time). A prefix takes about 700 MB; a clone's stays when the clone is deleted (remove it by
# hand: the file jemalloc.NET-clone in it names its clone).
wine_prefix_default() {
  local cache="${XDG_CACHE_HOME:-}" key
  [ -n "$cache" ] || cache="${HOME:-/tmp}/.cache"
  key="$(printf '%s' "$ROOT_REAL" | sha256sum | cut -c1-12)"
  printf '%s/jemalloc.NET/wine/%s-%s' "$cache" "$(basename "$ROOT_REAL")" "$key"
}
readonly WINE_PREFIX_DIR="${JEMALLOC_NET_WINEPREFIX:-$(wine_prefix_default)}"
# Where build.sh before issue 33 made the prefix; removed when found (remove_old_wine_prefix).
readonly OLD_WINE_PREFIX_DIR="$EMULATED_DIR/wineprefix"

# A prefix left inside the tree by an older build.sh breaks jembench alloc and the tests that run it,
# and the new one is elsewhere: it goes. rm does not follow its links.
remove_old_wine_prefix() {
  [ -e "$OLD_WINE_PREFIX_DIR" ] || [ -L "$OLD_WINE_PREFIX_DIR" ] || return 0
  step "removing artifacts/emulated/wineprefix (an older build.sh's wine prefix: its links lead out of the tree; the prefix is now $WINE_PREFIX_DIR)"
  rm -rf "$OLD_WINE_PREFIX_DIR" || die "could not remove $OLD_WINE_PREFIX_DIR"
}

need_emulator() {
  case "$1" in
    linux-arm64)
      local missing=()
      command -v qemu-aarch64-static >/dev/null || missing+=(qemu-user-static)
      # The aarch64 C and C++ libraries the .NET runtime needs (the cross compiler depends on them).
      [ -f /usr/aarch64-linux-gnu/lib/libstdc++.so.6 ] || missing+=(libstdc++6-arm64-cross libc6-arm64-cross)
      if [ ${#missing[@]} -gt 0 ]; then step "installing the linux-arm64 emulator: ${missing[*]}"; apt_install "${missing[@]}"; fi ;;
    win-x64)
      if [ ! -x /usr/lib/wine/wine64 ]; then step "installing the win-x64 emulator: wine64"; apt_install wine64; fi
      case "$(realpath -m -- "$WINE_PREFIX_DIR")/" in
        "$ROOT_REAL"/*) die "the wine prefix $WINE_PREFIX_DIR is inside the source tree: its links (drive z: is /) would lead out of it; set JEMALLOC_NET_WINEPREFIX to a folder outside $ROOT" ;;
      esac
      if [ ! -f "$WINE_PREFIX_DIR/system.reg" ]; then
        step "creating a wine prefix ($WINE_PREFIX_DIR)"
        mkdir -p "$WINE_PREFIX_DIR"
        echo "$ROOT_REAL" >"$WINE_PREFIX_DIR/jemalloc.NET-clone"
        WINEPREFIX="$WINE_PREFIX_DIR" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml=" /usr/lib/wine/wine64 wineboot --init >/dev/null 2>&1 \
          || die "wineboot --init failed for $WINE_PREFIX_DIR"
        # A new prefix says Windows 7, which .NET 10 does not support (its runtime fails early): Windows 10.
        WINEPREFIX="$WINE_PREFIX_DIR" WINEDEBUG=-all /usr/lib/wine/wine64 winecfg -v win10 >/dev/null 2>&1 \
          || die "winecfg -v win10 failed for $WINE_PREFIX_DIR"
        WINEPREFIX="$WINE_PREFIX_DIR" /usr/lib/wine/wineserver -w || true
      fi ;;
    linux-x64) ;;
    *) die "no emulator for '$1'" ;;
  esac
}

# Runs a published app of RID $1 (the path without .exe) with the remaining arguments, under its emulator.
run_on() {
  local rid="$1" app="$2"; shift 2
  case "$rid" in
    linux-x64) "$app" "$@" ;;
    linux-arm64)
      # JEMALLOC_NET_TEST_LAUNCHER: the tests start their helper process through the emulator too.
      # DOTNET_EnableWriteXorExecute=0: with W^X the runtime writes JIT code through a second mapping,
      # which qemu-user does not notice, so it runs stale translations ("Illegal instruction").
      # JEMALLOC_NET_TEST_CC: the tests that build a native library need the aarch64 compiler.
      QEMU_LD_PREFIX=/usr/aarch64-linux-gnu DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 DOTNET_EnableWriteXorExecute=0 \
        JEMALLOC_NET_TEST_CC=aarch64-linux-gnu-gcc \
        JEMALLOC_NET_TEST_LAUNCHER="$(command -v qemu-aarch64-static)" qemu-aarch64-static "$app" "$@" ;;
    win-x64)
      # Child processes of a Windows app are started by wine itself, under the same prefix.
      # DOTNET_EnableWriteXorExecute=0: with W^X, .NET 10 under wine fails in dynamic-method code
      # ("Internal CLR error" from DynamicResolver); without it the suite runs.
      WINEPREFIX="$WINE_PREFIX_DIR" WINEDEBUG=-all DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 DOTNET_EnableWriteXorExecute=0 \
        /usr/lib/wine/wine64 "$app.exe" "$@" ;;
  esac
}

publish_for() {
  local rid="$1" project="$2" output="$3"; shift 3
  dotnet publish "$project" -c "$CONFIGURATION" -r "$rid" --self-contained --nologo -v quiet -o "$output" "$@" >"$output.publish.log" 2>&1 \
    || { tail -n 30 "$output.publish.log" >&2; die "dotnet publish $(basename "$project") for $rid failed (log: $output.publish.log)"; }
}

# The test classes run under emulation (by class-name prefix). Every public type, loading,
# configuration (Jem.Init in a fresh process), the ledger's checks, mallctl, arenas, statistics,
# huge-page reporting, system memory, SIMD, records, I/O and the cache (its locks and atomics on a
# weaker memory model: ARM64); left out, because they are slow under an
# emulator and test nothing that differs per platform: the stress suite and most of the adversarial
# suite (hundreds of child processes and timed races), the big-memory tests, the BenchmarkDotNet and
# jembench runs (timing means nothing there) and the package test (needs the SDK; the package is
# tested per RID by test-package). The adversarial suite's representative part (EMULATED_TRAIT: one
# test per class of protection, each scenario in its own process) runs too, so a protection that
# holds natively but not on another target fails there.
readonly EMULATED_CLASSES=(
  jemalloc.Tests.Native. jemalloc.Tests.Buffers. jemalloc.Tests.Ledger. jemalloc.Tests.Arenas.JemArenaTests
  jemalloc.Tests.HugePages.HugePageInfoTests jemalloc.Tests.HugePages.HugePagePolicyTests jemalloc.Tests.Memory.
  jemalloc.Tests.Simd. jemalloc.Tests.Tuning. jemalloc.Tests.Records. jemalloc.Tests.IO.
  jemalloc.Tests.Caching.
)
readonly EMULATED_EXCLUDED=(jemalloc.Tests.Buffers.StressTests jemalloc.Tests.Buffers.HugeArrayBigMemoryTests
  jemalloc.Tests.IO.NativeBufferWriterBigMemoryTests jemalloc.Tests.Caching.NativeCacheAttack)
readonly EMULATED_TRAIT="Emulated=representative"

# Left out under wine only, by name: a test whose worker threads throw and catch exceptions in a
# tight loop while another thread resets their arena. .NET 10 under wine hangs in it (every thread
# waiting on the wine server; the same deadlock as "SuspendThread failed with error 5"): thread
# suspension while threads are in exception dispatch is where wine differs from Windows. It passes
# natively and under qemu. (A test thread spinning in a loop that never calls into the runtime hangs
# there too: wine cannot stop it for a collection or a tier-up. Such loops call Thread.Yield now and
# then instead, as the encoder's race test does.)
readonly WINE_EXCLUDED_TESTS=(
  jemalloc.Tests.Arenas.JemArenaTests.Resets_racing_structure_allocations_on_other_threads_never_leave_a_structure_on_freed_memory
)

test_emulated_rid() {
  local rid="$1" started=$SECONDS
  shift
  need_emulator "$rid"
  local out="$EMULATED_DIR/$rid/tests"
  step "publishing the test suite for $rid"
  rm -rf "$out" && mkdir -p "$out"
  publish_for "$rid" "$ROOT/jemalloc.Tests.Runner/jemalloc.Tests.Runner.csproj" "$out"
  # The helper process the tests start, self-contained beside them (no dotnet host on the target).
  publish_for "$rid" "$ROOT/jemalloc.Tests.ChildProcess/jemalloc.Tests.ChildProcess.csproj" "$out"
  # One test running 300 s is a hang under either emulator (the slowest takes seconds): the runner
  # names it and stops. Under wine one test at a time: .NET 10 under wine can hang (or stop with
  # "SuspendThread failed with error 5") once a test has failed with an exception, and a serial run
  # keeps such a failure's report readable; a run in which every test passes ends normally.
  local args=(--test-timeout 300) prefix
  [ "$rid" = win-x64 ] && args+=(--parallel 1)
  if [ "${JEMALLOC_NET_EMULATED_TESTS:-}" != all ]; then
    for prefix in "${EMULATED_CLASSES[@]}"; do args+=(--class "$prefix"); done
    for prefix in "${EMULATED_EXCLUDED[@]}"; do args+=(--exclude-class "$prefix"); done
    args+=(--trait "$EMULATED_TRAIT")
    if [ "$rid" = win-x64 ]; then for prefix in "${WINE_EXCLUDED_TESTS[@]}"; do args+=(--exclude-test "$prefix"); done; fi
  fi
  step "running the test suite as $rid ($(emulator_name "$rid"))"
  local status=0 limit="${JEMALLOC_NET_EMULATED_TIMEOUT:-1200}"
  # A hard limit: an emulator that hangs must fail the run, never stall it. timeout signals the
  # emulator's whole process group (qemu and the children it started), then kills it 30 s later.
  timeout -k 30 "$limit" bash -c "$(declare -f run_on); $(declare -p WINE_PREFIX_DIR); run_on \"\$@\"" run_on \
    "$rid" "$out/jemalloc.Tests.Runner" "${args[@]}" "$@" || status=$?
  [ "$rid" = win-x64 ] && { WINEPREFIX="$WINE_PREFIX_DIR" /usr/lib/wine/wineserver -k 2>/dev/null || true; }
  echo "$rid tests took $((SECONDS - started)) s (publishing included)"
  [ "$status" -ne 124 ] && [ "$status" -ne 137 ] || die "the test suite as $rid did not finish within $limit s (JEMALLOC_NET_EMULATED_TIMEOUT)"
  [ "$status" -eq 0 ] || die "the test suite failed as $rid (exit $status)"
}

emulator_name() { case "$1" in linux-arm64) echo "qemu-user" ;; win-x64) echo "wine" ;; *) echo "native" ;; esac; }

# Apps that reference only the packages, published for each RID and run there: what a user gets.
# PackageConsumer uses jemalloc.NET; AddOnConsumer uses jemalloc.NET.Parquet, jemalloc.NET.Arrow and
# jemalloc.NET.Caching, whose dependencies ship natives for every RID here (ParquetSharp's
# ParquetSharpNative for linux-x64, linux-arm64 and win-x64; Apache.Arrow and the
# Microsoft.Extensions packages are managed code), so both run on every target.
test_package() {
  local work="$ROOT/artifacts/package-test" version rid project started=$SECONDS
  # A version of its own, so no package cached by an earlier restore can stand in for this build.
  version="0.0.0-ci.$(date -u +%Y%m%d%H%M%S)"
  # The samples' nuget.config names artifacts/packages as a source: it must exist.
  rm -rf "$work" && mkdir -p "$work/packages" "$ROOT/artifacts/packages"
  step "packing jemalloc.NET and its add-ons $version for the package test"
  for project in jemalloc.Api/jemalloc.Api.csproj "${ADDON_PROJECTS[@]}"; do
    dotnet pack "$ROOT/$project" -c "$CONFIGURATION" --no-build --nologo \
      "-p:PackageVersion=$version" -o "$work/packages" >/dev/null || die "dotnet pack $(basename "$project") failed"
  done
  local failed=()
  for rid in "${ALL_RIDS[@]}"; do
    need_emulator "$rid"
    run_consumer "$rid" PackageConsumer
    run_consumer "$rid" AddOnConsumer
  done
  echo "package test took $((SECONDS - started)) s"
  [ ${#failed[@]} -eq 0 ] || die "the package consumer failed as: ${failed[*]}"
}

# One consumer sample ($2, a folder of samples/) published for RID $1 against test_package's packages
# (its $work and $version) and run under the RID's emulator; "$1 $2" goes into its $failed unless
# the app exits with 0 and prints OK.
run_consumer() {
  local rid="$1" sample="$2" dir="$work/$1/$2" status=0
  step "$sample as $rid ($(emulator_name "$rid"))"
  mkdir -p "$dir"
  publish_for "$rid" "$ROOT/samples/$sample/$sample.csproj" "$dir/app" \
    "-p:JemallocNetVersion=$version" "-p:RestorePackagesPath=$work/restored" \
    "-p:RestoreAdditionalProjectSources=$work/packages"
  run_on "$rid" "$dir/app/$sample" 2>&1 | tee "$dir/run.log" || status=$?
  if [ "$status" -ne 0 ] || ! grep -qx "OK" <(tr -d '\r' <"$dir/run.log"); then failed+=("$rid $sample"); fi
}

# jembench info on each target: the platform it reports must be that target's.
info_all() {
  local rid started=$SECONDS failed=()
  for rid in "${ALL_RIDS[@]}"; do
    need_emulator "$rid"
    local out="$EMULATED_DIR/$rid/jembench"
    step "jembench info as $rid ($(emulator_name "$rid"))"
    rm -rf "$out" && mkdir -p "$out"
    publish_for "$rid" "$ROOT/jemalloc.Cli/jemalloc.Cli.csproj" "$out"
    local log="$out.info.log" status=0
    run_on "$rid" "$out/jembench" info 2>&1 | tr -d '\r' | tee "$log" | sed -n '1,/^Effective options/p' || status=$?
    if [ "$status" -ne 0 ] || ! grep -qE "^runtime: +$rid( |$)" "$log"; then failed+=("$rid"); fi
  done
  echo "jembench info took $((SECONDS - started)) s"
  [ ${#failed[@]} -eq 0 ] || die "jembench info did not run or did not report its platform as: ${failed[*]}"
}

# ---- the source tree stays closed ----------------------------------------------------------------
# BenchmarkDotNet builds each out-of-process job (jembench alloc, one process per jemalloc
# configuration) from a project it generates, after looking for the benchmarks' project through the
# whole source tree, following symbolic links into folders. A link out of the tree sends it through
# whatever the link leads to (through wine's z: drive, all of /), and a link to a folder holding it
# round and round. So nothing the build leaves in the tree links out of it: the wine prefix is
# outside, qemu-user reads the cross toolchain's files where Debian installed them, npm's links in
# artifacts/node/node_modules/.bin point into node_modules, and libtool's libjemallocnet.so in
# jemalloc/build points to the file beside it.

# Prints each symbolic link under the tree (its .git aside) that resolves outside it, to a folder
# holding the link (a loop), or not at all, one a line: path -> target (why).
links_out_of_tree() {
  local link target folder text
  while IFS= read -r -d '' link; do
    if ! target="$(realpath -m -- "$link" 2>/dev/null)"; then
      printf '%s -> %s (does not resolve)\n' "${link#"$ROOT"/}" "$(readlink -- "$link")"
      continue
    fi
    case "$target/" in
      "$ROOT_REAL"/*)
        folder="$(realpath -m -- "$(dirname -- "$link")")"
        case "$folder/" in
          "$target"/*) printf '%s -> %s (a loop: the folder it leads to holds it)\n' "${link#"$ROOT"/}" "$(readlink -- "$link")" ;;
        esac ;;
      *)
        text="$(readlink -- "$link")"
        if [ "$text" = "$target" ]; then printf '%s -> %s (outside the tree)\n' "${link#"$ROOT"/}" "$text"
        else printf '%s -> %s (outside the tree: %s)\n' "${link#"$ROOT"/}" "$text" "$target"; fi ;;
    esac
  done < <(find "$ROOT" -name .git -prune -o -type l -print0)
}

check_tree_links() {
  step "checking that no symbolic link in the source tree leads out of it"
  local found
  found="$(links_out_of_tree)"
  if [ -n "$found" ]; then
    printf '%s\n' "$found" >&2
    die "these symbolic links in $ROOT lead out of the tree or round in it: BenchmarkDotNet's search for the benchmarks' project (jembench alloc) would follow them. Remove them, or put what they belong to outside the tree"
  fi
  echo "no symbolic link in the tree leads out of it"
}

# Before jembench: a link out of the tree (not one of this script's) breaks only the out-of-process
# suites, so it is named, not refused.
warn_links_out_of_tree() {
  local found
  found="$(links_out_of_tree)"
  [ -n "$found" ] || return 0
  printf '\nbuild.sh: warning: these symbolic links in %s lead out of the tree or round in it; an out-of-process suite (jembench alloc) follows them when BenchmarkDotNet looks for the benchmarks'"'"' project, and fails or wanders:\n%s\n' "$ROOT" "$found" >&2
}

# The out-of-process benchmarks, started in the tree the way a user starts them: jembench alloc
# --quick generates and builds the benchmark project (about 30 s on a 2-core machine) and runs each of
# its benchmarks once in a process of its own, with the default and with the tuned thread cache (16
# processes with mimalloc's row). It would have caught issue 33, which no test did: the tests that run
# alloc out of process run before the wine prefix is made.
readonly BENCHMARK_SMOKE_TIMEOUT=900

benchmark_smoke() {
  local started=$SECONDS status=0 out="$ROOT/artifacts/benchmark-smoke"
  step "benchmark smoke run: jembench alloc --quick (out of process, in the source tree)"
  rm -rf "$out"
  # A hard limit, as for the emulated runs: timeout signals jembench and the processes it started.
  (cd "$ROOT" && timeout -k 30 "$BENCHMARK_SMOKE_TIMEOUT" \
    dotnet "$ROOT/jemalloc.Cli/bin/$CONFIGURATION/net10.0/jembench.dll" alloc --quick --artifacts "$out") || status=$?
  echo "benchmark smoke run took $((SECONDS - started)) s"
  [ "$status" -ne 124 ] && [ "$status" -ne 137 ] || die "the benchmark smoke run did not finish within $BENCHMARK_SMOKE_TIMEOUT s"
  [ "$status" -eq 0 ] || die "the benchmark smoke run (jembench alloc --quick, out of process) failed (exit $status)"
}

# The end of test: both run, and either failing fails it.
test_benchmark() {
  local smoke_status=0 links_status=0
  ( benchmark_smoke ) || smoke_status=$?
  ( check_tree_links ) || links_status=$?
  [ "$smoke_status" -eq 0 ] || die "the benchmark smoke run failed (exit $smoke_status)"
  [ "$links_status" -eq 0 ] || die "a symbolic link in the tree leads out of it (listed above)"
}

test_emulated() {
  test_emulated_rid linux-arm64
  test_emulated_rid win-x64
  test_package
  info_all
}

# ---- comparing two builds of the library ---------------------------------------------------------
# compare-builds: jemalloc.PerfCompare, always this tree's, built in Release against the library of
# each side (a revision's jemalloc.Api, or this tree's) into artifacts/compare-builds/build-<side>/;
# then the new side's build drives worker processes of both (see jemalloc.PerfCompare/Comparison.cs).
# A revision's library comes from `git archive`: jemalloc.Api/ and the files at the top of the tree
# (Directory.Build.props, Directory.Packages.props, global.json, .editorconfig, build.sh, ...) into
# artifacts/compare-builds/src-<commit>/, kept for the next run. Nothing else of it: a second
# jemalloc.Benchmarks.csproj in the tree would make BenchmarkDotNet's search for the benchmarks'
# project (jembench alloc) find two and refuse to run.
readonly COMPARE_DIR="$ROOT/artifacts/compare-builds"
readonly COMPARE_PROJECT="$ROOT/jemalloc.PerfCompare/jemalloc.PerfCompare.csproj"

# A fingerprint of how the native library is made, as build.sh of revision $1 (or of the working
# tree, for "") makes it: jemalloc's version, tarball and checksum, the options compiled in, and the
# functions that unpack, configure and build it, comment lines aside. The same fingerprint: the same
# library, so a side uses this tree's jemalloc/bin instead of building its own.
native_recipe() {
  local script
  if [ -n "$1" ]; then
    script="$(git -C "$ROOT" show "$1:build.sh" 2>/dev/null)" || { echo "no build.sh"; return 0; }
  else
    script="$(cat "$ROOT/build.sh")"
  fi
  { grep -E '^readonly JEMALLOC_[A-Z_]+=' <<<"$script" || true
    awk '/^(prepare_source|target_settings|build_native_rid)\(\) \{/,/^\}$/' <<<"$script"; } \
    | sed '/^[[:space:]]*#/d' | sha256sum | cut -c1-16
}

# "<short hash> <subject, cut at 60 characters> (<date>)" of commit $1.
commit_title() {
  local subject
  subject="$(git -C "$ROOT" log -1 --format=%s "$1")"
  [ ${#subject} -le 60 ] || subject="${subject:0:57}..."
  printf '%s %s (%s)' "$(git -C "$ROOT" log -1 --format=%h "$1")" "$subject" "$(git -C "$ROOT" log -1 --format=%cs "$1")"
}

# Prepares one side, revision $1 ("" for the working tree): sets SIDE_KEY (its folders' name),
# SIDE_LABEL (what it is, for the report), SIDE_LIBRARY (its jemalloc.Api.csproj), SIDE_NATIVES (the
# folder of its native libraries, with a trailing /), SIDE_NATIVES_TEXT and SIDE_PROPERTIES (more
# properties for its build).
compare_side() {
  local rev="$1"
  if [ -z "$rev" ]; then
    local changed
    changed="$(git -C "$ROOT" status --porcelain -- jemalloc.Api Directory.Build.props Directory.Packages.props | wc -l)"
    SIDE_KEY=worktree
    SIDE_LABEL="the working tree: HEAD $(commit_title HEAD)"
    if [ "$changed" -eq 0 ]; then SIDE_LABEL+=", no uncommitted change to jemalloc.Api or the props"
    else SIDE_LABEL+=", with $changed uncommitted change(s) to jemalloc.Api or the props"; fi
    SIDE_LIBRARY="$ROOT/jemalloc.Api/jemalloc.Api.csproj"
    SIDE_NATIVES="$NATIVE_DIR/bin/"
    SIDE_NATIVES_TEXT="this tree's jemalloc/bin"
    SIDE_PROPERTIES=()
    return 0
  fi
  local commit
  commit="$(git -C "$ROOT" rev-parse --verify --quiet "$rev^{commit}")" || die "compare-builds: '$rev' is not a revision of this repository"
  SIDE_KEY="${commit:0:12}"
  SIDE_LABEL="$(commit_title "$commit")"
  local dir="$COMPARE_DIR/src-$SIDE_KEY"
  if [ ! -f "$dir/.complete" ]; then
    step "extracting jemalloc.Api and the top-level files of $rev (${commit:0:12}) into ${dir#"$ROOT"/}"
    rm -rf "$dir" && mkdir -p "$dir"
    local top=()
    mapfile -t top < <(git -C "$ROOT" ls-tree "$commit" | awk -F'\t' '$1 ~ / blob / { print $2 }')
    git -C "$ROOT" cat-file -e "$commit:jemalloc.Api/jemalloc.Api.csproj" 2>/dev/null \
      || die "compare-builds: revision $rev has no jemalloc.Api/jemalloc.Api.csproj"
    # -m: the files get the time of extraction, not the commit's, so no build output looks newer than them.
    git -C "$ROOT" archive --format=tar "$commit" -- jemalloc.Api "${top[@]}" | tar -x -m -C "$dir" \
      || die "compare-builds: extracting $rev failed"
    touch "$dir/.complete"
  fi
  SIDE_LIBRARY="$dir/jemalloc.Api/jemalloc.Api.csproj"
  # The extracted tree has no .git of its own: without these the SDK would stamp the library with the
  # commit of the repository around it (this tree's HEAD), and rebuild it whenever that moves.
  SIDE_PROPERTIES=("-p:SourceRevisionId=$commit" -p:EnableSourceControlManagerQueries=false)
  if [ "$(native_recipe "$commit")" = "$(native_recipe "")" ]; then
    SIDE_NATIVES="$NATIVE_DIR/bin/"
    SIDE_NATIVES_TEXT="this tree's jemalloc/bin (its build.sh makes the native library as this tree's does)"
    return 0
  fi
  step "revision $rev makes the native library differently: building it with its own build.sh in ${dir#"$ROOT"/}"
  local source_env=()
  if [ -z "${JEMALLOC_SRC:-}" ] && [ -f "$DOWNLOAD_DIR/$JEMALLOC_TARBALL" ] \
     && grep -qxF "readonly JEMALLOC_SHA256=\"$JEMALLOC_SHA256\"" "$dir/build.sh"; then
    source_env=("JEMALLOC_SRC=$DOWNLOAD_DIR/$JEMALLOC_TARBALL")
  fi
  (cd "$dir" && env "${source_env[@]}" bash ./build.sh native) || die "compare-builds: building the native library of $rev failed"
  SIDE_NATIVES="$dir/jemalloc/bin/"
  SIDE_NATIVES_TEXT="its own, built in ${dir#"$ROOT"/}/jemalloc/bin"
}

# Builds jemalloc.PerfCompare against the side compare_side prepared; sets SIDE_ASSEMBLY.
compare_build() {
  local out="$COMPARE_DIR/build-$SIDE_KEY" started=$SECONDS
  step "building jemalloc.PerfCompare (Release) against $SIDE_LABEL"
  mkdir -p "$COMPARE_DIR"
  dotnet build "$COMPARE_PROJECT" -c Release --nologo -v quiet --artifacts-path "$out" \
    "-p:JemallocApiProject=$SIDE_LIBRARY" "-p:JemallocNativeDir=$SIDE_NATIVES" "${SIDE_PROPERTIES[@]}" >"$out.log" 2>&1 \
    || { tail -n 30 "$out.log" >&2; die "compare-builds: building against $SIDE_LABEL failed (log: $out.log)"; }
  SIDE_ASSEMBLY="$out/bin/jemalloc.PerfCompare/release/jemalloc.PerfCompare.dll"
  [ -f "$SIDE_ASSEMBLY" ] || die "compare-builds: the build did not produce $SIDE_ASSEMBLY"
  echo "built in $((SECONDS - started)) s; natives: $SIDE_NATIVES_TEXT"
}

compare_builds() {
  local started=$SECONDS
  if [ $# -gt 0 ] && { [ "$1" = --help ] || [ "$1" = -h ]; }; then
    build_native; compare_side ""; compare_build
    dotnet "$SIDE_ASSEMBLY" --help
    return 0
  fi
  [ $# -gt 0 ] && [ "${1#-}" = "$1" ] || die "usage: ./build.sh compare-builds OLD-REV [NEW-REV] [OPTIONS] (NEW-REV: by default the working tree; OPTIONS: ./build.sh compare-builds --help)"
  local old_rev="$1" new_rev=""
  shift
  if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then new_rev="$1"; shift; fi
  build_native
  local old_label old_assembly new_label new_assembly
  compare_side "$old_rev"; compare_build
  old_label="$SIDE_LABEL; natives: $SIDE_NATIVES_TEXT" old_assembly="$SIDE_ASSEMBLY"
  compare_side "$new_rev"; compare_build
  new_label="$SIDE_LABEL; natives: $SIDE_NATIVES_TEXT" new_assembly="$SIDE_ASSEMBLY"
  step "compare-builds: old ${old_rev}, new ${new_rev:-working tree} (builds took $((SECONDS - started)) s)"
  local status=0
  dotnet "$new_assembly" --old "$old_assembly" --new "$new_assembly" --old-label "$old_label" --new-label "$new_label" "$@" || status=$?
  echo "compare-builds took $((SECONDS - started)) s in all"
  # The measuring program's exit code as it is: 5 means a measurement over the tolerance, 2 a wrong result.
  exit "$status"
}

main() {
  local command="${1:-build}"
  [ $# -gt 0 ] && shift
  case "$command" in -h|--help|help) ;; *) remove_old_wine_prefix ;; esac
  case "$command" in
    native) build_native ;;
    native-all) build_native_all ;;
    build) build_native_all; build_solution ;;
    jembench)
      build_native; build_solution; need_mimalloc
      # The main job, with no arguments: native against managed arrays, fill and create-and-fill.
      [ $# -gt 0 ] || set -- array --fill 10000000 100000000 -l -u
      warn_links_out_of_tree
      step "jembench $*"
      dotnet "$ROOT/jemalloc.Cli/bin/$CONFIGURATION/net10.0/jembench.dll" "$@" ;;
    test)
      TEST_STARTED=$SECONDS
      build_native_all
      local build_started=$SECONDS
      build_solution
      echo "solution build took $((SECONDS - build_started)) s"
      local started=$SECONDS status=0
      need_node_arrow
      step "running the tests (linux-x64, native)"
      dotnet test "$ROOT/jemalloc.NET.sln" -c "$CONFIGURATION" --no-build --nologo "$@" || status=$?
      echo "linux-x64 tests took $((SECONDS - started)) s"
      # The emulated runs go on after a failure, so one run reports every target's results.
      local arm_status=0 win_status=0 package_status=0 benchmark_status=0
      ( test_emulated_rid linux-arm64 ) || arm_status=$?
      ( test_emulated_rid win-x64 ) || win_status=$?
      ( test_package ) || package_status=$?
      # Last, in the tree as everything before left it (the wine prefix, artifacts/node, ...).
      ( test_benchmark ) || benchmark_status=$?
      echo "./build.sh test took $((SECONDS - TEST_STARTED)) s in all"
      [ "$status" -eq 0 ] || die "the linux-x64 test suite failed (exit $status)"
      [ "$arm_status" -eq 0 ] || die "the linux-arm64 test run failed (exit $arm_status)"
      [ "$win_status" -eq 0 ] || die "the win-x64 test run failed (exit $win_status)"
      [ "$package_status" -eq 0 ] || die "the package test failed (exit $package_status)"
      [ "$benchmark_status" -eq 0 ] || die "the benchmark smoke run or the tree's link check failed (exit $benchmark_status)" ;;
    test-emulated) build_native_all; build_solution; test_emulated ;;
    test-linux-arm64|test-win-x64) build_native_all; build_solution; test_emulated_rid "${command#test-}" "$@" ;;
    test-package) build_native_all; build_solution; test_package ;;
    test-benchmark) build_native; build_solution; test_benchmark ;;
    info-all) build_native_all; info_all ;;
    pack) build_native_all; build_solution; pack_package ;;
    docs) build_docs ;;
    compare-builds) compare_builds "$@" ;;
    -h|--help|help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" ;;
    *) die "unknown command '$command' (try: build, native, native-all, jembench, test, test-emulated, test-linux-arm64, test-win-x64, test-package, test-benchmark, info-all, pack, docs, compare-builds, help)" ;;
  esac
}

main "$@"
