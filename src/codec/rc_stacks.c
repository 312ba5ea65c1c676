/*
 * The stacks model (rc_stacks.h): one function codes, decodes or replays
 * a record, so that the three cannot disagree on what a decision's
 * context is. At each level of a record, from the root, the next frame
 * or the record's end is picked from candidates: the previous record's
 * frame at that level while the record still follows the previous one,
 * the frames last taken at this node (NODE_MRU), then those last taken
 * after this node's frame anywhere (FRAME_MRU of its list). Each
 * candidate is a yes/no decision whose context is the candidate's own
 * frame (the end after a frame a symbol of its own), its place and
 * whether the node was seen; past them, the frame's place further down
 * its parent frame's list (to FRAME_LIST), else its rank against the one
 * that list got last (as the tree codes a new frame).
 *
 * Bounded whatever a stream claims: the decisions' probabilities live in
 * a table of fixed size (contexts hashed into it, collisions alike on
 * both sides), nodes at most STACKS_MAX_NODES, a level tries at most 21
 * candidates, a record at most MAX_DEPTH frames.
 */
#include "codec/rc_stacks.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec_internal.h"
#include "codec/rc_coder.h"
#include "codec/varint.h"

#define NODE_MRU 4
#define FRAME_MRU 16
#define FRAME_LIST 64
#define MAX_CANDS (1 + NODE_MRU + FRAME_MRU)
#define CTX_BITS 20
#define EMPTY UINT32_MAX
#define DAMAGED 2 /* record(): what was decoded cannot be */

enum { MODE_REPLAY, MODE_ENC, MODE_DEC };
enum { V_HEADER, V_PLACE, V_RANK, V_FIRST, V_COUNT };

/*
 * A parent frame's list: NULL (empty), or a block of its count and room
 * (count | room << 16), the rank it got last (+ 1, 0 none: its `last`)
 * and the symbols, the most recent first. 8 bytes a frame when empty,
 * and a first block of 24 bytes, malloc's smallest chunk: a stream may
 * name 2^18 frames, each the parent of one child (the lists were 12 MB
 * of a hostile decode's peak at 48 bytes a block).
 */
#define FL_HDR 0
#define FL_LAST 1
#define FL_SYM 2
#define FL_FIRST 4 /* the first block's room */
static inline uint32_t fl_n(const uint32_t *l)
{
	return l ? l[FL_HDR] & 0xffff : 0;
}

/*
 * A slot of the node table: (parent << 20 | frame) << 20 | node + 1, 0
 * empty (nodes below STACKS_MAX_NODES < 2^19, frames below 2^20: read_header and
 * ids() keep them there), so that a look-up reads 8 bytes.
 */
typedef uint64_t stk_slot;
#define SLOT_NODE_BITS 20
#define SLOT_NODE_MASK ((1ull << SLOT_NODE_BITS) - 1)

/*
 * A node's last NODE_MRU frames taken (EMPTY past them), and the node
 * the first KID_NODES lead to (EMPTY: the end, or not known yet): 24
 * bytes a node, where a node for each would cost 32 (the node table
 * finds the others).
 */
#define KID_NODES 2
struct stk_kids {
	uint32_t f[NODE_MRU];
	uint32_t n[KID_NODES];
};

struct stk {
	int mode;
	struct rc_enc *e;
	struct rc_dec *d;
	uint32_t nsym;             /* frame ids are below it */
	uint32_t names;            /* the frames the coded stream may name: its A + T */
	uint32_t root, end;        /* nsym, nsym + 1 */
	struct stk_kids *kids;
	size_t nnodes;
	stk_slot *htab;            /* (parent, frame) -> node */
	size_t hmask;
	uint32_t **fl;             /* per parent frame, the root's last: its list */
	rc_prob *ctx;
	rc_prob ends[2];           /* the end, past the candidates: at a node not seen, seen */
	rc_prob *follow;           /* per candidate symbol (cand_sym): the first decision of a level that follows */
	struct rc_uint val[V_COUNT];
	uint32_t *prevf, *prevn, *curf, *curn;
	size_t plen;
	uint32_t *seen, stamp;     /* a level's candidates: seen[y] == stamp (ids below nsym + 2) */
	uint64_t levels, max_levels; /* walked so far, and the most allowed */
};

