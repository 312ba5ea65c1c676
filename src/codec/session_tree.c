/*
 * The call tree's reader (docs/codec.md, "The streams of versions 2 to 4"
 * and "The base tree (version 5)"), shared by the decoder (a container's
 * trees) and the encoder (the base tree the cache hands it back). Its
 * bytes come from a remote or a cache file: every value is checked before
 * it is used, and every count before anything is allocated for it.
 */
#include "codec/codec_internal.h"
#include "results/error.h"
#include "util/array.h"

#include <stdlib.h>
#include <string.h>

static int corrupt(const char *why)
{
	return rs_error_set(RS_ECORRUPT, "the session container is damaged: %s", why);
}

/*
 * Successor lists: per frame, the frames met as children of nodes of that
 * frame so far, in the order first met (the last list is the root's). A
 * child's frame is coded as its place in its parent frame's list, from
 * 1, or as 0 and its dictionary rank when it is new there: a frame calls
 * few others, so most children cost a small number. A node that matches
 * a base node (version 5) names its frame through the base tree, and the
 * frame joins its parent frame's list if it is not in it yet (a set of
 * the (parent frame, frame) pairs the lists hold tells).
 */
struct succ {
	uint32_t *v;
	uint32_t n;
	size_t cap;               /* rs_array_grow's */
};

struct succ_set {
	uint64_t *key;            /* (parent frame << 32 | frame) + 1; 0: empty */
	size_t mask;
};

/* Whether the pair is in the set; it is after this (the set has room for every node's pair). */
static int succ_set_add(struct succ_set *t, uint32_t pf, uint32_t f)
{
	uint64_t key = ((uint64_t)pf << 32 | f) + 1;
	size_t at = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & t->mask;

	while (t->key[at] && t->key[at] != key)
		at = (at + 1) & t->mask;
	if (t->key[at])
		return 1;
	t->key[at] = key;
	return 0;
}

static int succ_append(struct succ *l, uint32_t f)
{
	int err = rs_array_grow(&l->v, &l->cap, (size_t)l->n + 1, sizeof(*l->v), 4);

	if (err)
		return err;
	l->v[l->n++] = f;
	return 0;
}

/*
 * A child's frame after its code *frame (read by the caller): its place
 * in its parent frame's successor list l, or, for 0, its dictionary rank,
 * which joins the list.
 */
static inline int read_child_frame(struct cursor *c, struct succ *l, uint64_t nframes, int version,
				   uint64_t *frame)
{
	uint64_t v;

	if (*frame != 0) {
		if (*frame - 1 >= l->n)
			return corrupt("the call tree names a frame it does not have");
		*frame = l->v[*frame - 1];
		return 0;
	}
	/*
	 * New under this parent frame: its rank follows. Version 2 codes it as
	 * the difference from the rank the list got last, when it has one: a
	 * new child is mostly another line of a function already called there,
	 * a neighbour in the sorted dictionary.
	 */
	if (get_varint(c, &v))
		return corrupt("the call tree names a frame it does not have");
	*frame = version >= 2 && l->n ? l->v[l->n - 1] + (uint64_t)unzigzag(v) : v;
	if (*frame >= nframes)
		return corrupt("the call tree names a frame it does not have");
	return succ_append(l, (uint32_t)*frame);
}

/* The walk's stack: per open node its number, the children it has left, its base node and next expected place. */
struct walk_stack {
	uint32_t *node, *left, *base, *next;
};

/*
 * Version 5: a node under a parent that matches base node `pb` starts
 * with its match value; a match names the base child at place
 * next + unzigzag(m - 1) (*next moves past it), whose frame the node takes
 * (a base thread slot t is frame thread_at + t) and whose child count its
 * own is coded against. *matched is RC_NO_BASE when m is 0.
 */
