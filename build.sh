#!/usr/bin/env bash
# Builds everything jemalloc.NET needs on Linux x64, then (optionally) runs a command.
#
#   ./build.sh                 native jemalloc (if not up to date) + the solution in Release
#   ./build.sh jembench [ARGS] ... then runs jembench with ARGS; without ARGS, the main job:
#                              jembench array --fill 10000000 100000000 -l -u
#                              (installs Debian's libmimalloc2.0 if missing, for the alloc suite's row)
#   ./build.sh test            ... then runs the test suite
#   ./build.sh native          only the native library
#   ./build.sh pack            ... then makes the NuGet package into artifacts/packages
#
# Environment:
#   JEMALLOC_SRC=path    a jemalloc 5.3.0 source tarball (.tar.bz2/.tar.gz) or directory to use
#                        instead of Debian's source package
#   JEMALLOC_DEBUG=1     build jemalloc with --enable-debug (a checked build; slow)
#   JEMALLOC_NET_NO_INSTALL=1  never install missing tools with apt-get; just report them
#   CONFIGURATION=Debug  build the solution in Debug instead of Release
set -Eeuo pipefail

readonly ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
readonly JEMALLOC_VERSION="5.3.0"
readonly JEMALLOC_GIT_VERSION="5.3.0-0-g54eaed1d8b56b1aa528be3bdd1877e59c56fa90c"
readonly JEMALLOC_TARBALL="jemalloc_${JEMALLOC_VERSION}.orig.tar.bz2"
readonly JEMALLOC_SHA256="2db82d1e7119df3e71b7640219b6dfe84789bc0537983c3b7ac4f7189aecfeaa"
# The library's name carries a suffix so it can never be mistaken for a system libjemalloc.so.2,
# which exports no je_ symbols.
readonly NATIVE_NAME="libjemallocnet.so"
readonly NATIVE_DIR="$ROOT/jemalloc"
readonly DOWNLOAD_DIR="$NATIVE_DIR/download"
readonly OUTPUT_DIR="$NATIVE_DIR/bin/linux-x64"
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

build_native() {
  need_tools
  local src flavor flags
  src="$(prepare_source)"
  if [ "${JEMALLOC_DEBUG:-0}" = 1 ]; then flavor=debug; else flavor=release; fi
  flags=(--with-jemalloc-prefix=je_ --with-install-suffix=net --disable-initial-exec-tls --disable-cxx
         "--with-version=$JEMALLOC_GIT_VERSION" --disable-static --enable-stats
         "--with-malloc-conf=$JEMALLOC_DEFAULT_CONF")
  [ "$flavor" = debug ] && flags+=(--enable-debug)
  local build_dir="$NATIVE_DIR/build/$flavor"
  local stamp="$build_dir/.configured"
  mkdir -p "$build_dir" "$OUTPUT_DIR"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "${flags[*]}" ] || [ "$src/configure" -nt "$stamp" ]; then
    step "configuring jemalloc ($flavor)"
    (cd "$build_dir" && "$src/configure" "${flags[@]}" >configure.log 2>&1) \
      || { tail -n 30 "$build_dir/configure.log" >&2; die "jemalloc configure failed (log: $build_dir/configure.log)"; }
    echo "${flags[*]}" >"$stamp"
  fi
  step "building jemalloc ($flavor)"
  (cd "$build_dir" && make -j"$(nproc)" build_lib_shared >make.log 2>&1) \
    || { tail -n 30 "$build_dir/make.log" >&2; die "jemalloc make failed (log: $build_dir/make.log)"; }
  local built="$build_dir/lib/libjemallocnet.so.2"
  [ -f "$built" ] || die "make did not produce $built"
  if [ "$built" -nt "$OUTPUT_DIR/$NATIVE_NAME" ] || [ "$(cat "$OUTPUT_DIR/FLAVOR" 2>/dev/null)" != "$flavor" ]; then
    # Debug info stays in the build tree; the shipped library keeps only its symbols.
    objcopy --strip-debug "$built" "$OUTPUT_DIR/$NATIVE_NAME"
    echo "$flavor" >"$OUTPUT_DIR/FLAVOR"
  fi
  nm -D --defined-only "$OUTPUT_DIR/$NATIVE_NAME" | grep -q ' je_mallocx$' \
    || die "$OUTPUT_DIR/$NATIVE_NAME does not export je_mallocx: the je_ prefix is missing"
  echo "native library: $OUTPUT_DIR/$NATIVE_NAME ($flavor)"
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

build_solution() {
  step "building jemalloc.NET.sln ($CONFIGURATION)"
  dotnet build "$ROOT/jemalloc.NET.sln" -c "$CONFIGURATION" --nologo -v minimal \
    || die "dotnet build failed"
}

main() {
  local command="${1:-build}"
  [ $# -gt 0 ] && shift
  case "$command" in
    native) build_native ;;
    build) build_native; build_solution ;;
    jembench)
      build_native; build_solution; need_mimalloc
      # The main job, with no arguments: native against managed arrays, fill and create-and-fill.
      [ $# -gt 0 ] || set -- array --fill 10000000 100000000 -l -u
      step "jembench $*"
      dotnet "$ROOT/jemalloc.Cli/bin/$CONFIGURATION/net10.0/jembench.dll" "$@" ;;
    test)
      build_native; build_solution
      step "running the tests"
      dotnet test "$ROOT/jemalloc.NET.sln" -c "$CONFIGURATION" --no-build --nologo "$@" ;;
    pack)
      build_native; build_solution
      step "packing jemalloc.NET"
      dotnet pack "$ROOT/jemalloc.Api/jemalloc.Api.csproj" -c "$CONFIGURATION" --no-build --nologo \
        -o "$ROOT/artifacts/packages" ;;
    -h|--help|help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}" ;;
    *) die "unknown command '$command' (try: build, native, jembench, test, pack, help)" ;;
  esac
}

main "$@"
