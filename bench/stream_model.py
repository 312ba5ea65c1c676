#!/usr/bin/env python3
"""What other layouts and contexts of the session codec's streams would cost.

    stream_model.py SESSION.pyisession [SESSION ...]

A model of the codec's tree, samples and times streams (docs/codec.md)
with the same adaptive coder: each value is its bit length (a 7-level bit
tree of counting probabilities), then the two bits below the top one and
each lower bit, with LZMA's 12-bit probabilities (rc_model.h). Each cost
is -log2 of the probability the coder would give, so the figures are what
a range coder would write, within a few bytes. On the real 78 MB run in
tests/data the model gives the samples stream 69.2 KB where the codec
writes 69.3 KB; its tree is simpler than the codec's (34.1 KB against
32.4), so compare each alternative with this model's own layout.

Prints, in KB, for each session:
  layout      the codec's layout: tree (frame codes, child counts) and
              samples (the depth-first difference, by the last length)
  moves       the samples as moves from the previous record's stack in a
              tree grown as the records come (frames dropped, then a child
              per level by its count's rank, or a new one, its frame coded
              as the tree codes frames): tree and samples in one
  moves+pred  the same, trying first the child last taken at the node and
              the one that followed it there
  reached     the samples counted over the nodes reached so far (and each
              reached node's next new child), not over the whole tree
  times       the times' zigzag(n - median) under several contexts
Figures and their reading: docs/benchmarks.md, the eighth session.
Pure Python: about 10 s for the 78 MB run.
"""
import bisect
import collections
import json
import math
import sys

LOG = math.log2


def zz(x):
    return 2 * x if x >= 0 else -2 * x - 1


def bit_cost(p, b):
    return -LOG(p / 4096 if b == 0 else 1 - p / 4096)


class Value:
    """One context of rc_model.h's value coder (struct rc_uint)."""

    def __init__(self, limit=4):
        self.len = [2048] * 128
        self.n = [0] * 128
        self.limit = limit
        self.high = [[2048] * 4 for _ in range(65)]
        self.low = [[2048] * 64 for _ in range(65)]

    @staticmethod
    def _bit(arr, i, b, shift=5):
        p = arr[i]
        c = bit_cost(p, b)
        arr[i] = p + ((4096 - p) >> shift) if b == 0 else p - (p >> shift)
        return c

    def code(self, v):
        L, c, node = v.bit_length(), 0.0, 1
        for j in range(6, -1, -1):
            b = (L >> j) & 1
            c += self._bit(self.len, node, b, 1 + self.n[node])
            if self.n[node] < self.limit:
                self.n[node] += 1
            node = 2 * node + b
        hn = 1
        for i in range(L - 2, -1, -1):
            b = (v >> i) & 1
            if i >= L - 3:
                c += self._bit(self.high[L], hn, b)
                hn = 2 * hn + b
            else:
                c += self._bit(self.low[L], i, b)
        return c


class Contexts(dict):
    def __init__(self, limit=4):
        super().__init__()
        self.limit = limit

    def code(self, key, v):
        m = self.get(key)
        if m is None:
            m = self[key] = Value(self.limit)
        return m.code(v)


def load(path):
    with open(path) as f:
        d = json.load(f)
    ids = {}
    recs = [(tuple(ids.setdefault(fr, len(ids)) for fr in st), t) for st, t in d["frame_records"]]
    return ids, recs


def frame_ranks(ids):
    """The dictionary's order: by file, first line, name, then the rest (near the codec's)."""
    def key(s):
        parts = s.split("\0")
        rest = parts[2] if len(parts) > 2 else ""
        first = rest.split("\1")[0]
        return (parts[1] if len(parts) > 1 else "", int(first) if first.isdigit() else 0, parts[0], rest)

    return {ids[s]: i for i, s in enumerate(sorted(ids, key=key))}


class FrameCoder:
    """A node's frame by its place among the frames met under its parent's frame (docs/codec.md)."""

    def __init__(self, rank):
        self.rank = rank
        self.place = collections.defaultdict(dict)
        self.last = {}
        self.ctx = Contexts(3)

    def code(self, parent_frame, frame, ctx=0):
        places = self.place[parent_frame]
        if frame in places:
            return self.ctx.code(ctx, places[frame] + 1)
        c = self.ctx.code(ctx, 0)
        if places:
            c += self.ctx.code("rank", zz(self.rank[frame] - self.last[parent_frame]))
        else:
            c += self.ctx.code("first", self.rank[frame])
        places[frame] = len(places)
        self.last[parent_frame] = self.rank[frame]
        return c


