#!/usr/bin/env python3
"""Edit a real pyinstrument session's frame_records into a regression shape.

    edit_session.py IN OUT new-caller NAME SHARE
    edit_session.py IN OUT slower FRACTION

The frames are the session's own (real stacks of a pandas model); the edit
is deterministic (no randomness: the same input gives the same bytes).

- The shared helper is chosen from the session: the project's function
  (not site-packages, the standard library or a pseudo-file) with the most
  distinct callers, at least 4, under 40% of the run.
- new-caller: a new function NAME, in the file of the helper's heaviest
  caller A, called by A and calling the helper: copies of the session's
  real stacks through the helper, re-rooted under A > NAME, are added until
  they hold SHARE of the edited run.
- slower: the helper slower wherever it is called, in its own body: for
  every context (stack prefix down to the helper) FRACTION of its old time
  there is added as samples of the helper calling the library function it
  calls most (as if it now copied its input through pandas).

Records are added evenly among the old ones; sample_count, duration and
cpu_time are raised by what was added. Prints "helper<TAB>caller".
"""
import collections
import json
import sys


def is_lib(file):
    return ("site-packages" in file or "dist-packages" in file or "/lib/python3" in file
            or file.startswith("<"))


def ident(frame):
    p = frame.split("\x00")
    return (p[0], p[1])


def main():
    src, dst, mode = sys.argv[1:4]
    with open(src) as f:
        d = json.load(f)
    recs = d["frame_records"]
    total = sum(t for _, t in recs)
    tot, callers = collections.Counter(), collections.defaultdict(collections.Counter)
    for frames, t in recs:
        ks = [ident(x) for x in frames]
        for k in set(ks):
            tot[k] += t
        for a, b in set(zip(ks, ks[1:])):
            callers[b][a] += t
    cands = [k for k in tot if not is_lib(k[1]) and len(callers[k]) >= 4 and tot[k] < 0.4 * total]
    cands.sort(key=lambda k: (-len(callers[k]), -tot[k], k))
    helper = cands[0]
    caller = callers[helper].most_common(1)[0][0]

    # stacks through the helper: (index of the helper's frame, record)
    through = []
    for frames, t in recs:
        for i, x in enumerate(frames):
            if ident(x) == helper:
                through.append((i, frames, t))
                break
    added = []
    if mode == "new-caller":
        name, share = sys.argv[4], float(sys.argv[5])
        # the stack prefix down to A, from the stack that holds A most often
        prefixes = collections.Counter()
        for frames, t in recs:
            for i, x in enumerate(frames):
                if ident(x) == caller:
                    prefixes[tuple(frames[: i + 1])] += t
                    break
        prefix = list(max(prefixes.items(), key=lambda kv: (kv[1], kv[0]))[0])
        lines = [int(x.split("\x00")[2].split("\x01")[0]) for frames, _ in recs for x in frames
                 if ident(x)[1] == caller[1]]
        new = "%s\x00%s\x00%d" % (name, caller[1], max(lines) + 20)
        want = share / (1 - share) * total
        k = 0
        while sum(t for _, t in added) < want:
            i, frames, t = through[k % len(through)]
            added.append([prefix + [new] + frames[i:], t])
            k += 1
    elif mode == "slower":
        frac = float(sys.argv[4])
        below = collections.Counter()
        for i, frames, t in through:
            if i + 1 < len(frames) and is_lib(ident(frames[i + 1])[1]):
                below[frames[i + 1].split("\x01")[0]] += t
        lib = below.most_common(1)[0][0]
        budget = collections.Counter()
        for i, frames, t in through:
            ctx = tuple(frames[: i + 1])
            budget[ctx] += frac * t
            while budget[ctx] >= t:
                budget[ctx] -= t
                added.append([list(ctx) + [lib], t])
    else:
        sys.exit("edit_session.py: unknown mode %r" % mode)

    out, step = [], max(1, len(recs) // max(1, len(added)))
    j = 0
    for n, r in enumerate(recs):
        out.append(r)
        if n % step == step - 1 and j < len(added):
            out.append(added[j])
            j += 1
    out.extend(added[j:])
    more = sum(t for _, t in added)
    d["frame_records"] = out
    d["sample_count"] = len(out)
    d["duration"] = d["duration"] + more
    if d.get("cpu_time") is not None:
        d["cpu_time"] = d["cpu_time"] + more
    with open(dst, "w") as f:
        json.dump(d, f)
    print("%s\t%s" % (helper[0], caller[0]))


if __name__ == "__main__":
    main()