static inline unsigned decide(struct stk *m, rc_prob *p, unsigned bit, unsigned counted)
{
	switch (m->mode) {
	case MODE_ENC:
		rc_bit(m->e, p, bit, counted);
		return bit;
	case MODE_DEC:
		return rc_get_bit(m->d, p, counted);
	default:
		rc_update(p, bit, counted);
		return bit;
	}
}

/* A value as rc_put_uint codes it (lengths counted to 1/16); decoding, *bad set for a length above 64. */
static uint64_t value(struct stk *m, struct rc_uint *u, uint64_t v, int *bad)
{
	int len = m->mode == MODE_DEC ? 0 : rc_bit_length(v), i, node = 1;
	uint64_t out = 1;

	for (i = 6; i >= 0; i--)
		node = node << 1 | (int)decide(m, &u->len[node], (unsigned)(len >> i) & 1, RC_COUNTED_TREE);
	len = node - 128;
	if (len > 64) {
		*bad = 1;
		return 0;
	}
	if (len < 2)
		return (uint64_t)len;
	node = 1;
	for (i = len - 2; i >= 0 && i >= len - 3; i--) {
		unsigned b = decide(m, &u->high[len][node], (unsigned)(v >> i) & 1, 0);

		node = node << 1 | (int)b;
		out = out << 1 | b;
	}
	for (i = len - 4; i >= 0; i--)
		out = out << 1 | decide(m, &u->low[len][i], (unsigned)(v >> i) & 1, 0);
	return out;
}

static inline size_t ctx_slot(uint64_t key)
{
	return (size_t)(codec_mix64(key) >> (64 - CTX_BITS));
}

static inline size_t node_slot(const struct stk *m, uint64_t key)
{
	return (size_t)codec_mix64(key) & m->hmask;
}

/* A candidate's own symbol in the decisions' contexts: its frame, or the end after parent frame pf. */
static inline uint64_t cand_sym(const struct stk *m, uint32_t y, uint32_t pf)
{
	return y == m->end ? (uint64_t)m->nsym + 2 + pf : y;
}

/* The node under u by frame f, made if new: 0, or 1 past STACKS_MAX_NODES, or an error. */
static int child(struct stk *m, uint32_t u, uint32_t f, uint32_t *out)
{
	uint64_t key = (uint64_t)u << 20 | f;
	size_t h = node_slot(m, key), k;
	uint32_t n;

	for (;; h = (h + 1) & m->hmask) {
		stk_slot s = m->htab[h];

		if (!s)
			break;
		if (s >> SLOT_NODE_BITS == key) {
			*out = (uint32_t)(s & SLOT_NODE_MASK) - 1;
			return 0;
		}
	}
	if (m->nnodes >= STACKS_MAX_NODES)
		return 1;
	/* at most 3/4 full: the table is read only for nodes made or frames past a node's last four */
	if ((m->nnodes + 1) * 4 > (m->hmask + 1) * 3) {
		size_t size = (m->hmask + 1) * 2, old = m->hmask + 1;
		stk_slot *t = calloc(size, sizeof(*t)), *from = m->htab;

		if (!t)
			return rs_error_set(RS_EGENERIC, "out of memory");
		m->htab = t;
		m->hmask = size - 1;
		for (k = 0; k < old; k++) {
			size_t g;

			if (!from[k])
				continue;
			g = node_slot(m, from[k] >> SLOT_NODE_BITS);
			while (t[g])
				g = (g + 1) & m->hmask;
			t[g] = from[k];
		}
		free(from);
		h = node_slot(m, key);
		while (t[h])
			h = (h + 1) & m->hmask;
	}
	n = (uint32_t)m->nnodes++;
	for (k = 0; k < NODE_MRU; k++)
		m->kids[n].f[k] = EMPTY;
	for (k = 0; k < KID_NODES; k++)
		m->kids[n].n[k] = EMPTY;
	m->htab[h] = key << SLOT_NODE_BITS | (n + 1);
	*out = n;
	return 0;
}

