#!/usr/bin/env python3
"""A git fast-import stream of RUNS recorded runs (bench/scale_history.sh).

    scale_history.py CLONE RUNS T0 [LAYOUT] > stream

CLONE is a results repository holding one run recorded by the real
`results add` (the template: its run.json, summary.md, session pointer,
index line and README.md). The stream adds RUNS-1 more commits on its
branch main, one per run, each with exactly the files `results add`
commits: the run folder (run.json, summary.md, the session pointer), the
index shard the run goes to, and README.md.

The history: PER_DAY runs a day (default 50) from T0 on; every night three
configurations of main's nightly commit (stats population 1000, 5000,
10000: time scales with it), then pull-request runs (trigger pr, branch
pr/N, a commit each) spread over the day; run-to-run noise of +-2%, and a
10% step of every time metric from the middle of the history on, for
trend/check/find to see. Each run has a session of its own (a pointer to
an oid made from the run id, which no store holds: `results check` counts
runs of the same oid once); SESSIONS=same points every run at the
template's session instead, which the store holds.

Speed: the run.json template is cut into its top-level lines once and
only the lines that differ are rewritten per run; blobs are emitted a day
at a time, like with like (run.json after run.json, each version of a
shard after the previous one), so fast-import stores each as a delta of
the previous one, as a pushed repository holds them after git's repack.

LAST_MONTH_RUNS=K puts the last K runs into one month, from its first day
on (at most 28 days, K/28 a day): a month as busy as a benchmark needs.

The branch map and the commit map (index/branches/X/Y.jsonl,
index/commits/X/Y/Z.jsonl and their covered.json, src/runs/branchmap.h)
are written as `results add` writes them: each commit rewrites its run's
branch's bucket, its commit's bucket and both covered.json (MAP=0: no
map, as a repository recorded before them; MAP=branches: the branch map
only, as a repository recorded before the commit map).

LAYOUT is the index layout to write: "month" (index/YYYY-MM.jsonl, one
shard per month, the layout before runs/index shards were bounded) or
"bounded" (index/YYYY-MM.jsonl then index/YYYY-MM/0002.jsonl..., SHARD_RUNS
runs a shard at most, docs/run-format.md); default "bounded".
"""
import hashlib
import json
import os
import random
import sys
import time

clone, runs, t0 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
layout = sys.argv[4] if len(sys.argv) > 4 else "bounded"
per_day = int(os.environ.get("PER_DAY", "50"))
shard_runs = int(os.environ.get("SHARD_RUNS", "128"))
same_session = os.environ.get("SESSIONS", "distinct") == "same"
map_env = os.environ.get("MAP", "1")
write_map = map_env != "0"
write_cmap = map_env not in ("0", "branches")
MAP_RUNS = 128  # RS_BRANCHMAP_RUNS
if layout not in ("month", "bounded") or runs < 1 or per_day < 4:
    sys.exit("usage: scale_history.py CLONE RUNS T0 [month|bounded] (PER_DAY >= 4)")


def git(*args):
    import subprocess
    return subprocess.run(["git", "-C", clone] + list(args), check=True,
                          stdout=subprocess.PIPE).stdout


# --- the template: the one run recorded by results add ----------------------
index_files = [p for p in git("ls-tree", "-r", "--name-only", "HEAD", "index").decode().split("\n")
               if p and not p.startswith(("index/branches/", "index/commits/"))]
if len(index_files) != 1:
    sys.exit("scale_history.py: the template clone must hold exactly one index shard")
line0 = json.loads(git("show", "HEAD:" + index_files[0]).decode().split("\n")[0])
folder = line0["path"]
run_text = git("show", "HEAD:%s/run.json" % folder).decode()
summary_md = git("show", "HEAD:%s/summary.md" % folder).decode()
run0 = json.loads(run_text)
session = run0["session"]["path"]
pointer = git("show", "HEAD:%s/%s" % (folder, session)).decode()
oid0 = run0["session"]["oid"]
readme = git("show", "HEAD:README.md").decode()
readme_head = readme[:readme.index("|---")]
readme_head += readme[readme.index("|---"):].split("\n")[0] + "\n"

# run.json: "{", one line per top-level key ('  "key": value'), "}".
lines = run_text.rstrip("\n").split("\n")
assert lines[0] == "{" and lines[-1] == "}", "unexpected run.json layout"
chunks = []  # [key, text] in order, text ending with its newline
for ln in lines[1:-1]:
    if ln.startswith('  "') and not ln.startswith('   '):
        chunks.append([ln[3:ln.index('"', 3)], ln + "\n"])
    else:
        chunks[-1][1] += ln + "\n"
keys = [k for k, _ in chunks]
fixed = {k: t for k, t in chunks}
last_key = keys[-1]
time_metrics = ("duration", "cpu_time", "sampled_time")


