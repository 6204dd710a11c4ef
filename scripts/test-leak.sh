#!/usr/bin/env bash
# Leak and memory-error check of the native core: builds native/test/core_test.cc with
# native/core/*.cc (plain C++, no N-API) and runs it under valgrind when it is installed,
# otherwise built with AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer included).
# Exits non-zero on a wrong answer, a leak or a memory error. Run as `npm run test:leak`.
#
#   LEAK_TOOL=valgrind|asan   force one tool (default: valgrind if installed, else asan)
#   CXX=clang++               another compiler (default g++)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

cxx=${CXX:-g++}
tool=${LEAK_TOOL:-}
if [[ -z "$tool" ]]; then
  if command -v valgrind >/dev/null 2>&1; then tool=valgrind; else tool=asan; fi
fi
case "$tool" in valgrind | asan) ;; *) echo "test-leak: LEAK_TOOL must be valgrind or asan, not '$tool'" >&2; exit 2 ;; esac
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "test-leak: $cxx not found (install g++, or set CXX)" >&2
  exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/nm-leak-XXXXXX")
trap 'rm -rf "$work"' EXIT

# -O1 -g keeps stacks readable and valgrind fast enough.
flags=(-std=c++17 -O1 -g -pthread -Wno-unknown-pragmas)
[[ "$tool" == asan ]] && flags+=(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
sources=(native/test/core_test.cc native/core/*.cc)

# The binary is cached in node_modules/.cache (survives an addon rebuild, which deletes build/),
# keyed by everything that goes into it: unchanged sources skip the ~25 s compile.
cache=node_modules/.cache/newsmatch-leak
key=$({
  echo "$tool" "$cxx"
  "$cxx" --version | head -n1
  printf '%s\n' "${flags[@]}"
  cat native/core/* native/test/core_test.cc
} | sha256sum | cut -c1-16)
bin="$cache/core_test-$tool-$key"
compiler=$("$cxx" --version | head -n1)
if [[ -x "$bin" ]]; then
  echo "test-leak: using the cached build of native/test/core_test.cc ($compiler, $tool)"
else
  echo "test-leak: building native/test/core_test.cc with $compiler ($tool)"
  mkdir -p "$cache" "$work/obj"
  pids=()
  for src in "${sources[@]}"; do
    "$cxx" "${flags[@]}" -c "$src" -o "$work/obj/$(basename "$src").o" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || { echo "test-leak: compile failed" >&2; exit 2; }; done
  "$cxx" "${flags[@]}" "$work"/obj/*.o -o "$work/core_test"
  rm -f "$cache"/core_test-"$tool"-*
  mv "$work/core_test" "$bin"
fi

status=0
if [[ "$tool" == valgrind ]]; then
  echo "test-leak: running under $(valgrind --version)"
  # valgrind's CPU has no AVX-512, so dispatch picks AVX2 (or generic) here: the ISA paths
  # valgrind cannot run are covered by the ASan build and the vitest suite.
  TMPDIR="$work" valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect,possible \
    --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=1 "$bin" || status=$?
else
  echo "test-leak: running the ASan + UBSan build"
  TMPDIR="$work" ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$bin" || status=$?
fi

if [[ $status -eq 0 ]]; then
  echo "test-leak: OK ($tool): no leaks, no memory errors, all checks passed"
else
  echo "test-leak: FAILED ($tool, exit $status)" >&2
fi
exit "$status"