/* x to the front of u's frames; its node, when known, goes with it. */
static void node_mru(struct stk_kids *kids, uint32_t x)
{
	int i, at = NODE_MRU - 1;
	uint32_t n = EMPTY;

	for (i = 0; i < NODE_MRU; i++)
		if (kids->f[i] == x || kids->f[i] == EMPTY) {
			at = i;
			if (kids->f[i] == x && i < KID_NODES)
				n = kids->n[i];
			break;
		}
	memmove(kids->f + 1, kids->f, (size_t)at * sizeof(*kids->f));
	if (at)
		kids->n[1] = kids->n[0]; /* KID_NODES is 2: the second's node falls out */
	kids->f[0] = x;
	kids->n[0] = n;
}


static int list_mru(uint32_t **list, uint32_t x)
{
	uint32_t *l = *list, n = fl_n(l), i, at = n;

	for (i = 0; i < n; i++)
		if (l[FL_SYM + i] == x) {
			at = i;
			break;
		}
	if (at == n) {
		if (n < FRAME_LIST) {
			if (!l || n == l[FL_HDR] >> 16) {
				uint32_t cap = l ? (l[FL_HDR] >> 16) * 2 : FL_FIRST;
				uint32_t *t = realloc(l, (FL_SYM + (size_t)cap) * sizeof(*t));

				if (!t)
					return rs_error_set(RS_EGENERIC, "out of memory");
				if (!l)
					t[FL_LAST] = 0;
				t[FL_HDR] = n | cap << 16;
				*list = l = t;
			}
			++n;
			l[FL_HDR] = n | (l[FL_HDR] >> 16) << 16;
		}
		at = n - 1;
	}
	memmove(l + FL_SYM + 1, l + FL_SYM, at * sizeof(*l));
	l[FL_SYM] = x;
	return 0;
}

static int stk_init(struct stk *m, uint32_t nsym, uint32_t names)
{
	size_t i;

	memset(m, 0, sizeof(*m));
	m->nsym = nsym;
	m->names = names;
	m->root = nsym;
	m->end = nsym + 1;
	/* room for every node at once: its pages are only touched as nodes are made, and never copied */
	m->kids = malloc((size_t)STACKS_MAX_NODES * sizeof(*m->kids));
	m->hmask = 4095;
	m->htab = calloc(m->hmask + 1, sizeof(*m->htab));
	m->follow = malloc(((size_t)nsym * 2 + 3) * sizeof(*m->follow));
	m->seen = calloc((size_t)nsym + 2, sizeof(*m->seen));
	m->fl = calloc((size_t)nsym + 1, sizeof(*m->fl));
	m->ctx = malloc(sizeof(*m->ctx) << CTX_BITS);
	m->prevf = malloc((MAX_DEPTH + 1) * sizeof(uint32_t));
	m->prevn = malloc((MAX_DEPTH + 1) * sizeof(uint32_t));
	m->curf = malloc((MAX_DEPTH + 1) * sizeof(uint32_t));
	m->curn = malloc((MAX_DEPTH + 1) * sizeof(uint32_t));
	if (!m->kids || !m->htab || !m->follow || !m->seen || !m->fl || !m->ctx || !m->prevf ||
	    !m->prevn || !m->curf || !m->curn)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (i = 0; i < (size_t)1 << CTX_BITS; i++)
		m->ctx[i] = RC_PROB_ONE / 2;
	for (i = 0; i < (size_t)nsym * 2 + 3; i++)
		m->follow[i] = RC_PROB_ONE / 2;
	m->ends[0] = m->ends[1] = RC_PROB_ONE / 2;
	for (i = 0; i < V_COUNT; i++)
		rc_uint_init(&m->val[i]);
	/* node 0, the root */
	m->nnodes = 1;
	for (i = 0; i < NODE_MRU; i++)
		m->kids[0].f[i] = EMPTY;
	for (i = 0; i < KID_NODES; i++)
		m->kids[0].n[i] = EMPTY;
	return 0;
}