def value_line(key, value):
    text = '  "%s": %s' % (key, json.dumps(value, separators=(",", ":"), sort_keys=True))
    return text + ("\n" if key == last_key else ",\n")


def run_json(over):
    out = ["{\n"]
    for k in keys:
        out.append(value_line(k, over[k]) if k in over else fixed[k])
    out.append("}\n")
    return "".join(out).encode()


# --- the history -------------------------------------------------------------
rnd = random.Random(42)
out = sys.stdout.buffer
configs = (1000, 5000, 10000)
shards = {}       # shard path -> [lines] (the shard as it is at the branch head)
month_shards = {}  # "YYYY-MM" -> number of its shards (bounded layout)
recent = []       # README rows, newest last
step_at = runs // 2
shards[index_files[0]] = [json.dumps(line0, separators=(",", ":")) + "\n"]
if layout == "bounded":
    month_shards[index_files[0][6:13]] = 1   # index/YYYY-MM.jsonl, the month's first


def shard_name(month, n):
    return "index/%s.jsonl" % month if n == 1 else "index/%s/%04d.jsonl" % (month, n)


def shard_path(tm):
    month = time.strftime("%Y-%m", tm)
    if layout == "month":
        shards.setdefault(shard_name(month, 1), [])
        return shard_name(month, 1)
    n = month_shards.get(month, 0)
    if n == 0 or len(shards[shard_name(month, n)]) >= shard_runs:
        n += 1
        month_shards[month] = n
        shards[shard_name(month, n)] = []
    return shard_name(month, n)


# --- the branch map and the commit map (src/runs/branchmap.c) -----------------
# per map: bucket number -> {key: {"shards": [[month, seq, runs], ...] newest first, "more"}}
buckets = {"branches": {}, "commits": {}}
FIELD = {"branches": "branch", "commits": "commit"}


def bucket_of(kind, key):
    if kind == "commits":  # the first three hex digits
        return int(key[:3].lower(), 16)
    h = 2166136261
    for c in key.encode():
        h = ((h ^ c) * 16777619) & 0xffffffff
    return h & 255


def map_add(kind, key, sp):
    month = sp[6:13]
    seq = 1 if len(sp) == 19 else int(sp[14:18])
    b = buckets[kind].setdefault(bucket_of(kind, key), {})
    e = b.setdefault(key, {"shards": [], "more": False})
    sh = e["shards"]
    for k, (m, q, n) in enumerate(sh):
        if (m, q) == (month, seq):
            sh[k][2] += 1
            break
        if (m, q) < (month, seq):
            sh.insert(k, [month, seq, 1])
            break
    else:
        sh.append([month, seq, 1])
    total = 0
    for k, x in enumerate(sh):
        if total >= MAP_RUNS:
            del sh[k:]
            e["more"] = True
            break
        total += x[2]


def bucket_text(kind, n):
    out = []
    for key in sorted(buckets[kind][n], key=lambda x: x.encode()):
        e = buckets[kind][n][key]
        o = {FIELD[kind]: key, "shards": e["shards"]}
        if e["more"]:
            o["more"] = True
        out.append(json.dumps(o, separators=(",", ":")) + "\n")
    return "".join(out)


def readme_row(e):
    m = e["metrics"]
    return "| %s | `%s` | %s | %s | %.3f | %d | %s | [%s](%s/summary.md) |\n" % (
        e["recorded_at"].replace("T", " ").rstrip("Z"), e["commit"][:7], e["branch"],
        e["trigger"], m["duration"], m["samples"], e.get("verdict", ""), e["id"], e["path"])


map_add("branches", line0["branch"], index_files[0])  # the template's run, as its add mapped it
map_add("commits", line0["commit"], index_files[0])


def data(b):
    out.write(b"data %d\n" % len(b))
    out.write(b)
    out.write(b"\n")


def day_runs(day0, n):
    """The (time, trigger, branch, config) of the runs of one day."""
    nightly = [(day0 + 2 * 3600 + k * 600, "nightly", "main", c) for k, c in enumerate(configs)]
    prs = sorted(rnd.randrange(8 * 3600, 20 * 3600) for _ in range(n - len(nightly)))
    return (nightly + [(day0 + s, "pr", "pr/%d" % rnd.randrange(1, 5000),
                        configs[rnd.randrange(3)]) for s in prs])[:n]


