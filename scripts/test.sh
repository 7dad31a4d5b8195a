#!/usr/bin/env bash
# test.sh [STAGE...] — run cornus's test stages (all of them, in order, by
# default: check setup unit e2e fuzz drills; `make test` runs this) and print a
# summary of each stage's result, time and failing tests.
#
# Every stage runs even when an earlier one failed, so a flake in one
# stage hides nothing of the others; the exit status is non-zero when any
# stage failed. Only a failed setup stops something: the stages that need
# its daemons (unit, e2e) are then reported as not run.
#
# Stages: check (gofmt, go vet, golangci-lint by scripts/lint.sh, the
# five platforms' builds by scripts/dist.sh --check), setup
# (scripts/setup.sh), unit (go test ./..., the slowest packages first), e2e
# (the e2e package once per other backend), fuzz (each fuzz target for a
# fixed count of inputs; FUZZTIME overrides), drills (the cluster's fault
# drills, CORNUS_DRILLS=1: they restart the node's kubelet and stop its API
# server, so they run alone, last). They run in that order; e2e
# runs in four lanes at once, each on daemons of its own:
#
#   containerd → bare  (they share CNI's address space: one after the other)
#   kubernetes
#   incus
#   podman → podman-rootless (remote mode's tests only)
#
# and each lane, when its own runs end, takes fuzz targets (CPU only, no
# daemon) from one queue until none is left, so that they fill whichever
# lane ends first.
#
# A profile of the run (vmstat, 2 cores): about 1,900 core-seconds of
# work. e2e in two lanes left the CPU a third idle and fuzz ran alone
# after it. Running unit beside e2e only saturated the CPU and slowed
# every lane. UNIT_P is go test's -p for unit: 3 packages at once took
# unit from 12m11s to 9m44s (the packages that talk to daemons wait on
# them much of the time).
#
# check, setup and unit print as they run; a lane's runs print their
# output, whole, when each ends. Every run's output is also kept in
# $TEST_LOGS (bin/test-logs).
set -uo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
# TEST_TIMEOUT bounds one package's tests: the e2e package runs about ten
# minutes on a 2-core machine among the other packages, past go test's
# default of 10m (stop 43's CI: killed at 609 s while passing).
TEST_TIMEOUT=${TEST_TIMEOUT:-25m}
FUZZTIME=${FUZZTIME:-}
UNIT_P=${UNIT_P:-3}
TEST_LOGS=${TEST_LOGS:-bin/test-logs}
mkdir -p "$TEST_LOGS"
TEST_LOGS=$(cd "$TEST_LOGS" && pwd)

# The e2e runs: name and environment, per lane.
lane_node=(
	"containerd CORNUS_DEPLOY_BACKEND=containerd CORNUS_CONTAINERD_ADDRESS=/run/cornus-containerd/containerd.sock"
	"bare CORNUS_DEPLOY_BACKEND=bare"
)
lane_kubernetes=("kubernetes CORNUS_DEPLOY_BACKEND=kubernetes KUBECONFIG=/run/cornus-k8s/cornus.kubeconfig")
lane_incus=("incus CORNUS_DEPLOY_BACKEND=incus")
# podman-rootless: remote mode on a rootless podman (scripts/podman-rootless.sh),
# its TestRemoteMode tests only (E2E_RUN: go test -run).
lane_podman=(
	"podman CORNUS_DEPLOY_BACKEND=podman CORNUS_PODMAN_SOCKET=/run/cornus-podman/podman.sock"
	"podman-rootless CORNUS_DEPLOY_BACKEND=podman CORNUS_PODMAN_SOCKET=/run/cornus-podman-rootless/podman.sock E2E_RUN=^TestRemoteMode"
)
e2e_all=("${lane_node[@]}" "${lane_kubernetes[@]}" "${lane_incus[@]}" "${lane_podman[@]}")