def common(a, b):
    k = 0
    while k < len(a) and k < len(b) and a[k] == b[k]:
        k += 1
    return k


def tree_of(stacks):
    """Children in the order records first reach them; depth-first numbers."""
    kids, seen = collections.defaultdict(list), {()}
    for st in stacks:
        for i in range(1, len(st) + 1):
            if st[:i] not in seen:
                seen.add(st[:i])
                kids[st[:i - 1]].append(st[:i])
    num, order, todo = {}, [], [()]
    while todo:
        x = todo.pop()
        num[x] = len(order)
        order.append(x)
        todo.extend(reversed(kids[x]))
    return kids, num, order


def layout(stacks, rank, kids, num, order):
    fc, counts, frames, nkids, after_leaf = FrameCoder(rank), Contexts(3), 0.0, 0.0, False
    for x in order:
        if x:
            frames += fc.code(x[-2] if len(x) > 1 else None, x[-1], int(after_leaf))
        nkids += counts.code(0, len(kids[x]))
        after_leaf = not kids[x]
    samples, ctx, prev, plen = 0.0, Contexts(), 0, 0
    for st in stacks:
        v = zz(num[st] - prev)
        samples += ctx.code(plen, v)
        plen, prev = v.bit_length(), num[st]
    return frames, nkids, samples


def moves(stacks, rank, predict):
    fc, dropped, choice = FrameCoder(rank), Contexts(), Contexts()
    hits = collections.defaultdict(lambda: [2048])
    counts = collections.defaultdict(collections.Counter)
    last_child, then = {}, collections.defaultdict(dict)
    total, prev, STOP = 0.0, (), None

    def guess(key, hit):
        p = hits[key]
        c = bit_cost(p[0], 0 if hit else 1)
        p[0] = p[0] + ((4096 - p[0]) >> 5) if hit else p[0] - (p[0] >> 5)
        return c

    for st in stacks:
        k = common(st, prev)
        total += dropped.code(min(len(prev), 64), len(prev) - k)
        node, depth, first = st[:k], k, True
        excluded = prev[k] if k < len(prev) else "none"
        while True:
            sym = st[depth] if depth < len(st) else STOP
            cnt = counts[node]
            skip = {excluded}
            done = False
            if predict and any(s != excluded for s in cnt):
                lc = last_child.get(node, "none")
                p1 = lc if lc != excluded and lc in cnt else None
                p2 = then[node].get(lc)
                if p2 in (excluded, p1):
                    p2 = None
                key = (min(sum(1 for s in cnt if s != excluded), 3), first)
                for name, p in (("p1", p1), ("p2", p2)):
                    if p is not None and not done:
                        total += guess((name,) + key, sym == p)
                        done = sym == p
                skip |= {p1, p2}
            if not done:
                ranked = sorted((s for s in cnt if s not in skip), key=lambda s: -cnt[s])
                key = (min(len(ranked), 3), first)
                if sym in ranked:
                    total += choice.code(key, ranked.index(sym) + 1)
                else:
                    total += choice.code(key, 0)
                    if sym is not STOP:
                        total += fc.code(node[-1] if node else None, sym)
            cnt[sym] += 1
            then[node][last_child.get(node, "none")] = sym
            last_child[node] = sym
            if sym is STOP:
                break
            node, depth, first, excluded = st[:depth + 1], depth + 1, False, "none"
        prev = st
    return total


