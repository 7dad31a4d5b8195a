#!/usr/bin/env bash
# test.sh [STAGE...] — run cornus's test stages (all of them, in order, by
# default: check setup unit e2e fuzz; `make test` runs this) and print a
# summary of each stage's result, time and failing tests.
#
# Every stage runs even when an earlier one failed, so a flake in one
# stage hides nothing of the others; the exit status is non-zero when any
# stage failed. Only a failed setup stops something: the stages that need
# its daemons (unit, e2e) are then reported as not run.
#
# Stages: check (gofmt, go vet, golangci-lint by scripts/lint.sh), setup
# (scripts/setup.sh), unit (go test ./...), e2e (the e2e package once per
# other backend), fuzz (each fuzz target for a fixed count of inputs;
# FUZZTIME overrides). check and setup run first, one after the other;
# unit, e2e and fuzz then run in three lanes at once, each on daemons the
# others' runs at that time leave alone:
#
#   node:       unit (every package but two) → e2e containerd, podman, bare
#   kubernetes: unit of backends/kubernetes  → e2e kubernetes
#   incus:      unit of backends/incus       → e2e incus
#
# and each lane, when its runs end, takes fuzz targets from one queue
# until none is left (fuzz needs CPU only, no daemon). The cluster
# backends' packages get lanes of their own because their suites mostly
# wait on their daemons: in one `go test ./...` of two packages at a time
# they left the CPU a third idle. containerd and bare share CNI's address
# space, so their e2e runs stay in one lane, after their unit tests.
#
# go test runs up to $TEST_PARALLEL (4) parallel tests of a package (the
# contract suites' cases).
#
# check and setup print as they run; a lane's runs print their output,
# whole, when each ends. Every run's output is also kept in $TEST_LOGS
# (bin/test-logs).
set -uo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-}
TEST_PARALLEL=${TEST_PARALLEL:-4}
TEST_LOGS=${TEST_LOGS:-bin/test-logs}
mkdir -p "$TEST_LOGS"
TEST_LOGS=$(cd "$TEST_LOGS" && pwd)

# The e2e runs: name and environment, per lane.
lane_node=(
	"containerd CORNUS_DEPLOY_BACKEND=containerd CORNUS_CONTAINERD_ADDRESS=/run/cornus-containerd/containerd.sock"
	"podman CORNUS_DEPLOY_BACKEND=podman CORNUS_PODMAN_SOCKET=/run/cornus-podman/podman.sock"
	"bare CORNUS_DEPLOY_BACKEND=bare"
)
lane_kubernetes=("kubernetes CORNUS_DEPLOY_BACKEND=kubernetes KUBECONFIG=/run/cornus-k8s/cornus.kubeconfig")
lane_incus=("incus CORNUS_DEPLOY_BACKEND=incus")
# The packages with unit lanes of their own.
own_lane=(./backends/kubernetes ./backends/incus)

# The fuzz targets: package, target, default count of inputs (~30 s each
# here). A count, not a duration: Go 1.26's fuzz coordinator can fail a
# duration run with a spurious "context deadline exceeded" at its end
# (golang/go#75804, fixed in 1.27).
fuzz_targets=(
	"./spec FuzzLoad 300000x"
	"./compose FuzzStandardizeJSONC 300000x"
	"./translate FuzzComposeToSpec 20000x"
	"./caretaker/mount/export FuzzNames 80000x"
	"./egress FuzzPolicy 200000x"
	"./server FuzzRouteBodies 10000x"
	"./builder FuzzDockerfile 100000x"
	"./builder FuzzExtractContext 20000x"
	"./registry FuzzRequests 60000x"
)

stages=()    # in the order they ran (or were skipped)
setup_failed=

# record NAME RC SECONDS: a stage's result, kept in a file so that runs in
# a lane's subshell report to the summary.
record() { echo "$2 $3" >"$(statusfile "$1")"; }

logfile() { echo "$TEST_LOGS/${1//\//_}.log"; }
statusfile() { echo "$TEST_LOGS/${1//\//_}.status"; }

# serial NAME CMD...: run a stage in the foreground, printing as it goes.
serial() {
	local name=$1 log start rc
	shift
	log=$(logfile "$name")
	stages+=("$name")
	echo "=== $name: $*"
	start=$SECONDS
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	record "$name" "$rc" $((SECONDS - start))
	return "$rc"
}

