#!/usr/bin/env bash
# stress.sh [RUNS] — the suite under load (issue 32): RUNS (3) runs of
# `make test` in a row, each on a fresh clone of this checkout's HEAD,
# while stress-ng keeps two CPU workers busy beside them. Prints each
# run's result and time and exits non-zero if any run failed. The load is
# bounded: stress-ng runs only while the runs do.
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
if ! command -v stress-ng >/dev/null; then
	echo "stress.sh: installing stress-ng" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng >/dev/null || exit 1
fi
work=$(mktemp -d /tmp/cornus-stress.XXXXXX)
stress-ng --cpu 2 --timeout "$((runs * 3600))" --quiet &
load=$!
trap 'kill "$load" 2>/dev/null; wait "$load" 2>/dev/null' EXIT
head=$(git rev-parse HEAD)
failed=0
for i in $(seq 1 "$runs"); do
	clone=$work/run$i
	git clone -q . "$clone" && git -C "$clone" checkout -q "$head" || exit 1
	start=$SECONDS
	(cd "$clone" && CI=true make test >"$work/run$i.log" 2>&1)
	rc=$?
	[ "$rc" = 0 ] || failed=1
	echo "run $i: rc=$rc in $(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s (log $work/run$i.log)"
	sed -n '/^=== summary/,$p' "$work/run$i.log" | sed 's/^/    /'
	rm -rf "$clone"
done
exit "$failed"
