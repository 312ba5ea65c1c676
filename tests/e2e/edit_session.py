#!/usr/bin/env python3
"""Edit a real pyinstrument session into a test case, from its own frames.

    edit_session.py IN OUT slower FRAME SHARE   FRAME's own time grows by SHARE
                                                of the run (extra samples whose
                                                stack ends at FRAME, copied from
                                                its real stacks)
    edit_session.py IN OUT faster FRAME SHARE   drop samples under FRAME until
                                                SHARE of the run is gone
    edit_session.py IN OUT scale FACTOR         every sample FACTOR times longer
                                                (a larger workload, same shares)
    edit_session.py IN OUT touch                the same profile, another start
                                                time (a new session, new oid)

FRAME is "Class.function" or "function" (the frame's name and class, as
pyinstrument writes them: `function\\0file\\0line\\x01cClass...`). Edits are
deterministic, and the header (duration, cpu_time, sample_count) follows
the records, as pyinstrument's would: CPU time grows and shrinks with the
samples added or dropped, as it does when code does more or less work.
"""
import json
import sys


def frame_matches(frame, want):
    parts = frame.split("\x00")
    name = parts[0]
    cls = None
    for attr in frame.split("\x01")[1:]:
        if attr.startswith("c"):
            cls = attr[1:]
    full = f"{cls}.{name}" if cls else name
    return full == want or ("." not in want and name == want)


def main():
    src, dst, mode = sys.argv[1:4]
    with open(src) as f:
        d = json.load(f)
    records = d["frame_records"]
    total = sum(t for _, t in records)
    out, changed = [], 0.0
    if mode in ("slower", "faster"):
        want, share = sys.argv[4], float(sys.argv[5])
        goal = share * total
        matching = [i for i, (stack, _) in enumerate(records)
                    if any(frame_matches(fr, want) for fr in stack)]
        if not matching:
            sys.exit(f"no sample under {want}")
        under = sum(records[i][1] for i in matching)
        # spread the edit evenly over the function's samples (Bresenham)
        rate = min(goal / under, 1.0) if mode == "faster" else goal / under
        acc = 0.0
        todo = set(matching)
        for i, (stack, t) in enumerate(records):
            keep = True
            if i in todo and changed < goal:
                acc += rate
                while acc >= 1.0 - 1e-12 and changed < goal:
                    acc -= 1.0
                    if mode == "faster":
                        keep = False
                        changed += t
                        break
                    cut = next(k for k, fr in enumerate(stack) if frame_matches(fr, want))
                    out.append([stack[:cut + 1], t])
                    changed += t
            if keep:
                out.append([stack, t])
        sign = 1 if mode == "slower" else -1
        d["duration"] += sign * changed
        d["cpu_time"] += sign * changed
    elif mode == "scale":
        factor = float(sys.argv[4])
        out = [[stack, t * factor] for stack, t in records]
        d["duration"] *= factor
        d["cpu_time"] *= factor
    elif mode == "touch":
        out = records
        d["start_time"] += 86400
    else:
        sys.exit(f"unknown mode {mode}")
    d["frame_records"] = out
    d["sample_count"] = len(out)
    with open(dst, "w") as f:
        json.dump(d, f)


if __name__ == "__main__":
    main()
