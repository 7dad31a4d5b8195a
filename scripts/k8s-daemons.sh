# k8s-daemons.sh, sourced by k8s.sh, k8s-down.sh and k8s-restart.sh
# (with $state set): the test cluster's daemons, each with its pid in
# $state/NAME.pid.

# start NAME CMD...: run a daemon detached, holding none of the caller's
# descriptors (the lock, a CI runner's pipes), its command in NAME.cmd
# (k8s-restart.sh starts it again from there).
start() {
	local name=$1
	shift
	(
		for fd in /proc/$BASHPID/fd/*; do
			fd=${fd##*/}
			[ "$fd" -gt 2 ] && eval "exec $fd>&-"
		done
		cd "$state" # not the caller's directory: it may go (a CI clone), breaking getcwd in children; the daemons' paths are relative to $state
		exec setsid "$@" </dev/null >>"$state/logs/$name.log" 2>&1
	) &
	echo $! >"$state/$name.pid"
	printf '%q ' "$@" >"$state/$name.cmd"
}

pidof_() { [ -f "$state/$1.pid" ] && cat "$state/$1.pid"; }
alive() { local p; p=$(pidof_ "$1") && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }
stop() { # stop NAME...: SIGTERM, wait up to 10 s, then SIGKILL
	local n p
	for n in "$@"; do p=$(pidof_ "$n") && [ -n "$p" ] && kill "$p" 2>/dev/null; done
	for _ in $(seq 1 40); do
		local any=0
		for n in "$@"; do alive "$n" && any=1; done
		[ $any = 0 ] && break
		sleep 0.25
	done
	for n in "$@"; do
		p=$(pidof_ "$n") && [ -n "$p" ] && kill -9 "$p" 2>/dev/null
		rm -f "$state/$n.pid"
	done
}
