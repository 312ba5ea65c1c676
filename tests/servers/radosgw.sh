#!/usr/bin/env bash
# Start or stop a single-node Ceph cluster with its S3 gateway (radosgw)
# on loopback, for the tests that need a real S3 implementation:
#
#   radosgw.sh start <statedir>   # writes <statedir>/env, prints it
#   radosgw.sh stop <statedir>
#
# One monitor (msgr2 only), one OSD on memstore (everything in memory, so
# nothing touches a disk and the cluster is gone when it stops) and one
# radosgw with the beast frontend, each on a free port of 127.0.0.1, every
# file under <statedir>. Authentication inside the cluster is off; the S3
# side checks SigV4 signatures as AWS does, for the user RS_RGW_ACCESS_KEY
# / RS_RGW_SECRET_KEY made here. The bucket RS_RGW_BUCKET (default
# "results-test") is created with a signed PUT.
#
# <statedir>/env sets RS_RGW_URL (http://127.0.0.1:PORT), RS_RGW_BUCKET,
# RS_RGW_ACCESS_KEY and RS_RGW_SECRET_KEY. Packages (Debian 12): ceph-mon
# ceph-osd radosgw ceph-common (scripts/install-deps.sh). When they are
# missing or a daemon does not come up this fails (exit 1) with the
# daemon's log: the suites that need it fail, they never skip.
# /work/shared/SERVERS-NOTES.md explains the settings below.
set -euo pipefail

die() { echo "radosgw.sh: $*" >&2; exit 1; }

cmd=${1:-}
state=${2:-}
[ -n "$cmd" ] && [ -n "$state" ] || die "usage: radosgw.sh start|stop <statedir>"

stop_all() {
	local f pid
	# radosgw first (it talks to the others), the monitor last.
	for f in "$state/run/rgw.pid" "$state/run/osd.pid" "$state/run/mon.pid"; do
		[ -f "$f" ] || continue
		pid=$(cat "$f")
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -9 "$pid" 2>/dev/null || true
		rm -f "$f"
	done
}

if [ "$cmd" = stop ]; then
	stop_all
	exit 0
fi
[ "$cmd" = start ] || die "unknown command '$cmd'"

for b in ceph-mon ceph-osd radosgw radosgw-admin monmaptool ceph python3; do
	command -v "$b" >/dev/null ||
		die "'$b' is not installed (Debian: ceph-mon ceph-osd radosgw ceph-common; scripts/install-deps.sh): the radosgw tests cannot run and fail"
