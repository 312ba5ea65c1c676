# Sourced by fault-proxy.sh and hostile-server.sh, which start one of the
# Node.js test servers on loopback and stop it again. The caller sets `me`
# (its own name, for messages) first.

die() { echo "$me: $*" >&2; exit 1; }

# node_server_main NAME "$@": "stop DIR" stops the server of DIR/NAME.pid;
# "start DIR OPTIONS..." calls the caller's start DIR OPTIONS....
node_server_main() {
	local name=$1 cmd=${2:-} dir=${3:-}
	[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: $me start|stop DIR [options]"
	shift 3
	case $cmd in
	stop) node_server_stop "$dir" "$name" ;;
	start) start "$dir" "$@" ;;
	*) die "unknown command '$cmd'" ;;
	esac
}

# node_server_stop DIR NAME: stops the server whose pid is in DIR/NAME.pid.
node_server_stop() {
	if [ -f "$1/$2.pid" ]; then
		kill "$(cat "$1/$2.pid")" 2>/dev/null || true
		rm -f "$1/$2.pid"
	fi
}

# node_server_start DIR NAME WHAT ERR VAR NODE-ARGS...: runs node NODE-ARGS
# in a session of its own (setsid: the server must not die with the shell
# that started it), its stderr to ERR, its pid in DIR/NAME.pid; waits up to
# 20 s for the PORT=N line it prints once it listens, and prints
# VAR=http://127.0.0.1:N. WHAT names it in messages.
node_server_start() {
	local dir=$1 name=$2 what=$3 err=$4 var=$5 port
	shift 5
	command -v node >/dev/null || die "node is not installed (scripts/install-deps.sh)"
	mkdir -p "$dir"
	rm -f "$dir/$name.port"
	setsid node "$@" >"$dir/$name.port" 2>"$err" </dev/null &
	echo $! >"$dir/$name.pid"
	for _ in $(seq 400); do
		grep -q '^PORT=' "$dir/$name.port" 2>/dev/null && break
		kill -0 "$(cat "$dir/$name.pid")" 2>/dev/null || die "$what exited: $(cat "$err")"
		sleep 0.05
	done
	port=$(sed -n 's/^PORT=//p' "$dir/$name.port")
	[ -n "$port" ] || die "$what did not report its port"
	echo "$var=http://127.0.0.1:$port"
}