def reached(stacks, kids, num):
    eligible, got, next_kid = [], {()}, {}

    def add(x):
        bisect.insort(eligible, x)

    add(num[()])
    if kids[()]:
        next_kid[()] = 0
        add(num[kids[()][0]])
    ctx, depth_ctx, leaf = Contexts(), Contexts(), [2048]
    total, prev_rank, plen = 0.0, 0, 0
    for st in stacks:
        new = st not in got
        if new:
            d = len(st)
            while st[:d] not in got:
                d -= 1
            child = st[:d + 1]
            target = num[child]
        else:
            target = num[st]
        r = bisect.bisect_left(eligible, target)
        v = zz(r - prev_rank)
        total += ctx.code(plen, v)
        plen = v.bit_length()
        if new:
            x = child
            while kids[x]:
                x = kids[x][0]
            is_leaf = x == st
            total += bit_cost(leaf[0], 0 if is_leaf else 1)
            leaf[0] = leaf[0] + ((4096 - leaf[0]) >> 5) if is_leaf else leaf[0] - (leaf[0] >> 5)
            if not is_leaf:
                total += depth_ctx.code(0, len(st) - len(child))
        for j in range(1, len(st) + 1):
            p = st[:j]
            if p in got:
                continue
            got.add(p)
            parent = st[:j - 1]
            next_kid[parent] += 1
            if next_kid[parent] < len(kids[parent]):
                add(num[kids[parent][next_kid[parent]]])
            if kids[p]:
                next_kid[p] = 0
                add(num[kids[p][0]])
        prev_rank = bisect.bisect_left(eligible, num[st])
    return total


def times(recs, stacks, num):
    ns = [round(t * 1e9) for _, t in recs]
    median = sorted(ns)[len(ns) // 2]
    v = [zz(n - median) for n in ns]
    tl = [x.bit_length() for x in v]
    d = [zz(num[stacks[i]] - (num[stacks[i - 1]] if i else 0)) for i in range(len(stacks))]
    dl = [x.bit_length() for x in d]
    pops = [len(stacks[i - 1]) - common(stacks[i], stacks[i - 1]) if i else 0 for i in range(len(stacks))]

    def run(values, key):
        ctx = Contexts()
        return sum(ctx.code(key(i), values[i]) for i in range(len(values)))

    mean_at_leaf = {}

    def leaf_mean(i):
        leaf = stacks[i][-1] if stacks[i] else None
        r = mean_at_leaf.get(leaf, -1)
        mean_at_leaf[leaf] = tl[i] if r < 0 else (r * 3 + tl[i] + 2) // 4
        return r

    out = [
        ("times, by the last length (the codec)", run(v, lambda i: tl[i - 1] if i else 0)),
        ("times, by a running mean of lengths at the leaf frame", run(v, leaf_mean)),
        ("times, by the leaf frame", run(v, lambda i: stacks[i][-1] if stacks[i] else None)),
        ("times, by the frames dropped", run(v, lambda i: min(pops[i], 16))),
        ("times, by the last length and frames dropped / 4",
         run(v, lambda i: (tl[i - 1] if i else 0, min(pops[i], 12) // 4))),
        ("times, by the last length and the sample's length / 4",
         run(v, lambda i: (tl[i - 1] if i else 0, dl[i] // 4))),
        ("samples, by the last length (the codec)", run(d, lambda i: dl[i - 1] if i else 0)),
        ("samples, by the last length and whether this time is long",
         run(d, lambda i: (dl[i - 1] if i else 0, tl[i] > 14))),
        ("samples, by the last length and this time's length / 3",
         run(d, lambda i: (dl[i - 1] if i else 0, min(tl[i], 24) // 3))),
    ]
    return out


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        ids, recs = load(path)
        stacks = [st for st, _ in recs]
        rank = frame_ranks(ids)
        kids, num, order = tree_of(stacks)
        print(f"{path}: {len(recs)} records, {len(order)} nodes, {len(ids)} frames")
        frames, nkids, samples = layout(stacks, rank, kids, num, order)
        kb = lambda bits: f"{bits / 8e3:.1f} KB"
        print(f"  layout      tree {kb(frames + nkids)} (frames {kb(frames)}, child counts {kb(nkids)}),"
              f" samples {kb(samples)}: {kb(frames + nkids + samples)}")
        print(f"  moves       {kb(moves(stacks, rank, False))} for tree and samples")
        print(f"  moves+pred  {kb(moves(stacks, rank, True))} for tree and samples")
        print(f"  reached     samples {kb(reached(stacks, kids, num))}")
        for name, bits in times(recs, stacks, num):
            print(f"  {name}: {kb(bits)}")


if __name__ == "__main__":
    main()
