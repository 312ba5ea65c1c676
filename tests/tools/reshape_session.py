#!/usr/bin/env python3
"""Rewrite a real pyinstrument session's sample times, keeping its real
frames and stacks: every sample whose stack holds a frame of FUNCTION has
its time multiplied by FACTOR (repeatable). Writes the session as
pyinstrument does (compact JSON, no trailing newline) and fixes its
duration to the new sum of times, so that a test can make a real run
slower in one phase and faster in another.

    reshape_session.py IN OUT FUNCTION=FACTOR [FUNCTION=FACTOR ...]

FUNCTION is the function's name ("make_initial_population"); a stack
holding several of them takes the first factor that matches, in the order
given.
"""
import json
import sys


def main():
    src, dst, *rules = sys.argv[1:]
    factors = []
    for r in rules:
        name, _, f = r.partition("=")
        factors.append((name, float(f)))
    with open(src, encoding="ascii") as fh:
        s = json.load(fh)
    total = 0.0
    for rec in s["frame_records"]:
        frames, t = rec
        names = {fr.split("\x00", 1)[0] for fr in frames}
        for name, f in factors:
            if name in names:
                t *= f
                break
        rec[1] = t
        total += t
    s["duration"] = total
    with open(dst, "w", encoding="ascii") as fh:
        json.dump(s, fh, separators=(",", ":"))


if __name__ == "__main__":
    main()