# skip NAME WHY: a stage that did not run.
skip() {
	stages+=("$1")
	echo "=== $1: not run ($2)"
	echo "skip $2" >"$(statusfile "$1")"
}

check() {
	local out rc=0
	out=$(gofmt -l .)
	if [ -n "$out" ]; then
		echo "gofmt needed:"
		echo "$out"
		rc=1
	fi
	$GO vet ./... || rc=1
	scripts/lint.sh || rc=1
	return "$rc"
}

# quiet NAME DESCRIPTION CMD...: run a stage of a lane into its log and
# print the log (under a lock, whole) when it ends.
quiet() {
	local name=$1 what=$2 log start rc
	shift 2
	log=$(logfile "$name")
	start=$SECONDS
	"$@" >"$log" 2>&1
	rc=$?
	record "$name" "$rc" $((SECONDS - start))
	{
		flock 9
		echo "=== $name ($what): $(verdict "$rc") in $(duration $((SECONDS - start)))"
		cat "$log"
	} 9>"$TEST_LOGS/.print.lock"
}

# e2e_runs RUN...: e2e runs, one after the other.
e2e_runs() {
	local run envs
	for run in "$@"; do
		envs=${run#* }
		# shellcheck disable=SC2086 # envs is a list of NAME=VALUE words
		quiet "e2e/${run%% *}" "$envs" env $envs "$GO" test -count=1 -parallel "$TEST_PARALLEL" ./e2e
	done
}

# unit_run NAME WHAT PKG...: one unit run.
unit_run() {
	local name=$1 what=$2
	shift 2
	quiet "$name" "$what" "$GO" test -count=1 -parallel "$TEST_PARALLEL" "$@"
}

# fuzz_run PKG TARGET COUNT: one fuzz target's run.
fuzz_run() { "$GO" test "$1" -run '^$' -fuzz "^$2\$" -fuzztime "${FUZZTIME:-$3}"; }

# fuzz_worker: run fuzz targets taken one at a time from the queue file
# until it is empty.
fuzz_worker() {
	local t pkg target count
	while t=$(take "$TEST_LOGS/.fuzz.queue") && [ -n "$t" ]; do
		read -r pkg target count <<<"$t"
		quiet "fuzz/$target" "$pkg, ${FUZZTIME:-$count}" fuzz_run "$pkg" "$target" "$count"
	done
}

# take FILE: print and remove FILE's first line (under a lock).
take() {
	{
		flock 8
		head -n 1 "$1"
		sed -i 1d "$1"
	} 8>"$1.lock"
}

# begin NAME...: stages a lane will report, listed in the summary.
begin() {
	local name
	for name in "$@"; do
		stages+=("$name")
		rm -f "$(statusfile "$name")"
	done
}

# lanes UNIT E2E FUZZ: the three lanes at once, each doing what of unit,
# e2e and fuzz is asked for (a non-empty argument).
lanes() {
	local unit=$1 e2e=$2 fz=$3 run t target pids=() rest
	local queue=$TEST_LOGS/.fuzz.queue
	if [ -n "$unit" ]; then
		begin unit unit/kubernetes unit/incus
		rest=$("$GO" list ./... | grep -vxF "$(printf 'github.com/cornus-dev/cornus/%s\n' "${own_lane[@]#./}")")
	fi
	if [ -n "$e2e" ]; then
		for run in "${lane_node[@]}" "${lane_kubernetes[@]}" "${lane_incus[@]}"; do
			begin "e2e/${run%% *}"
		done
	fi
	: >"$queue"
	if [ -n "$fz" ]; then
		for t in "${fuzz_targets[@]}"; do
			read -r _ target _ <<<"$t"
			begin "fuzz/$target"
			echo "$t" >>"$queue"
		done
	fi
	local both=${unit:+${e2e:+, }}
	echo "=== lanes: node: ${unit:+unit}$both${e2e:+e2e containerd, podman, bare} | kubernetes: ${unit:+unit}$both${e2e:+e2e} | incus: ${unit:+unit}$both${e2e:+e2e}${fz:+; then fuzz targets in all three}"
	{
		# shellcheck disable=SC2086 # rest is a list of packages
		[ -z "$unit" ] || unit_run unit "go test ./... but ${own_lane[*]}" $rest
		[ -z "$e2e" ] || e2e_runs "${lane_node[@]}"
		fuzz_worker
	} &
	pids+=($!)
	{
		[ -z "$unit" ] || unit_run unit/kubernetes "go test ./backends/kubernetes" ./backends/kubernetes
		[ -z "$e2e" ] || e2e_runs "${lane_kubernetes[@]}"
		fuzz_worker
	} &
	pids+=($!)
	{
		[ -z "$unit" ] || unit_run unit/incus "go test ./backends/incus" ./backends/incus
		[ -z "$e2e" ] || e2e_runs "${lane_incus[@]}"
		fuzz_worker
	} &
	pids+=($!)
	wait "${pids[@]}"
}

fuzz() {
	local t pkg target count
	for t in "${fuzz_targets[@]}"; do
		read -r pkg target count <<<"$t"
		serial "fuzz/$target" fuzz_run "$pkg" "$target" "$count"
	done
}

verdict() { if [ "$1" = 0 ]; then echo ok; else echo FAIL; fi; }

duration() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# failures LOG: the failing tests (go test's "--- FAIL:" lines, subtests
# included) and the packages that failed without one (a build failure, a
# panic, a timeout).
failures() {
	local log=$1 tests pkgs
	tests=$(sed -nE 's/^[[:space:]]*--- FAIL: ([^ ]+).*/\1/p' "$log" | sort -u)
	pkgs=$(sed -nE 's/^FAIL[[:space:]]+([^[:space:]]+)[[:space:]]*(.*)$/\1 \2/p' "$log")
	[ -n "$tests" ] && echo "$tests"
	if grep -q '^panic: test timed out' "$log"; then
		# Go lists the tests still running after the panic line.
		echo "(a test binary timed out; running then:" \
			"$(sed -n '/^panic: test timed out/,/^$/{s/^\t\([^ ]*\).*/\1/p}' "$log" | tr '\n' ' '))"
	elif grep -q '^panic: ' "$log"; then
		echo "(a test panicked: $(grep -m1 '^panic: ' "$log"))"
	fi
	[ -n "$pkgs" ] && echo "$pkgs" | sed 's/^/package /'
}

summary() {
	local name status rc secs failed=0 log out
	echo
	echo "=== summary (logs in $TEST_LOGS)"
	printf '%-28s %-8s %s\n' STAGE RESULT TIME
	for name in "${stages[@]}"; do
		status=$(statusfile "$name")
		log=$(logfile "$name")
		if [ ! -f "$status" ]; then
			printf '%-28s %-8s %s\n' "$name" FAIL "(no result: the stage was killed)"
			failed=1
			continue
		fi
		read -r rc secs <"$status"
		if [ "$rc" = skip ]; then
			printf '%-28s %-8s %s\n' "$name" "not run" "($secs)"
			failed=1
			continue
		fi
		printf '%-28s %-8s %s\n' "$name" "$(verdict "$rc")" "$(duration "$secs")"
		if [ "$rc" != 0 ]; then
			failed=1
			out=$(failures "$log")
			[ -n "$out" ] || out=$(tail -n 5 "$log") # not a go test stage
			echo "$out" | sed 's/^/    /'
		fi
	done
	echo "wall time $(duration "$SECONDS")"
	return "$failed"
}

[ $# -gt 0 ] || set -- check setup unit e2e fuzz
want_unit= want_e2e= want_fuzz=
for s in "$@"; do
	case $s in
	check) serial check check ;;
	setup) serial setup scripts/setup.sh || setup_failed=1 ;;
	unit) want_unit=1 ;;
	e2e) want_e2e=1 ;;
	fuzz) want_fuzz=1 ;;
	*)
		echo "test.sh: unknown stage $s (check, setup, unit, e2e, fuzz)" >&2
		exit 2
		;;
	esac
done
if [ -n "$setup_failed" ]; then
	[ -z "$want_unit" ] || skip unit "setup failed"
	if [ -n "$want_e2e" ]; then
		for run in "${lane_node[@]}" "${lane_kubernetes[@]}" "${lane_incus[@]}"; do skip "e2e/${run%% *}" "setup failed"; done
	fi
	want_unit= want_e2e=
fi
if [ -n "$want_unit$want_e2e" ]; then
	lanes "$want_unit" "$want_e2e" "$want_fuzz"
elif [ -n "$want_fuzz" ]; then
	fuzz
fi
summary