day0 = t0 - t0 % 86400
done = 1
pr_seq = 0
first = True
busy = min(int(os.environ.get("LAST_MONTH_RUNS", "0")), runs - 1)
busy_day = (busy + 27) // 28 if busy else 0
while done < runs:
    day0 += 86400
    today = min(per_day, runs - busy - done) if done < runs - busy else 0
    if today <= 0:  # the busy last month: from its first day, busy_day runs a day
        if time.gmtime(day0).tm_mday != 1 and done == runs - busy:
            continue
        today = min(busy_day, runs - done)
    batch = []
    nightly_sha = "%040x" % rnd.getrandbits(160)
    for at, trigger, branch, pop in day_runs(day0, today):
        done += 1
        tm = time.gmtime(at)
        sha = nightly_sha if trigger == "nightly" else "%040x" % rnd.getrandbits(160)
        rid = time.strftime("%Y%m%d-%H%M%S", tm) + "-%s-%s" % (trigger, sha[:7])
        path = time.strftime("runs/%Y/%m/%d/%H%M%S", tm) + "-%s-%s" % (trigger, sha[:7])
        iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", tm)
        f = (1.10 if done > step_at else 1.0) * (1 + rnd.uniform(-0.02, 0.02)) * pop / 1000.0
        metrics = {k: (v * f if k in time_metrics or k.startswith("phase.") else v)
                   for k, v in run0["metrics"].items()}
        metrics["samples"] = int(run0["metrics"]["samples"] * f)
        metrics["population"] = pop
        over = {"id": rid, "commit": sha, "recorded_at": iso, "branch": branch,
                "trigger": trigger, "metrics": metrics, "stats": {"population": pop}}
        oid = oid0 if same_session else hashlib.sha256(rid.encode()).hexdigest()
        if oid != oid0:  # a session of its own (only its pointer: the store lacks it)
            over["files"] = [dict(f, oid=oid) if f.get("oid") == oid0 else f for f in run0["files"]]
            over["session"] = dict(run0["session"], oid=oid)
        entry = dict(line0)
        entry.update(id=rid, commit=sha, branch=branch, trigger=trigger,
                     recorded_at=iso, path=path, metrics=metrics)
        batch.append((at, rid, path, over, entry, pointer.replace(oid0, oid)))
    # blobs, like with like: run.json, summary.md, then each shard version
    mark = 0
    for b in batch:
        mark += 1
        out.write(b"blob\nmark :%d\n" % mark)
        data(run_json(b[3]))
    for b in batch:
        mark += 1
        out.write(b"blob\nmark :%d\n" % mark)
        data(summary_md.replace(run0["id"], b[1]).encode())
    shard_marks = []
    for b in batch:
        sp = shard_path(time.gmtime(b[0]))
        shards[sp].append(json.dumps(b[4], separators=(",", ":")) + "\n")
        mark += 1
        out.write(b"blob\nmark :%d\n" % mark)
        data("".join(shards[sp]).encode())
        shard_marks.append((sp, mark))
    n = len(batch)
    for k, b in enumerate(batch):
        at, rid, path = b[0], b[1], b[2]
        recent.append(readme_row(b[4]))
        del recent[:-20]
        out.write(b"commit refs/heads/main\n")
        out.write(b"committer results <results@localhost> %d +0000\n" % at)
        data(("Record run %s\n\nProfiled commit %s on %s (%s).\n" %
              (rid, b[4]["commit"], b[4]["branch"], b[4]["trigger"])).encode())
        if first:
            out.write(b"from refs/heads/main^0\n")
            if not write_map:  # a repository from before the maps
                out.write(b"D index/branches\n")
            if not write_cmap:  # a repository from before the commit map
                out.write(b"D index/commits\n")
            first = False
        out.write(("M 100644 :%d %s/run.json\n" % (k + 1, path)).encode())
        out.write(("M 100644 :%d %s/summary.md\n" % (n + k + 1, path)).encode())
        out.write(("M 100644 inline %s/%s\n" % (path, session)).encode())
        data(b[5].encode())
        sp, sm = shard_marks[k]
        out.write(("M 100644 :%d %s\n" % (sm, sp)).encode())
        for kind, key, on in (("branches", b[4]["branch"], write_map),
                              ("commits", b[4]["commit"], write_cmap)):
            if not on:
                continue
            map_add(kind, key, sp)
            bn = bucket_of(kind, key)
            if kind == "commits":
                out.write(("M 100644 inline index/commits/%x/%x/%x.jsonl\n" %
                           (bn >> 8, (bn >> 4) & 15, bn & 15)).encode())
            else:
                out.write(("M 100644 inline index/branches/%x/%x.jsonl\n" % (bn >> 4, bn & 15)).encode())
            data(bucket_text(kind, bn).encode())
            out.write(("M 100644 inline index/%s/covered.json\n" % kind).encode())
            data((json.dumps({"run": rid}, separators=(",", ":")) + "\n").encode())
        if k == n - 1:  # README.md: the 20 newest, once a day (the last commit of each day)
            out.write(b"M 100644 inline README.md\n")
            data((readme_head + "".join(reversed(recent))).encode())
out.write(b"done\n")