static int read_match(const struct tree_walk *w, uint32_t pb, uint32_t *next, uint32_t *matched,
		      uint64_t *frame, uint64_t *kids)
{
	const struct codec_base_tree *bt = w->base;
	uint64_t m, dk;
	__int128 j, k;
	uint32_t bf;

	*matched = RC_NO_BASE;
	if (get_varint(w->c, &m))
		return corrupt("the call tree is inconsistent");
	if (!m)
		return 0;
	j = (__int128)*next + unzigzag(m - 1);
	if (j < 0 || j >= bt->rc.kids[pb])
		return corrupt("the call tree names a base node it does not have");
	*matched = bt->child[bt->first[pb] + (uint32_t)j];
	*next = (uint32_t)j + 1;
	bf = bt->frame[*matched];
	if (bf >= bt->nbase && bf - bt->nbase >= w->nthreads)
		return corrupt("the call tree names a thread it does not have");
	*frame = bf < bt->nbase ? bf : w->thread_at + (bf - bt->nbase);
	if (get_varint(w->c, &dk))
		return corrupt("the call tree is inconsistent");
	k = (__int128)bt->rc.kids[*matched] + unzigzag(dk);
	if (k < 0 || k >= w->nnodes)
		return corrupt("the call tree is inconsistent");
	*kids = (uint64_t)k;
	return 0;
}

static int walk(const struct tree_walk *w, struct walk_stack *s, struct succ *succ, struct succ_set *set)
{
	struct cursor *c = w->c;
	uint64_t k = 1, v;
	size_t top = 0;
	uint32_t pf;
	int err;

	w->parent[0] = UINT32_MAX;
	w->node_frame[0] = UINT32_MAX;
	if (get_varint(c, &v) || v >= w->nnodes)
		return corrupt("the call tree's root is wrong");
	if (w->kids)
		w->kids[0] = (uint32_t)v;
	if (v) {
		s->node[0] = 0;
		s->left[0] = (uint32_t)v;
		s->base[0] = w->base ? 0 : RC_NO_BASE;
		s->next[0] = 0;
		top = 1;
	}
	while (top) {
		uint64_t frame = 0, kids = 0;
		uint32_t matched = RC_NO_BASE;

		if (!s->left[top - 1]) {
			top--;
			continue;
		}
		s->left[top - 1]--;
		pf = s->node[top - 1] ? w->node_frame[s->node[top - 1]] : (uint32_t)w->nframes;
		if (k >= w->nnodes)
			return corrupt("the call tree is inconsistent");
		if (s->base[top - 1] != RC_NO_BASE) {
			err = read_match(w, s->base[top - 1], &s->next[top - 1], &matched, &frame, &kids);
			if (err)
				return err;
		}
		if (matched == RC_NO_BASE) {
			if (get_varint(c, &frame))
				return corrupt("the call tree is inconsistent");
			err = read_child_frame(c, &succ[pf], w->nframes, w->version, &frame);
			if (err)
				return err;
			if (set)
				succ_set_add(set, pf, (uint32_t)frame); /* a frame named again as new joins again, as before */
			if (get_varint(c, &kids) || kids >= w->nnodes)
				return corrupt("the call tree is inconsistent");
		} else if (!succ_set_add(set, pf, (uint32_t)frame)) {
			err = succ_append(&succ[pf], (uint32_t)frame);
			if (err)
				return err;
		}
		w->parent[k] = s->node[top - 1];
		w->node_frame[k] = (uint32_t)frame;
		if (w->kids)
			w->kids[k] = (uint32_t)kids;
		if (kids) {
			if (top >= MAX_DEPTH)
				return corrupt("the call tree is too deep");
			s->node[top] = (uint32_t)k;
			s->left[top] = (uint32_t)kids;
			s->base[top] = matched;
			s->next[top] = 0;
			top++;
		}
		k++;
	}
	if (k != w->nnodes || c->pos != c->len)
		return corrupt("the call tree does not have the nodes it says");
	return 0;
}

