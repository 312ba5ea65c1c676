/*
 * The range coder of container version 2 and the models of its three
 * range-coded streams (docs/codec.md, "Range-coded streams").
 *
 * Internal to src/codec/: rc_pack.c (the encoder's side) and rc_unpack.c
 * (the decoder's, which reads untrusted bytes) both include it, so that
 * the one thing they must agree on, which probability codes which value,
 * is written once.
 *
 * The coder is the binary adaptive kind LZMA uses: 32-bit range, 12-bit
 * probabilities that move 1/32 of the way toward each bit seen, carries
 * propagated through a cached byte. A stream is a sequence of unsigned
 * integers (the varints of the raw stream); each is coded as its length
 * in bits (a 7-level bit tree: 0-64), then the bits below its top one:
 * the two highest through a small tree per length, the rest each with a
 * probability of its own per (length, place). Which set of those
 * probabilities codes a value (its context) is the model's choice below.
 */
#ifndef RS_CODEC_RC_MODEL_H
#define RS_CODEC_RC_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "results/buf.h"
#include "results/error.h"

#define RC_PROB_BITS 12
#define RC_PROB_ONE (1u << RC_PROB_BITS)
#define RC_ADAPT 5
#define RC_TOP (1u << 24)

typedef uint16_t rc_prob;

/*
 * A probability's 12 bits, and the update after `bit`. From version 4 the
 * probabilities of a value's length (len[] below, in every model) count
 * (in the bits above the 12) how often they were used, and move 1/2,
 * 1/4, 1/8 ... of the way toward each bit, up to `counted` halvings
 * more, then stay there: a context met a few times learns from them at
 * once. The tree's lengths end at 1/16 (its 42 contexts are sparse and
 * drift), the samples' and times' at 1/32, where they always were. The
 * bits below a length, and every probability of versions 2 and 3, move
 * 1/32 of the way always (RC_ADAPT, counted 0) and never set those bits.
 * On the real runs in tests/data that takes 1.6% off the tree, 0.3% off
 * the 78 MB run's samples and times and 3-4% off the 4 MB run's;
 * counting the bits below as well did worse, and so did the tree's
 * lengths ending at 1/32, or the others' at 1/16 (which made the
 * generated 224 MB session's samples 0.2% larger than in version 3).
 */
#define RC_PROB_MASK (RC_PROB_ONE - 1)
#define RC_COUNTED_TREE 3    /* 1/2 ... 1/16 */
#define RC_COUNTED_OTHERS 4  /* 1/2 ... 1/32 */

static inline uint32_t rc_p(rc_prob p)
{
	return p & RC_PROB_MASK;
}

static inline void rc_update(rc_prob *p, unsigned bit, unsigned counted)
{
	unsigned q = *p & RC_PROB_MASK, c = (unsigned)*p >> RC_PROB_BITS;
	unsigned r = counted ? 1 + c : RC_ADAPT;

	if (!bit)
		q += (RC_PROB_ONE - q) >> r;
	else
		q -= q >> r;
	if (c < counted)
		c++;
	*p = (rc_prob)(q | c << RC_PROB_BITS);
}

/* The probabilities that code one context's integers. */
struct rc_uint {
	rc_prob len[128];      /* bit tree over the length, 0..64 */
	rc_prob high[65][4];   /* per length, the two bits below the top one (a 3-node tree) */
	rc_prob low[65][64];   /* per length, each lower bit by its place */
};

/* Which stream a model codes. */
enum rc_kind { RC_TREE, RC_SAMPLES, RC_TIMES, RC_KINDS };