static void stk_release(struct stk *m)
{
	size_t i;

	if (m->fl)
		for (i = 0; i <= m->nsym; i++)
			free(m->fl[i]);
	free(m->fl);
	free(m->kids);
	free(m->htab);
	free(m->follow);
	free(m->seen);
	free(m->ctx);
	free(m->prevf);
	free(m->prevn);
	free(m->curf);
	free(m->curn);
}

/* A new mark for a level's candidates (seen[]), every old one cleared when the count wraps. */
static inline uint32_t new_stamp(struct stk *m)
{
	if (++m->stamp == 0) {
		memset(m->seen, 0, ((size_t)m->nsym + 2) * sizeof(*m->seen));
		m->stamp = 1;
	}
	return m->stamp;
}

/* Add y to the level's candidates unless it is one already. */
static inline void add_cand(struct stk *m, uint32_t *cands, uint32_t *nc, uint32_t y, uint32_t stamp)
{
	if (m->seen[y] != stamp) {
		m->seen[y] = stamp;
		cands[(*nc)++] = y;
	}
}

/*
 * One record: its frames s[0..n) when coding or replaying, decoded into
 * m->curf when decoding. *depth gets its length. Returns 0; 1 past the
 * caps (coding: store another way); DAMAGED for a decoded record that
 * cannot be; or an error.
 */
