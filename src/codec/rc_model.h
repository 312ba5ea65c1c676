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
#include <string.h>

#include "results/buf.h"
#include "results/error.h"

#define RC_PROB_BITS 12
#define RC_PROB_ONE (1u << RC_PROB_BITS)
#define RC_ADAPT 5
#define RC_TOP (1u << 24)

typedef uint16_t rc_prob;

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
 */
#define RC_TREE_CODE 0    /* 2 contexts: after a leaf or not */
#define RC_TREE_RANK 2    /* 1 */
#define RC_TREE_KIDS 3    /* 3: the frame code was 0, 1, more */
#define RC_TREE_N 6

#define RC_SAMPLES_N 65   /* the bit length of the previous record's value */

#define RC_TIMES_CODE 0   /* 4: the previous record's time code, up to 3 */
#define RC_TIMES_VALUE 4  /* 65: the bit length of the previous modelled value */
#define RC_TIMES_N 69

/* Where a model is in its stream's syntax, and what it remembers for its contexts. */
struct rc_model {
	enum rc_kind kind;
	int field;            /* the next value's field */
	uint64_t prev_code;   /* TIMES, TREE: the previous code */
	int prev_len;         /* SAMPLES, TIMES: the bit length of the previous value */
	int after_leaf;       /* TREE */
	struct rc_uint *ctx;  /* the model's contexts (RC_*_N of them) */
};

enum { F_TREE_ROOT, F_TREE_CODE, F_TREE_RANK, F_TREE_KIDS,
       F_SAMPLE, F_TIMES_CODE, F_TIMES_VALUE };

static inline int rc_bit_length(uint64_t v)
{
	return v ? 64 - __builtin_clzll(v) : 0;
}

static inline size_t rc_model_contexts(enum rc_kind kind)
{
	return kind == RC_TREE ? RC_TREE_N : kind == RC_SAMPLES ? RC_SAMPLES_N : RC_TIMES_N;
}

static inline void rc_uint_init(struct rc_uint *u)
{
	rc_prob *p = (rc_prob *)u;
	size_t i;

	for (i = 0; i < sizeof(*u) / sizeof(rc_prob); i++)
		p[i] = RC_PROB_ONE / 2;
}

/* `ctx` holds rc_model_contexts(kind) entries. */
static inline void rc_model_init(struct rc_model *m, enum rc_kind kind, struct rc_uint *ctx)
{
	size_t i;

	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->ctx = ctx;
	m->field = kind == RC_TREE ? F_TREE_ROOT : kind == RC_SAMPLES ? F_SAMPLE : F_TIMES_CODE;
	for (i = 0; i < rc_model_contexts(kind); i++)
		rc_uint_init(&ctx[i]);
}

static inline uint64_t rc_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* The context of the next value. */
static inline struct rc_uint *rc_model_context(const struct rc_model *m)
{
	switch (m->field) {
	case F_TREE_ROOT:
		return &m->ctx[RC_TREE_KIDS];
	case F_TREE_CODE:
		return &m->ctx[RC_TREE_CODE + m->after_leaf];
	case F_TREE_RANK:
		return &m->ctx[RC_TREE_RANK];
	case F_TREE_KIDS:
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
		m->field = F_TREE_CODE;
		break;
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
 * `kind`) into `out` (cleared first). Returns 0, 1 when `raw` is not a
 * sequence of varints (nothing is wrong: store it another way), or an
 * rs_buf error.
 */
RS_MUST_CHECK
int rs_rc_pack(struct rs_buf *out, enum rc_kind kind, const unsigned char *raw, size_t len);

/*
 * Decode `n` range-coded bytes at `p` into exactly `raw_len` bytes of raw
 * stream at `raw` (the caller's, allocated for that length). Untrusted
 * input: returns 0, RS_ECORRUPT when the bytes do not code exactly that
 * much, or RS_EGENERIC when memory runs out.
 */
RS_MUST_CHECK
int rs_rc_unpack(unsigned char *raw, size_t raw_len, enum rc_kind kind, const unsigned char *p, size_t n);

#endif