/*
 * The contexts. TREE: its fields are the root's child count, then per
 * node a frame code (0: new under its parent frame, a dictionary rank
 * follows; else a place + 1) and a child count. SAMPLES: per record
 * zigzag(its end node - the previous record's), in depth-first numbers.
 * TIMES: per record a time code (0: text; else 1 + zigzag of the
 * residual), and for a modelled time zigzag(n - ref).
 *
 * Version 4's tree model also follows the tree's shape (a stack of the
 * children each open node has left): a node's frame code and rank are
 * coded under its parent's frame code and child count as well, and its
 * child count under whether it is its parent's last child. A node whose
 * parent is new under its own parent (code 0) is mostly new too, and a
 * parent with one child has it at place 1 (the real 78 MB run's tree:
 * 33.0 KB instead of 35.0).
 */
#define RC_TREE_CODE 0    /* 2 contexts: after a leaf or not */
#define RC_TREE_RANK 2    /* 1 */
#define RC_TREE_KIDS 3    /* 3: the frame code was 0, 1, more */
#define RC_TREE_N 6

/* version 4: the code by (after a leaf, parent's code 0/1/more, parent's children 0-4), 30 contexts */
#define RC_TREE4_CODE 0
#define RC_TREE4_RANK 30  /* 6: (parent's code 0/1/more, after a leaf) */
#define RC_TREE4_KIDS 36  /* 6: (the code 0/1/more, the parent's last child or not) */
#define RC_TREE4_N 42
#define RC_TREE4_DEPTH (64u * 1024 + 2) /* open nodes the model follows; deeper ones are coded as if leaves' children */

/*
 * Version 5's tree coded against the base tree (the tree the base block
 * holds: struct rc_base): a node whose parent matches a base node starts
 * with a match value (0: none of that base node's children; else 1 +
 * zigzag(its place there - the place after the previous match's)), and a
 * matched node's child count is zigzag(count - its base node's count).
 * The contexts of version 4 stay, and 30 more (docs/codec.md, "The tree
 * in version 5"): measured on the real reruns in tests/data, the match
 * under (after a leaf, the base children left after the expected one)
 * took 2.6 KB of a 16 MB run's tree where one context took 3.2.
 */
#define RC_TREE5_MATCH 42 /* 8: after a leaf, min(base children from the expected place on, 3) */
#define RC_TREE5_MKIDS 50 /* 10: min(the base node's child count, 4), the parent's last child or not */
#define RC_TREE5_CODE 60  /* 10: a frame code under a matched parent: after a leaf, parent's children 0-4 */
#define RC_TREE5_RANK 70  /* 2: the varint after code 0 under a matched parent: after a leaf */
#define RC_TREE5_N 72
#define RC_NO_BASE UINT32_MAX

/*
 * The base tree as the model sees it: per base node (0 the root) its
 * child count and its children, child[first[n] .. first[n] + kids[n]), in
 * the base tree's order. Borrowed: the caller keeps it while the model runs.
 */
struct rc_base {
	uint32_t n;
	const uint32_t *kids, *first, *child;
};

#define RC_SAMPLES_N 65   /* the bit length of the previous record's value */

#define RC_TIMES_CODE 0   /* 4: the previous record's time code, up to 3 */
#define RC_TIMES_VALUE 4  /* 65: the bit length of the previous modelled value */
#define RC_TIMES_N 69

/* An open node of version 4's tree model: the children it has left, its code and child count (bucketed). */
struct rc_open {
	uint64_t left;
	unsigned char code, kids;
	uint32_t base;        /* version 5: the base node it matches, or RC_NO_BASE */
	uint32_t next;        /* version 5: the place among the base node's children a match is expected at */
};

/* Where a model is in its stream's syntax, and what it remembers for its contexts. */
struct rc_model {
	enum rc_kind kind;
	int version;          /* the container's: 4 follows the tree's shape */
	int field;            /* the next value's field */
	uint64_t prev_code;   /* TIMES, TREE: the previous code */
	int prev_len;         /* SAMPLES, TIMES: the bit length of the previous value */
	int after_leaf;       /* TREE */
	/* TREE, version 4: the open nodes, and this node's place under its parent */
	struct rc_open *open;
	size_t nopen;
	unsigned parent_code, parent_kids, last;
	/* TREE, version 5 with a base tree: the parent's base node and the node's own */
	const struct rc_base *base;
	uint32_t parent_base, node_base;
	struct rc_uint *ctx;  /* the model's contexts (rc_model_contexts of them) */
};