# The fuzz targets: package, target, default count of inputs (15-60 s
# each here, beside the e2e lanes). A count, not a duration: Go 1.26's fuzz coordinator can fail a
# duration run with a spurious "context deadline exceeded" at its end
# (golang/go#75804, fixed in 1.27).
fuzz_targets=(
	"./spec FuzzLoad 150000x"
	"./compose FuzzStandardizeJSONC 150000x"
	"./translate FuzzComposeToSpec 10000x"
	"./caretaker/mount/export FuzzNames 40000x"
	"./caretaker/mount/p9x FuzzListDirMessages 200000x"
	"./egress FuzzPolicy 100000x"
	"./server FuzzRouteBodies 5000x"
	"./builder FuzzDockerfile 50000x"
	"./builder FuzzExtractContext 10000x"
	"./registry FuzzRequests 60000x"
	"./registry FuzzImport 20000x"
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
	# The client ships for macOS and Windows too (issue 27).
	GO=$GO scripts/dist.sh --check || rc=1
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

# e2e_runs RUN...: e2e runs, one after the other (E2E_RUN=PATTERN among a
# run's variables selects its tests).
e2e_runs() {
	local run envs sel
	for run in "$@"; do
		envs=${run#* }
		sel=()
		if [[ " $envs " == *" E2E_RUN="* ]]; then
			sel=${envs##*E2E_RUN=}
			sel=(-run "${sel%% *}")
		fi
		# shellcheck disable=SC2086 # envs is a list of NAME=VALUE words
		quiet "e2e/${run%% *}" "$envs" env $envs "$GO" test -count=1 -timeout "$TEST_TIMEOUT" "${sel[@]}" ./e2e
	done
}

# The packages whose tests take longest, started first so that the unit
# stage does not end with one of them running alone.
slow_packages=(./e2e ./backends/kubernetes ./backends/incus ./backends/dockerhost ./backends/podman ./backends/bare ./backends/containerd ./server)

# unit_order: every package, the slow ones first.
unit_order() {
	local p skip=()
	printf '%s\n' "${slow_packages[@]}"
	for p in "${slow_packages[@]}"; do
		skip+=("github.com/cornus-dev/cornus/${p#./}")
	done
	"$GO" list ./... | grep -vxF "$(printf '%s\n' "${skip[@]}")"
}

# fuzz_run PKG TARGET COUNT: one fuzz target's run.
fuzz_run() { "$GO" test "$1" -run '^$' -fuzz "^$2\$" -fuzztime "${FUZZTIME:-$3}"; }

# worker: run fuzz targets ("PKG TARGET COUNT") taken one at a time from
# the queue file until it is empty.
worker() {
	local job pkg target count
	while job=$(take "$TEST_LOGS/.queue") && [ -n "$job" ]; do
		read -r pkg target count <<<"$job"
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

# lanes FUZZ: the e2e lanes at once, each then taking fuzz targets from
# the queue (with FUZZ non-empty) until none is left.
lanes() {
	local fz=$1 run t target pids=() queue=$TEST_LOGS/.queue
	: >"$queue"
	for run in "${e2e_all[@]}"; do
		begin "e2e/${run%% *}"
	done
	if [ -n "$fz" ]; then
		for t in "${fuzz_targets[@]}"; do
			read -r _ target _ <<<"$t"
			begin "fuzz/$target"
			echo "$t" >>"$queue"
		done
	fi
	echo "=== e2e: four lanes at once: containerd, bare | kubernetes | incus | podman${fz:+; then, in each: fuzz targets}"
	lane "${lane_node[@]}" &
	pids+=($!)
	lane "${lane_kubernetes[@]}" &
	pids+=($!)
	lane "${lane_incus[@]}" &
	pids+=($!)
	lane "${lane_podman[@]}" &
	pids+=($!)
	wait "${pids[@]}"
}

# lane RUN...: one lane: its e2e runs, then fuzz targets from the queue.
lane() {
	e2e_runs "$@"
	worker
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

[ $# -gt 0 ] || set -- check setup unit e2e fuzz drills
for s in "$@"; do
	case $s in check | setup | unit | e2e | fuzz | drills) ;; *)
		echo "test.sh: unknown stage $s (check, setup, unit, e2e, fuzz, drills)" >&2
		exit 2
		;;
	esac
done
# fuzz joins the e2e lanes' queue when it is asked for after e2e.
fuzz_joins= seen_e2e=
for s in "$@"; do
	case $s in
	e2e) seen_e2e=1 ;;
	fuzz) fuzz_joins=$seen_e2e ;;
	esac
done
for s in "$@"; do
	case $s in
	check) serial check check ;;
	setup) serial setup scripts/setup.sh || setup_failed=1 ;;
	unit)
		if [ -n "$setup_failed" ]; then
			skip unit "setup failed"
		else
			# shellcheck disable=SC2046 # a list of packages
			serial unit "$GO" test -count=1 -timeout "$TEST_TIMEOUT" -p "$UNIT_P" $(unit_order)
		fi
		;;
	e2e)
		if [ -n "$setup_failed" ]; then
			for run in "${e2e_all[@]}"; do skip "e2e/${run%% *}" "setup failed"; done
			fuzz_joins=
		else
			lanes "$fuzz_joins"
		fi
		;;
	fuzz) [ -n "$fuzz_joins" ] || fuzz ;;
	drills)
		if [ -n "$setup_failed" ]; then
			skip drills "setup failed"
		else
			CORNUS_DRILLS=1 serial drills "$GO" test -count=1 -timeout "$TEST_TIMEOUT" -run '^TestClusterFaults$' ./charts
		fi
		;;
	esac
done
summary
