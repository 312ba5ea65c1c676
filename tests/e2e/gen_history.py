# Runs written straight into git (what `results add` commits: the run
# folder with run.json, summary.md and the session's pointer, and the
# month's index shard), ten per commit, sessions never pushed; a
# fast-import stream on stdout.
#
#   python3 gen_history.py FROM COUNT BRANCHREF T0 | git fast-import --quiet
import json, os, random, subprocess, sys, time
start, count, ref, t0 = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
def show(p):
    return subprocess.run(["git", "show", "%s:%s" % (ref, p)], check=True, capture_output=True).stdout.decode()
tree = [p for p in subprocess.run(["git", "ls-tree", "-r", "--name-only", ref, "index/"], check=True,
                                  capture_output=True).stdout.decode().split()
        if not p.startswith(("index/branches/", "index/commits/"))]  # the maps: no shard
shards = {os.path.basename(p): show(p) for p in tree}
template = json.loads(next(l for s in shards.values() for l in s.splitlines() if l.strip()))
# the run.json `results add` wrote, without its summary (null, as with --raw)
record = json.loads(show(template["path"] + "/run.json"))
record["summary"] = None
rnd = random.Random(start)
out = sys.stdout.buffer
def data(b):
    out.write(b"data %d\n" % len(b)); out.write(b); out.write(b"\n")
first = True
for k in range(start, start + count, 10):
    out.write(("commit %s\n" % ref).encode())
    out.write(b"committer results <results@localhost> %d +0000\n" % (t0 + 86400 + k * 28800))
    data(b"Record ten runs")
    if first:
        out.write(("from %s^0\n" % ref).encode()); first = False
    for i in range(k, min(k + 10, start + count)):
        at = t0 + 86400 + i * 28800
        tm = time.gmtime(at)
        sha = "%040x" % rnd.getrandbits(160)
        trig = ("nightly", "pr", "nightly")[i % 3]
        branch = ("main", "feature")[i % 2]
        rid = time.strftime("%Y%m%d-%H%M%S", tm) + "-" + trig + "-" + sha[:7]
        path = time.strftime("runs/%Y/%m/%d/%H%M%S", tm) + "-" + trig + "-" + sha[:7]
        iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", tm)
        oid = "%064x" % rnd.getrandbits(256)
        run = dict(record)
        run.update(id=rid, commit=sha, branch=branch, trigger=trig, recorded_at=iso,
                   files=[{"path": "s.pyisession", "role": "session", "size": 1000, "lfs": True,
                           "oid": oid}])
        if isinstance(run.get("session"), dict):
            run["session"] = dict(run["session"], path="s.pyisession")
        line = dict(template)
        line.update(id=rid, commit=sha, branch=branch, trigger=trig, recorded_at=iso, path=path)
        line.pop("verdict", None)
        shard = time.strftime("%Y-%m.jsonl", tm)
        shards[shard] = shards.get(shard, "") + json.dumps(line, separators=(",", ":")) + "\n"
        out.write(("M 100644 inline %s/run.json\n" % path).encode())
        data(json.dumps(run).encode())
        out.write(("M 100644 inline %s/summary.md\n" % path).encode())
        data(("# run %s\n" % rid).encode())
        out.write(("M 100644 inline %s/s.pyisession\n" % path).encode())
        data(("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize 1000\n" % oid).encode())
        out.write(("M 100644 inline index/%s\n" % shard).encode())
        data(shards[shard].encode())
