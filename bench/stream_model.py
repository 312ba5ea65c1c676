#!/usr/bin/env python3
"""What other layouts and contexts of the session codec's streams would cost.

    stream_model.py SESSION.pyisession [SESSION ...]
    stream_model.py --series BASE.pyisession RUN.pyisession [RUN ...]

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
  stacks      the records' stacks one level at a time, tree and samples
              in one, with the candidates' own frames as contexts (class
              Stacks): the layout docs/codec.md's "Not done yet" proposes
  times       the times' zigzag(n - median) under several contexts
With --series, the stacks of each RUN after BASE's have gone through the
model (a later run against the base a remote holds), and on their own.
Figures and their reading: docs/benchmarks.md, the eighth and ninth
sessions. Pure Python: about 15 s for the 78 MB run.
"""
import bisect
import collections
import copy
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


def load(path, ids=None):
    with open(path) as f:
        d = json.load(f)
    ids = {} if ids is None else ids
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


class Bits(dict):
    """Binary decisions, each context one probability that counts its uses (up to 1/32)."""

    def code(self, key, b):
        c = self.get(key)
        if c is None:
            c = self[key] = [2048, 0]
        cost = bit_cost(c[0], b)
        shift = 1 + c[1]
        if c[1] < 4:
            c[1] += 1
        c[0] = c[0] + ((4096 - c[0]) >> shift) if b == 0 else c[0] - (c[0] >> shift)
        return cost


def mru(lst, x, cap):
    if x in lst:
        lst.remove(x)
    lst.insert(0, x)
    del lst[cap:]


class Stacks:
    """The records' stacks coded one level at a time, tree and samples in one.

    At each level of a record, from the root, the next frame or the record's
    end is a pick from a list of candidates: the previous record's frame at
    that level while the record still follows the previous one, then the
    frames last taken at this node (most recent first, at most NODE_MRU),
    then those last taken after this node's frame anywhere (at most
    FRAME_MRU). Each candidate is a yes/no decision whose context is the
    candidate's frame (the record's end after a frame is one symbol of its
    own), its place, and whether the node was visited before; past the
    candidates, the frame's place in its parent frame's longer list
    (to FRAME_LIST), else its dictionary rank against the one that list got
    last, as the tree codes a new frame. Kept across runs when `prime` runs
    the base's records through it first (their cost not counted).
    """

    NODE_MRU, FRAME_MRU, FRAME_LIST = 4, 16, 64

    def __init__(self, rank):
        self.rank = rank
        self.bits, self.vals = Bits(), Contexts(3)
        self.node, self.frame, self.last = {}, {}, {}
        self.prev = ()
        self.parts = collections.Counter()

    def record(self, st):
        prev, total = self.prev, 0.0
        on = True
        for i in range(len(st) + 1):
            x = st[i] if i < len(st) else None
            u = st[:i]
            pf = st[i - 1] if i else "root"
            on = on and i <= len(prev)
            cands = [prev[i] if i < len(prev) else None] if on else []
            nodes = self.node.get(u)
            for y in (nodes or ())[:self.NODE_MRU]:
                if y not in cands:
                    cands.append(y)
            nn = len(cands)
            flist = self.frame.setdefault(pf, [])
            for y in flist[:self.FRAME_MRU]:
                if y not in cands:
                    cands.append(y)
            part, c = "follow" if on else "pick", 0.0
            for j, y in enumerate(cands):
                sym = y if y is not None else ("end", pf)
                if on and j == 0:
                    key = ("follow", sym)
                else:
                    key = ("pick", min(j, 3), j < nn, nodes is not None, on, sym)
                hit = y == x
                c += self.bits.code(key, 0 if hit else 1)
                if hit:
                    break
            else:
                c += self.bits.code(("new", nodes is not None), 0 if x is None else 1)
                if x is not None:
                    part = "frame"
                    place = flist.index(x) if x in flist[:self.FRAME_LIST] else -1
                    if place >= 0:
                        c += self.vals.code("place", place - self.FRAME_MRU + 1)
                    else:
                        if flist:
                            c += self.vals.code("place", 0)
                        if pf in self.last:
                            c += self.vals.code("rank", zz(self.rank[x] - self.last[pf]))
                        else:
                            c += self.vals.code("first", self.rank[x])
                        self.last[pf] = self.rank[x]
            self.parts[part] += c
            total += c
            mru(self.node.setdefault(u, []), x, self.NODE_MRU)
            mru(flist, x, self.FRAME_LIST)
            on = on and i < len(prev) and prev[i] == x
        self.prev = st
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


def series(base_path, paths):
    """Each run's stacks after the base's, against the same run from nothing."""
    ids = {}
    runs = [[st for st, _ in load(p, ids)[1]] for p in [base_path] + paths]
    rank = frame_ranks(ids)
    base = Stacks(rank)
    bits = sum(base.record(st) for st in runs[0])
    print(f"{base_path}: stacks {bits / 8e3:.1f} KB (the base)")
    for path, stacks in zip(paths, runs[1:]):
        primed, alone = copy.deepcopy(base), Stacks(rank)
        primed.prev = ()
        after = sum(primed.record(st) for st in stacks)
        own = sum(alone.record(st) for st in stacks)
        print(f"{path}: stacks {after / 8e3:.1f} KB after the base's, {own / 8e3:.1f} KB alone")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if sys.argv[1] == "--series":
        if len(sys.argv) < 4:
            sys.exit(__doc__)
        series(sys.argv[2], sys.argv[3:])
        return
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
        st_model = Stacks(rank)
        bits = sum(st_model.record(st) for st in stacks)
        parts = ", ".join(f"{k} {kb(v)}" for k, v in sorted(st_model.parts.items()))
        print(f"  stacks      {kb(bits)} for tree and samples ({parts})")
        for name, bits in times(recs, stacks, num):
            print(f"  {name}: {kb(bits)}")


if __name__ == "__main__":
    main()