int codec_walk_tree(const struct tree_walk *w)
{
	struct walk_stack s = { NULL, NULL, NULL, NULL };
	struct succ_set set = { NULL, 0 };
	struct succ *succ = NULL;
	uint64_t i;
	size_t size = 1;
	int err = 0;

	/*
	 * against a base: a set with room for every node's pair (nnodes is
	 * capped: MAX_NODES). calloc, not codec_zalloc: the counts come from
	 * the container, and a hostile one refused part way leaves most of
	 * the set untouched, so never resident (test_session_codec_hostile).
	 */
	while (w->base && size < w->nnodes * 2)
		size <<= 1;
	set.mask = size - 1;
	set.key = w->base ? calloc(size, sizeof(*set.key)) : NULL;
	s.node = malloc(MAX_DEPTH * sizeof(*s.node));
	s.left = malloc(MAX_DEPTH * sizeof(*s.left));
	s.base = malloc(MAX_DEPTH * sizeof(*s.base));
	s.next = malloc(MAX_DEPTH * sizeof(*s.next));
	succ = calloc((size_t)w->nframes + 1, sizeof(*succ));
	if (!s.node || !s.left || !s.base || !s.next || !succ || (w->base && !set.key)) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	err = walk(w, &s, succ, w->base ? &set : NULL);
out:
	free(set.key);
	for (i = 0; succ && i <= w->nframes; i++)
		free(succ[i].v);
	free(succ);
	free(s.node);
	free(s.left);
	free(s.base);
	free(s.next);
	return err;
}

void codec_base_tree_release(struct codec_base_tree *bt)
{
	free(bt->frame);
	free(bt->parent);
	free(bt->kids);
	free(bt->first);
	free(bt->child);
	memset(bt, 0, sizeof(*bt));
}

/* Each node's children, child[first[n] .. first[n] + kids[n]), in the tree's order. */
static int base_children(struct codec_base_tree *bt)
{
	uint32_t *fill = calloc(bt->rc.n, sizeof(*fill)), i, at = 0;

	bt->first = malloc((size_t)bt->rc.n * sizeof(*bt->first));
	bt->child = malloc((size_t)bt->rc.n * sizeof(*bt->child));
	if (!fill || !bt->first || !bt->child) {
		free(fill);
		return rs_error_set(RS_EGENERIC, "out of memory");
	}
	for (i = 0; i < bt->rc.n; i++) {
		bt->first[i] = at;
		at += bt->kids[i]; /* the walk used every node once: the counts add up to n - 1 */
	}
	for (i = 1; i < bt->rc.n; i++) {
		uint32_t p = bt->parent[i];

		bt->child[bt->first[p] + fill[p]++] = i;
	}
	free(fill);
	bt->rc.kids = bt->kids;
	bt->rc.first = bt->first;
	bt->rc.child = bt->child;
	return 0;
}

int codec_base_tree_read(struct codec_base_tree *bt, const unsigned char *p, size_t len, uint64_t nbase)
{
	struct cursor c = { p, len, 0 };
	struct tree_walk w;
	uint64_t nthreads, nnodes;
	int err;

	memset(bt, 0, sizeof(*bt));
	if (!len)
		return 0;
	if (get_varint(&c, &nthreads) || get_varint(&c, &nnodes))
		return corrupt("its base tree's counts are unreadable");
	/* each node is at least two bytes of the stream; the caps bound what is allocated */
	if (nbase > MAX_FRAMES || nthreads > MAX_FRAMES - nbase || nnodes < 1 || nnodes > MAX_NODES ||
	    nnodes - 1 > (c.len - c.pos) / 2)
		return corrupt("its base tree's counts do not fit its stream");
	bt->nbase = (uint32_t)nbase;
	bt->nthreads = (uint32_t)nthreads;
	bt->rc.n = (uint32_t)nnodes;
	bt->frame = malloc((size_t)nnodes * sizeof(*bt->frame));
	bt->parent = malloc((size_t)nnodes * sizeof(*bt->parent));
	bt->kids = malloc((size_t)nnodes * sizeof(*bt->kids));
	if (!bt->frame || !bt->parent || !bt->kids) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	memset(&w, 0, sizeof(w));
	w.c = &c;
	w.version = 5;
	w.nnodes = nnodes;
	w.nframes = nbase + nthreads;
	w.parent = bt->parent;
	w.node_frame = bt->frame;
	w.kids = bt->kids;
	err = codec_walk_tree(&w);
	if (err)
		goto out;
	err = base_children(bt);
out:
	if (err)
		codec_base_tree_release(bt);
	return err;
}