static int record(struct stk *m, const uint32_t *s, size_t n, size_t *depth)
{
	uint32_t u = 0, cands[MAX_CANDS];
	size_t i;
	int on = 1, err, bad = 0;

	for (i = 0;; i++) {
		uint32_t pf = i ? m->curf[i - 1] : m->root, x = m->end, nc = 0, nn = 0, j, k;
		uint32_t **flp = &m->fl[pf], fn = fl_n(*flp), new_last = 0;
		const uint32_t *fsym = *flp ? *flp + FL_SYM : NULL;
		int visited = -1, hit = -1, next_on;

		if (++m->levels > m->max_levels)
			return m->mode == MODE_DEC ? DAMAGED : 1;
		if (m->mode != MODE_DEC)
			x = i < n ? s[i] : m->end;
		on = on && i <= m->plen;
		if (on) {
			/* the previous record's frame first: most levels end here, with no list to build */
			uint32_t y = i < m->plen ? m->prevf[i] : m->end;

			cands[nc++] = y;
			if (!decide(m, &m->follow[cand_sym(m, y, pf)], y != x, RC_COUNTED_OTHERS))
				hit = 0;
		}
		if (hit < 0) {
			const struct stk_kids *kids = &m->kids[u];
			uint32_t stamp = new_stamp(m);

			if (nc)
				m->seen[cands[0]] = stamp;
			visited = kids->f[0] != EMPTY;
			for (k = 0; k < NODE_MRU && kids->f[k] != EMPTY; k++)
				add_cand(m, cands, &nc, kids->f[k], stamp);
			nn = nc;
			for (k = 0; k < fn && k < FRAME_MRU; k++)
				add_cand(m, cands, &nc, fsym[k], stamp);
			for (j = on ? 1 : 0; j < nc; j++) {
				uint32_t y = cands[j];
				uint64_t key = 2ull << 60 | (uint64_t)(j < 3 ? j : 3) << 56 | (uint64_t)(j < nn) << 55 |
					       (uint64_t)visited << 54 | (uint64_t)on << 53 | cand_sym(m, y, pf);

				if (!decide(m, &m->ctx[ctx_slot(key)], y != x, RC_COUNTED_OTHERS)) {
					hit = (int)j;
					break;
				}
			}
		}
		if (hit >= 0) {
			x = cands[hit];
		} else if (!decide(m, &m->ends[visited], x != m->end,
				   RC_COUNTED_OTHERS)) {
			x = m->end;
		} else {
			uint64_t v = 0;
			int placed = 0;

			if (fn > FRAME_MRU) {
				if (m->mode != MODE_DEC)
					for (k = FRAME_MRU; k < fn; k++)
						if (fsym[k] == x) {
							v = k - FRAME_MRU + 1;
							break;
						}
				v = value(m, &m->val[V_PLACE], v, &bad);
				if (bad || v > fn - FRAME_MRU)
					return DAMAGED;
				if (v) {
					x = fsym[FRAME_MRU + v - 1];
					placed = 1;
				}
			}
			if (!placed) {
				uint32_t last = *flp ? (*flp)[FL_LAST] : 0;

				if (last) {
					int64_t lr = (int64_t)last - 1, r;

					v = value(m, &m->val[V_RANK], zigzag((int64_t)x - lr), &bad);
					if (bad || v >> 40)
						return DAMAGED;
					r = lr + unzigzag(v);
					x = r < 0 || r >= m->nsym ? m->end : (uint32_t)r;
				} else {
					v = value(m, &m->val[V_FIRST], x, &bad);
					x = bad || v >= m->nsym ? m->end : (uint32_t)v;
				}
				if (x == m->end)
					return DAMAGED;
				new_last = x + 1;
			}
		}
		if (m->mode == MODE_DEC && x != m->end && (x >= m->names || i == MAX_DEPTH))
			return DAMAGED;
		/*
		 * Following the previous record, x is already u's first frame
		 * (the previous record took it here, and nothing since touched
		 * u): only a level that leaves it reads u's line. Not so before
		 * a stream's first record (p is 0: after a base, the root's
		 * first frame is the base's last record's), where an empty
		 * stack must still put the end first, as docs/codec.md says.
		 */
		if (!(on && hit == 0 && m->plen))
			node_mru(&m->kids[u], x);
		if (!fn || fsym[0] != x) {
			err = list_mru(flp, x);
			if (err)
				return err;
		}
		if (new_last)
			(*flp)[FL_LAST] = new_last;
		next_on = on && i < m->plen && m->prevf[i] == x;
		if (x == m->end)
			break;
		m->curf[i] = x;
		if (next_on) {
			m->curn[i] = m->prevn[i];
		} else if (m->kids[u].n[0] != EMPTY) {
			m->curn[i] = m->kids[u].n[0]; /* node_mru() put x first, its node with it */
		} else {
			err = child(m, u, x, &m->curn[i]);
			if (err)
				return err == 1 ? (m->mode == MODE_DEC ? DAMAGED : 1) : err;
			m->kids[u].n[0] = m->curn[i];
		}
		u = m->curn[i];
		on = next_on;
	}
	*depth = i;
	{
		uint32_t *t = m->prevf;

		m->prevf = m->curf;
		m->curf = t;
		t = m->prevn;
		m->prevn = m->curn;
		m->curn = t;
	}
	m->plen = i;
	return 0;
}

/* A varint in its one shortest form (the form the decoder writes): 0, or 1 when missing or longer. */
static int get_varint_exact(const unsigned char *raw, size_t len, size_t *pos, uint64_t *v)
{
	unsigned char tmp[10];
	size_t at = *pos;

	if (codec_varint_get(raw, len, pos, v) || *pos - at != codec_varint_put(tmp, *v))
		return 1;
	return 0;
}

/* The header of a raw stacks stream: A, T, with A + T frames at most MAX_FRAMES. */
static int read_header(const unsigned char *raw, size_t len, size_t *pos, uint64_t *a, uint64_t *t)
{
	if (get_varint_exact(raw, len, pos, a) || get_varint_exact(raw, len, pos, t) || *a > MAX_FRAMES ||
	    *t > MAX_FRAMES - *a)
		return 1;
	return 0;
}

/*
 * The next record of a raw stream at *pos into s (the previous record's
 * frames, *plen of them, already there), each rank r mapped: below `a` as
 * is, else thread slot r - a as `thread_at` + slot when below `threads`,
 * else `extra` (one id for all of them). 1 when it does not read as a
 * record (or is not in the one form the decoder gives back: each k as
 * long as the records share).
 */