enum { F_TREE_ROOT, F_TREE_CODE, F_TREE_RANK, F_TREE_KIDS, F_TREE_MATCH, F_TREE_MKIDS,
       F_SAMPLE, F_TIMES_CODE, F_TIMES_VALUE };

static inline int rc_bit_length(uint64_t v)
{
	return v ? 64 - __builtin_clzll(v) : 0;
}

static inline int rc_tree_shaped(enum rc_kind kind, int version)
{
	return kind == RC_TREE && version >= 4;
}

/* How far the lengths' probabilities count their uses (rc_update): 0, not at all. */
static inline unsigned rc_lengths_counted(enum rc_kind kind, int version)
{
	if (version < 4)
		return 0;
	return kind == RC_TREE ? RC_COUNTED_TREE : RC_COUNTED_OTHERS;
}

static inline size_t rc_model_contexts(enum rc_kind kind, int version)
{
	if (kind == RC_TREE)
		return version >= 5 ? RC_TREE5_N : rc_tree_shaped(kind, version) ? RC_TREE4_N : RC_TREE_N;
	return kind == RC_SAMPLES ? RC_SAMPLES_N : RC_TIMES_N;
}

static inline void rc_uint_init(struct rc_uint *u)
{
	rc_prob *p = (rc_prob *)u;
	size_t i;

	for (i = 0; i < sizeof(*u) / sizeof(rc_prob); i++)
		p[i] = RC_PROB_ONE / 2;
}