done

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# A daemon's log on failure, then stop what was started.
give_up() {
	echo "radosgw.sh: $1; logs:" >&2
	tail -n 30 "$state"/log/*.log >&2 2>/dev/null || true
	stop_all
	exit 1
}

# wait_for SECONDS WHAT PIDFILE COMMAND...: until COMMAND succeeds.
wait_for() {
	local limit=$1 what=$2 pidfile=$3
	shift 3
	for _ in $(seq 1 $((limit * 5))); do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		if [ -f "$pidfile" ] && ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
			give_up "$what exited"
		fi
		sleep 0.2
	done
	give_up "$what did not come up within $limit s"
}

rm -rf "$state/mon" "$state/osd" "$state/run" "$state/log"
mkdir -p "$state/mon/a" "$state/osd/0" "$state/run" "$state/log"
mon_port=$(free_port)
rgw_port=$(free_port)
fsid=$(python3 -c 'import uuid; print(uuid.uuid4())')
bucket=${RS_RGW_BUCKET:-results-test}
access=RSTESTACCESSKEY0001
secret=rs-test-secret-key-not-a-real-one-0001
conf=$state/ceph.conf

cat >"$conf" <<EOF
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$mon_port
public addr = 127.0.0.1
ms bind msgr1 = false
ms bind msgr2 = true
auth cluster required = none
auth service required = none
auth client required = none
auth supported = none
# Pacific's default "secure" makes radosgw fail with auth off (-13).
ms mon client mode = crc secure
osd objectstore = memstore
memstore device bytes = 3221225472
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon warn on pool no redundancy = false
osd crush chooseleaf type = 0
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
# memstore's limits: the OSD refuses to start with the defaults.
osd max object name len = 460
osd max object namespace len = 64
mon data = $state/mon/\$id
osd data = $state/osd/\$id
run dir = $state/run
admin socket = $state/run/\$name.asok
log file = $state/log/\$name.log
keyring = $state/keyring
crash dir = $state/crash
mon cluster log file = $state/log/cluster.log

[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$rgw_port
rgw data = $state/rgw
rgw dns name = localhost
log file = $state/log/rgw.log
EOF
: >"$state/keyring"

monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_port]" "$state/monmap" >/dev/null ||
	give_up "monmaptool failed"
ceph-mon -c "$conf" --mkfs -i a --monmap "$state/monmap" >"$state/log/mon-mkfs.out" 2>&1 ||
	give_up "ceph-mon --mkfs failed: $(cat "$state/log/mon-mkfs.out")"
ceph-mon -c "$conf" -i a --pid-file "$state/run/mon.pid" >"$state/log/mon.out" 2>&1 ||
	give_up "ceph-mon did not start"
wait_for 20 ceph-mon "$state/run/mon.pid" timeout 5 ceph -c "$conf" mon stat

osd_uuid=$(python3 -c 'import uuid; print(uuid.uuid4())')
osd_id=$(timeout 20 ceph -c "$conf" osd new "$osd_uuid") || give_up "ceph osd new failed"
[ "$osd_id" = 0 ] || give_up "the new OSD got id '$osd_id', not 0"
ceph-osd -c "$conf" -i 0 --mkfs --osd-uuid "$osd_uuid" >"$state/log/osd-mkfs.out" 2>&1 ||
	give_up "ceph-osd --mkfs failed: $(cat "$state/log/osd-mkfs.out")"
ceph-osd -c "$conf" -i 0 --pid-file "$state/run/osd.pid" >"$state/log/osd.out" 2>&1 ||
	give_up "ceph-osd did not start"
osd_up() { timeout 5 ceph -c "$conf" osd stat 2>/dev/null | grep -q '1 up'; }
wait_for 30 ceph-osd "$state/run/osd.pid" osd_up

radosgw -c "$conf" -n client.rgw.a --pid-file "$state/run/rgw.pid" >"$state/log/rgw.out" 2>&1 ||
	give_up "radosgw did not start"
wait_for 40 radosgw "$state/run/rgw.pid" curl -sf -o /dev/null "http://127.0.0.1:$rgw_port/"

timeout 30 radosgw-admin -c "$conf" -n client.rgw.a user create --uid=results-test \
	--display-name="results tests" --access-key="$access" --secret-key="$secret" \
	>"$state/log/user.out" 2>&1 || give_up "radosgw-admin user create failed: $(cat "$state/log/user.out")"

# The bucket, with a signed PUT (SigV4 by hand: curl 7.88's --aws-sigv4
# fails against RGW, and the project's own signer is what is under test).
python3 - "$rgw_port" "$bucket" "$access" "$secret" <<'PY' || give_up "cannot create the bucket"
import datetime, hashlib, hmac, sys, urllib.request
port, bucket, access, secret = sys.argv[1:5]
host = "127.0.0.1:%s" % port
now = datetime.datetime.now(datetime.timezone.utc)
amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
empty = hashlib.sha256(b"").hexdigest()
headers = {"host": host, "x-amz-content-sha256": empty, "x-amz-date": amz_date}
signed = ";".join(sorted(headers))
canonical = "\n".join(["PUT", "/" + bucket, "",
                       "".join("%s:%s\n" % (k, headers[k]) for k in sorted(headers)),
                       signed, empty])
scope = "%s/us-east-1/s3/aws4_request" % day
to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                     hashlib.sha256(canonical.encode()).hexdigest()])
key = ("AWS4" + secret).encode()
for part in (day, "us-east-1", "s3", "aws4_request"):
    key = hmac.new(key, part.encode(), hashlib.sha256).digest()
sig = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
req = urllib.request.Request("http://%s/%s" % (host, bucket), method="PUT", data=b"")
for k, v in headers.items():
    if k != "host":
        req.add_header(k, v)
req.add_header("Authorization", "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s"
               % (access, scope, signed, sig))
with urllib.request.urlopen(req, timeout=30) as r:
    if r.status != 200:
        sys.exit("PUT bucket answered %d" % r.status)
PY

cat >"$state/env" <<EOF
RS_RGW_URL=http://127.0.0.1:$rgw_port
RS_RGW_BUCKET=$bucket
RS_RGW_ACCESS_KEY=$access
RS_RGW_SECRET_KEY=$secret
EOF
cat "$state/env"