static int next_record(const unsigned char *raw, size_t len, size_t *pos, uint64_t a, uint64_t t,
		       uint32_t thread_at, uint32_t threads, uint32_t extra, uint32_t *s, size_t *plen)
{
	uint64_t k, nm, r, i;

	if (get_varint_exact(raw, len, pos, &k) || get_varint_exact(raw, len, pos, &nm) || k > *plen ||
	    nm > MAX_DEPTH - k)
		return 1;
	for (i = 0; i < nm; i++) {
		if (get_varint_exact(raw, len, pos, &r) || r >= a + t)
			return 1;
		if (r >= a && r - a >= threads) {
			r = extra; /* two such slots are one id: no check of k against it */
		} else {
			if (r >= a)
				r = thread_at + (r - a);
			if (i == 0 && k < *plen && s[k] == r)
				return 1; /* k is not the frames the records share */
		}
		s[k + i] = (uint32_t)r;
	}
	*plen = (size_t)(k + nm);
	return 0;
}

/*
 * The records of a raw stream through the model (coding or replaying),
 * their ranks mapped as next_record() does. 1 when the stream does not
 * read as stacks, or past the caps.
 */
static int run_records(struct stk *m, const unsigned char *raw, size_t len, size_t pos, uint64_t a, uint64_t t,
		       uint32_t thread_at, uint32_t threads, uint32_t extra)
{
	uint32_t *s = malloc((MAX_DEPTH + 1) * sizeof(*s));
	size_t plen = 0, depth;
	int err = 0;

	if (!s)
		return rs_error_set(RS_EGENERIC, "out of memory");
	while (!err && pos < len) {
		err = next_record(raw, len, &pos, a, t, thread_at, threads, extra, s, &plen);
		if (err)
			break;
		err = record(m, s, plen, &depth);
		if (m->mode == MODE_ENC && m->e->err)
			err = m->e->err;
	}
	free(s);
	return err == DAMAGED ? 1 : err;
}

int rs_stacks_check(const unsigned char *raw, size_t len, uint64_t *a, uint64_t *t, uint64_t *records,
		    uint64_t *levels)
{
	uint32_t *s;
	size_t pos = 0, plen = 0;
	uint64_t n = 0, l = 0;
	int bad;

	if (read_header(raw, len, &pos, a, t))
		return 1;
	s = malloc((MAX_DEPTH + 1) * sizeof(*s));
	if (!s)
		return rs_error_set(RS_EGENERIC, "out of memory");
	for (bad = 0; !bad && pos < len; n++) {
		bad = next_record(raw, len, &pos, *a, *t, (uint32_t)*a, (uint32_t)*t, (uint32_t)(*a + *t), s, &plen);
		l += plen + 1;
	}
	free(s);
	*records = n;
	*levels = l;
	return bad;
}

/* The base's records replayed; its ranks as the stream's (a, t) take them. */
static int prime(struct stk *m, const unsigned char *base, size_t base_len, uint64_t a, uint64_t t)
{
	size_t pos = 0;
	uint64_t ba, bt;
	int mode = m->mode, err;

	if (read_header(base, base_len, &pos, &ba, &bt) || ba > a)
		return 1;
	m->mode = MODE_REPLAY;
	err = run_records(m, base, base_len, pos, ba, bt, (uint32_t)a, (uint32_t)t, (uint32_t)(a + t));
	m->mode = mode;
	m->plen = 0;
	return err;
}

/*
 * The model's ids: the stream's frames, then one for all the base's
 * thread slots it has no thread for (the stream never names them: their
 * records only teach the model), so that a base cannot make the model's
 * tables larger than the stream's frames do.
 */
static int ids(const unsigned char *base, size_t base_len, uint64_t a, uint64_t t, uint32_t *nsym)
{
	size_t pos = 0;
	uint64_t ba = 0, bt = 0;

	if (base && read_header(base, base_len, &pos, &ba, &bt))
		return 1;
	*nsym = (uint32_t)(a + t + (bt > t));
	return 0;
}