static inline uint64_t rc_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * A model of `kind` for a container of `version`: its contexts (and, for
 * version 4's tree, its stack of open nodes, 1.5 MB) in one allocation,
 * freed by rc_model_release. `base`: version 5's tree codes against it
 * (NULL: none, as version 4). Returns 0 or RS_EGENERIC (out of memory).
 */
RS_MUST_CHECK
static inline int rc_model_init(struct rc_model *m, enum rc_kind kind, int version, const struct rc_base *base)
{
	size_t i, nctx = rc_model_contexts(kind, version);
	size_t nopen = rc_tree_shaped(kind, version) ? RC_TREE4_DEPTH : 0;
	unsigned char *mem = malloc(nctx * sizeof(struct rc_uint) + nopen * sizeof(struct rc_open));

	memset(m, 0, sizeof(*m));
	if (!mem)
		return rs_error_set(RS_EGENERIC, "out of memory");
	m->kind = kind;
	m->version = version;
	m->ctx = (struct rc_uint *)mem;
	m->open = nopen ? (struct rc_open *)(mem + nctx * sizeof(struct rc_uint)) : NULL;
	m->field = kind == RC_TREE ? F_TREE_ROOT : kind == RC_SAMPLES ? F_SAMPLE : F_TIMES_CODE;
	m->base = kind == RC_TREE && version >= 5 && base && base->n ? base : NULL;
	m->parent_base = m->node_base = RC_NO_BASE;
	for (i = 0; i < nctx; i++)
		rc_uint_init(&m->ctx[i]);
	return 0;
}

static inline void rc_model_release(struct rc_model *m)
{
	free(m->ctx);
	m->ctx = NULL;
	m->open = NULL;
}

/*
 * Version 4's tree: a node with `kids` children (coded `code`; version 5:
 * matching base node `base`) opens, if the stack has room.
 */
static inline void rc_tree_open(struct rc_model *m, uint64_t kids, uint64_t code, uint32_t base)
{
	if (!kids || m->nopen == RC_TREE4_DEPTH)
		return;
	m->open[m->nopen].left = kids;
	m->open[m->nopen].code = (unsigned char)rc_min(code, 2);
	m->open[m->nopen].kids = (unsigned char)rc_min(kids, 4);
	m->open[m->nopen].base = base;
	m->open[m->nopen].next = 0;
	m->nopen++;
}

/* Version 4's tree: the next node's parent (the innermost open node with children left) takes it. */
static inline void rc_tree_next_node(struct rc_model *m)
{
	while (m->nopen && !m->open[m->nopen - 1].left)
		m->nopen--;
	if (!m->nopen) {
		/* no node is open: the stream has values past its tree, which its reader refuses */
		m->parent_code = 0;
		m->parent_kids = 0;
		m->last = 0;
		m->parent_base = RC_NO_BASE;
		return;
	}
	m->open[m->nopen - 1].left--;
	m->parent_code = m->open[m->nopen - 1].code;
	m->parent_kids = m->open[m->nopen - 1].kids;
	m->last = !m->open[m->nopen - 1].left;
	m->parent_base = m->open[m->nopen - 1].base;
}

/* The field a node starts with: a match under a matched parent (version 5), else its frame code. */
static inline int rc_tree_first_field(const struct rc_model *m)
{
	return m->parent_base != RC_NO_BASE ? F_TREE_MATCH : F_TREE_CODE;
}

/* Version 5: the base children of the parent from the place a match is expected at on (0 when none). */
static inline uint64_t rc_tree_base_left(const struct rc_model *m)
{
	uint32_t p = m->parent_base, next = m->nopen ? m->open[m->nopen - 1].next : 0;

	return p != RC_NO_BASE && m->base->kids[p] > next ? m->base->kids[p] - next : 0;
}

/*
 * Version 5: match value `v` (not 0) names the parent's base child at
 * place next + unzigzag(v - 1); the node matches it, or, out of range
 * (a damaged stream, which its reader refuses), nothing.
 */
static inline void rc_tree_matched(struct rc_model *m, uint64_t v)
{
	struct rc_open *o = &m->open[m->nopen - 1];
	uint32_t p = m->parent_base;
	__int128 j = (__int128)o->next + (__int128)((int64_t)((v - 1) >> 1) ^ -(int64_t)((v - 1) & 1));

	m->node_base = RC_NO_BASE;
	if (j < 0 || j >= m->base->kids[p])
		return;
	m->node_base = m->base->child[m->base->first[p] + (uint64_t)j];
	o->next = (uint32_t)j + 1;
}

/* The context of the next value. */
static inline struct rc_uint *rc_model_context(const struct rc_model *m)
{
	int shaped = m->version >= 4;

	switch (m->field) {
	case F_TREE_ROOT:
		return &m->ctx[shaped ? RC_TREE4_KIDS : RC_TREE_KIDS];
	case F_TREE_CODE:
		if (m->parent_base != RC_NO_BASE)
			return &m->ctx[RC_TREE5_CODE + m->after_leaf * 5 + m->parent_kids];
		if (shaped)
			return &m->ctx[RC_TREE4_CODE + m->after_leaf * 15 + m->parent_code * 5 + m->parent_kids];
		return &m->ctx[RC_TREE_CODE + m->after_leaf];
	case F_TREE_RANK:
		if (m->parent_base != RC_NO_BASE)
			return &m->ctx[RC_TREE5_RANK + m->after_leaf];
		if (shaped)
			return &m->ctx[RC_TREE4_RANK + m->parent_code * 2 + m->after_leaf];
		return &m->ctx[RC_TREE_RANK];
	case F_TREE_MATCH:
		return &m->ctx[RC_TREE5_MATCH + m->after_leaf * 4 + rc_min(rc_tree_base_left(m), 3)];
	case F_TREE_MKIDS:
		return &m->ctx[RC_TREE5_MKIDS +
			       rc_min(m->node_base != RC_NO_BASE ? m->base->kids[m->node_base] : 0, 4) * 2 + m->last];
	case F_TREE_KIDS:
		if (shaped)
			return &m->ctx[RC_TREE4_KIDS + rc_min(m->prev_code, 2) * 2 + m->last];
		return &m->ctx[RC_TREE_KIDS + rc_min(m->prev_code, 2)];
	case F_SAMPLE:
		return &m->ctx[m->prev_len];
	case F_TIMES_CODE:
		return &m->ctx[RC_TIMES_CODE + rc_min(m->prev_code, 3)];
	default:
		return &m->ctx[RC_TIMES_VALUE + m->prev_len];
	}
}

/* The value `v` was coded: the next field. */
static inline void rc_model_saw(struct rc_model *m, uint64_t v)
{
	switch (m->field) {
	case F_TREE_ROOT:
		if (m->open) {
			rc_tree_open(m, v, 0, m->base ? 0 : RC_NO_BASE);
			rc_tree_next_node(m);
		}
		m->field = rc_tree_first_field(m);
		break;
	case F_TREE_MATCH:
		if (!v) {
			m->field = F_TREE_CODE;
			break;
		}
		rc_tree_matched(m, v);
		m->prev_code = 1;
		m->field = F_TREE_MKIDS;
		break;
	case F_TREE_MKIDS: {
		__int128 kids = (__int128)(m->node_base != RC_NO_BASE ? m->base->kids[m->node_base] : 0) +
				(__int128)((int64_t)(v >> 1) ^ -(int64_t)(v & 1));

		/* a count below 0 or past 2^32 is damage, which the stream's reader refuses: no node opens */
		if (kids < 0 || kids > UINT32_MAX)
			kids = 0;
		m->after_leaf = kids == 0;
		rc_tree_open(m, (uint64_t)kids, 1, m->node_base);
		rc_tree_next_node(m);
		m->field = rc_tree_first_field(m);
		break;
	}
	case F_TREE_CODE:
		m->prev_code = v;
		m->field = v ? F_TREE_KIDS : F_TREE_RANK;
		break;
	case F_TREE_RANK:
		m->field = F_TREE_KIDS;
		break;
	case F_TREE_KIDS:
		m->after_leaf = v == 0;
		m->field = F_TREE_CODE;
		if (m->open) {
			rc_tree_open(m, v, m->prev_code, RC_NO_BASE);
			rc_tree_next_node(m);
			m->field = rc_tree_first_field(m);
		}
		break;
	case F_SAMPLE:
		m->prev_len = rc_bit_length(v);
		break;
	case F_TIMES_CODE:
		m->prev_code = v;
		if (v)
			m->field = F_TIMES_VALUE;
		break;
	default:
		m->prev_len = rc_bit_length(v);
		m->field = F_TIMES_CODE;
		break;
	}
}

/*
 * Range-code the raw stream `raw`/`len` (varints in the syntax of
 * `kind`, modelled as container `version` does) into `out` (cleared first). Returns 0, 1 when `raw` is not a
 * sequence of varints (nothing is wrong: store it another way), or an
 * rs_buf error.
 */
RS_MUST_CHECK
int rs_rc_pack(struct rs_buf *out, enum rc_kind kind, int version, const unsigned char *raw, size_t len);
/* rs_rc_pack of a version-5 tree coded against `base` (NULL: none). */
RS_MUST_CHECK
int rs_rc_pack_base(struct rs_buf *out, enum rc_kind kind, int version, const struct rc_base *base,
		    const unsigned char *raw, size_t len);

/*
 * Decode `n` range-coded bytes at `p` (modelled as container `version`
 * does) into exactly `raw_len` bytes of raw stream at `raw` (the caller's, allocated for that length). Untrusted
 * input: returns 0, RS_ECORRUPT when the bytes do not code exactly that
 * much, or RS_EGENERIC when memory runs out.
 */
RS_MUST_CHECK
int rs_rc_unpack(unsigned char *raw, size_t raw_len, enum rc_kind kind, int version, const unsigned char *p, size_t n);
/* rs_rc_unpack of a version-5 tree coded against `base` (NULL: none). */
RS_MUST_CHECK
int rs_rc_unpack_base(unsigned char *raw, size_t raw_len, enum rc_kind kind, int version, const struct rc_base *base,
		      const unsigned char *p, size_t n);

#endif
