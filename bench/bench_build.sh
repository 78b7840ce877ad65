# Sourced (`. bench/bench_build.sh`) by the bench/run_bench_*.sh scripts
# first thing: goes to the project root, takes an optional BUILD_DIR first
# argument off the caller's "$@" (default build/), builds it if
# bpfrt-bench is missing, and sets $build and $bench.
set -e
cd "$(dirname "$0")/.."
build=build
case "$1" in
-*|"") ;;
*) build=$1; shift ;;
esac
if [ ! -x "$build/bpfrt-bench" ]; then
	make --no-print-directory BUILD="$build" all >/dev/null
fi
bench="$build/bpfrt-bench"