int rs_stacks_pack(struct rs_buf *out, const unsigned char *raw, size_t len, const unsigned char *base,
		   size_t base_len, uint64_t max_levels)
{
	struct rc_enc e;
	struct stk m;
	size_t pos = 0;
	uint64_t a, t;
	uint32_t nsym;
	int err, bad = 0;

	if (read_header(raw, len, &pos, &a, &t) || ids(base, base_len, a, t, &nsym))
		return 1;
	err = stk_init(&m, nsym, (uint32_t)(a + t));
	m.max_levels = max_levels;
	if (!err && base)
		err = prime(&m, base, base_len, a, t);
	if (!err) {
		rc_enc_start(&e, out, 0);
		m.e = &e;
		m.mode = MODE_ENC;
		value(&m, &m.val[V_HEADER], a, &bad);
		value(&m, &m.val[V_HEADER], t, &bad);
		err = run_records(&m, raw, len, pos, a, t, (uint32_t)a, (uint32_t)t, (uint32_t)(a + t));
		if (!err)
			err = rc_enc_finish(&e);
		if (err)
			rs_buf_clear(out);
	}
	stk_release(&m);
	return err;
}

static int corrupt(void)
{
	return rs_error_set(RS_ECORRUPT, "the session container is damaged: "
			    "its stacks stream does not decode to its length");
}

static int emit(unsigned char *raw, size_t raw_len, size_t *at, uint64_t v)
{
	unsigned char tmp[10];
	size_t n = codec_varint_put(tmp, v);

	if (n > raw_len - *at)
		return 1;
	memcpy(raw + *at, tmp, n);
	*at += n;
	return 0;
}

int rs_stacks_unpack(unsigned char *raw, size_t raw_len, const unsigned char *base, size_t base_len,
		     const unsigned char *p, size_t n, uint64_t max_levels)
{
	struct rc_dec d;
	struct stk m;
	uint64_t a, t;
	uint32_t nsym;
	size_t at = 0, depth, i;
	int err, bad = 0;

	if (n < 5 || p[0] != 0)
		return corrupt();
	memset(&m, 0, sizeof(m));
	rc_dec_start(&d, p, n, 0);
	/* the header's values come before the model, whose sizes they give */
	{
		struct rc_uint hdr;

		rc_uint_init(&hdr);
		m.d = &d;
		m.mode = MODE_DEC;
		a = value(&m, &hdr, 0, &bad);
		t = bad ? 0 : value(&m, &hdr, 0, &bad);
		if (bad || d.overrun || a > MAX_FRAMES || t > MAX_FRAMES - a || emit(raw, raw_len, &at, a) ||
		    emit(raw, raw_len, &at, t))
			return corrupt();
		if (ids(base, base_len, a, t, &nsym))
			return corrupt();
		err = stk_init(&m, nsym, (uint32_t)(a + t));
		m.max_levels = max_levels;
		if (!err) {
			m.val[V_HEADER] = hdr;
			if (base)
				err = prime(&m, base, base_len, a, t);
			if (err == 1)
				err = corrupt();
		}
	}
	m.d = &d;
	m.mode = MODE_DEC;
	while (!err && at < raw_len) {
		size_t plen = m.plen, k = 0;

		err = record(&m, NULL, 0, &depth);
		if (err == DAMAGED || (!err && d.overrun)) {
			err = corrupt();
			break;
		}
		if (err)
			break;
		/* record() swapped the arrays: the record is m.prevf, the one before it m.curf */
		while (k < depth && k < plen && m.prevf[k] == m.curf[k])
			k++;
		if (emit(raw, raw_len, &at, k) || emit(raw, raw_len, &at, depth - k)) {
			err = corrupt();
			break;
		}
		for (i = k; i < depth && !err; i++)
			if (emit(raw, raw_len, &at, m.prevf[i]))
				err = corrupt();
	}
	if (!err && (d.pos != d.len || d.overrun))
		err = corrupt();
	stk_release(&m);
	return err;
}
