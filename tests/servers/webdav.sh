#!/usr/bin/env bash
# Start or stop an nginx WebDAV server on loopback for the tests.
#
#   webdav.sh start DIR [--https] [--user USER:PASS] [--token TOKEN]
#   webdav.sh stop DIR
#
# `start` writes everything (config, data, logs, certificates) under DIR,
# picks a free port and prints shell assignments to eval:
#   RS_WEBDAV_URL=http(s)://127.0.0.1:PORT/store   (the collection does not
#                                                   exist yet: the backend
#                                                   makes it with MKCOL)
#   RS_WEBDAV_ROOT=DIR/data                        (files as stored)
#   RS_WEBDAV_CA=DIR/ca.pem                        (--https only)
# With --https it first makes a throw-away CA and a server certificate for
# 127.0.0.1/localhost signed by it, so a client trusts the server only when
# given that CA. With --user and/or --token every request needs
# "Authorization: Basic ..." or "Authorization: Bearer TOKEN".
#
# nginx (Debian: nginx, libnginx-mod-http-dav-ext) provides PUT, DELETE,
# MKCOL, COPY and MOVE; the dav-ext module adds PROPFIND. nginx writes a
# PUT body to client_body_temp_path and renames it into place, and the temp
# path is on the same file system here, so a PUT is atomic on this server;
# the backend still PUTs to a temporary name and MOVEs, for servers that
# are not.
set -euo pipefail

die() { echo "webdav.sh: $*" >&2; exit 1; }

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: webdav.sh start|stop DIR [options]"
shift 2

nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
dav_ext=/usr/lib/nginx/modules/ngx_http_dav_ext_module.so

if [ "$cmd" = stop ]; then
	if [ -f "$dir/nginx.pid" ]; then
		pid=$(cat "$dir/nginx.pid")
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
	fi
	exit 0
fi
[ "$cmd" = start ] || die "unknown command '$cmd'"

https=0 user="" token=""
while [ $# -gt 0 ]; do
	case $1 in
	--https) https=1 ;;
	--user) user=$2; shift ;;
	--token) token=$2; shift ;;
	*) die "unknown option '$1'" ;;
	esac
	shift
done

[ -x "$nginx_bin" ] || die "nginx is not installed (scripts/install-deps.sh installs it)"
[ -f "$dav_ext" ] || die "libnginx-mod-http-dav-ext is not installed (scripts/install-deps.sh)"

mkdir -p "$dir"/{data,tmp,logs}
dir=$(cd "$dir" && pwd)

if [ $https = 1 ]; then
	# A CA made for this run only; the server certificate names the
	# loopback address and localhost.
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=results test CA" \
		-keyout "$dir/ca.key" -out "$dir/ca.pem" \
		-addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
	openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
		-keyout "$dir/server.key" -out "$dir/server.csr" 2>/dev/null
	printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' >"$dir/server.ext"
	openssl x509 -req -in "$dir/server.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" \
		-CAcreateserial -days 2 -extfile "$dir/server.ext" -out "$dir/server.pem" 2>/dev/null
fi

auth_map=""
auth_check=""
if [ -n "$user" ] || [ -n "$token" ]; then
	auth_map="map \$http_authorization \$rs_auth_ok {
		default 0;"
	if [ -n "$user" ]; then
		auth_map="$auth_map
		\"Basic $(printf '%s' "$user" | base64 -w0)\" 1;"
	fi
	if [ -n "$token" ]; then
		auth_map="$auth_map
		\"Bearer $token\" 1;"
	fi
	auth_map="$auth_map
	}"
	auth_check="if (\$rs_auth_ok = 0) { return 401; }
			add_header WWW-Authenticate 'Basic realm=\"results\"' always;"
fi

user_line=""
[ "$(id -u)" = 0 ] && user_line="user root root;"

for attempt in $(seq 20); do
	port=$(( 20000 + (RANDOM * 32768 + RANDOM) % 40000 ))
	listen="listen 127.0.0.1:$port;"
	ssl=""
	if [ $https = 1 ]; then
		listen="listen 127.0.0.1:$port ssl;"
		ssl="ssl_certificate $dir/server.pem; ssl_certificate_key $dir/server.key;"
	fi
	cat >"$dir/nginx.conf" <<EOF
load_module $dav_ext;
$user_line
worker_processes 2;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 512; }
http {
	access_log $dir/logs/access.log;
	client_body_temp_path $dir/tmp;
	proxy_temp_path $dir/tmp;
	fastcgi_temp_path $dir/tmp;
	uwsgi_temp_path $dir/tmp;
	scgi_temp_path $dir/tmp;
	client_max_body_size 0;
	keepalive_requests 10000;
	$auth_map
	server {
		$listen
		$ssl
		root $dir/data;
		location / {
			$auth_check
			dav_methods PUT DELETE MKCOL COPY MOVE;
			dav_ext_methods PROPFIND OPTIONS;
			dav_access user:rw group:rw all:r;
			create_full_put_path off;
		}
	}
}
EOF
	rm -f "$dir/nginx.pid"
	if "$nginx_bin" -c "$dir/nginx.conf" -p "$dir" -e "$dir/logs/error.log" 2>"$dir/logs/start.err"; then
		for _ in $(seq 50); do
			[ -s "$dir/nginx.pid" ] && break
			sleep 0.1
		done
		scheme=http
		[ $https = 1 ] && scheme=https
		echo "RS_WEBDAV_URL=$scheme://127.0.0.1:$port/store"
		echo "RS_WEBDAV_ROOT=$dir/data"
		[ $https = 1 ] && echo "RS_WEBDAV_CA=$dir/ca.pem"
		exit 0
	fi
	grep -q "Address already in use" "$dir/logs/start.err" "$dir/logs/error.log" 2>/dev/null ||
		die "nginx did not start: $(cat "$dir/logs/start.err")"
done
die "no free port found"
