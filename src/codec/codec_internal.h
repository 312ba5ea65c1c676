/*
 * The session codec's own declarations, shared by its parts and by no one
 * else (session_codec.h is the contract). The parts, as zstd keeps
 * compression and decompression apart:
 *
 *   session_model.c   what both sides compute alike: Python's repr() of a
 *                     time and its cache, the stream table;
 *   session_decode.c  the container's reader: the untrusted-input surface;
 *   session_tree.c    the call tree's reader, which the encoder also uses
 *                     on the base tree a cache file hands it back;
 *   session_encode.c  the parse of a session and the streams and container
 *                     made of it;
 *   session_proof.c   the proof that a container rebuilds its object, and
 *                     codec_build(), which makes the container and proves it;
 *   rc_pack.c / rc_unpack.c  the range coder (rc_model.h).
 *
 * The decoder includes nothing of the encoder: the encoder's structures
 * come last here, after what the decoder needs.
 */
#ifndef RS_CODEC_INTERNAL_H
#define RS_CODEC_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/stat.h>

#include <zstd.h>

#include "codec/session_codec.h"
#include "results/error.h"
#include "codec/rc_model.h"
#include "codec/varint.h"
#include "util/hash.h"

#define HEADER_SIZE 24
#define SECTION_HEADER_SIZE 24
#define SEC_CODEC_RAW 0
#define SEC_CODEC_ZSTD 1
#define SEC_CODEC_RC 2 /* version 2: range-coded with the stream's model (rc_model.h) */
#define SEC_CODEC_FRONT 3 /* version 2: a frame list front-coded, then one zstd frame */
#define SEC_CODEC_COLUMNS 4 /* version 3: a frame list in columns, then one zstd frame */
#define SEC_CODEC_SPLIT 5 /* version 4: codec 4 with a column per field and COL_SAME */
#define SEC_CODEC_STACKS 6 /* version 7: a stacks stream range-coded with the stacks model (rc_stacks.h) */

/*
 * The streams, by the slot the decoder keeps them in. Version 1 has
 * twelve, in this order; version 2 has nine (codec_v2_streams): the samples
 * and the times in one stream each (SEC_SAMPLES, SEC_TIMES) instead of
 * split ones, and those two and the tree range-coded.
 */
enum {
	SEC_PARAMS, SEC_PREFIX, SEC_SUFFIX, SEC_DICT, SEC_THREADS, SEC_TREE,
	SEC_SAMPLES, SEC_SAMPLES_HI, SEC_TCODE, SEC_TVAL, SEC_TVAL_HI, SEC_TESC, SEC_COUNT,
	SEC_BASE = SEC_COUNT, /* the shared dictionary, in the container's first block */
	SEC_BASE_TREE,        /* version 5: the base tree, in the first block too; version 7: the base's stacks */
	SEC_SLOTS,
	SEC_TIMES = SEC_TCODE
};

#define V2_COUNT 9
extern const int codec_v2_streams[V2_COUNT];

#define BASE_MAGIC "RSPYDIC\n"
#define BASE_HEADER_SIZE 16
/*
 * What the encoder hands the store to keep for the next run (struct
 * rs_codec_dict's `next`, the cache file `codec-base`) from version 7:
 * this magic, a u64 (little-endian) length, the base dictionary's raw
 * stream of that length, then the base's raw stacks stream. Anything
 * else (a version-4 cache held the dictionary alone; versions 5 and 6's,
 * magic "RSPYBAS\n", the dictionary and the base tree) is not taken: the
 * container then starts a new base.
 */
#define BASE_CACHE_MAGIC "RSPYSTK\n"
#define BASE_CACHE_HEADER 16

/* Caps shared by encoder and decoder. */
#define MAX_DEPTH (64u * 1024)        /* frames in one record */
#define MAX_FRAMES (1u << 18)         /* distinct frame strings (real runs: 3,000-5,000) */
#define MAX_FRAME_BYTES (8u << 20)    /* their texts, the base's or the rest's (real: 0.5 MB) */
#define MAX_NODES (1u << 19)          /* call tree nodes (real: 50,000 for 78 MB) */
/*
 * Version 7: the raw stacks a container holds, the base's and its own
 * together (about 18 bytes a record: 2.4 MB for a 224 MB session, 11 MB
 * for 1 GB). The decoder holds them whole beside the stacks model's
 * tables; 12 MiB keeps both under 64 MB whatever a container claims.
 */
#define MAX_STACKS_BYTES (12u << 20)
/*
 * Version 7: the stacks model's nodes, the root's included: 5 * 2^16
 * (327,680), where the call tree of version 6 allowed MAX_NODES. Real
 * runs: 10,241 nodes for 4 MB, 50,244 for 78 MB; generated sessions
 * 130,334 for 224 MB and 225,801 for 1 GB, whose raw stacks (11.5 MB)
 * are near MAX_STACKS_BYTES. A stream past it is stored another way; the
 * node table and children it bounds are most of what a decode can be
 * made to hold (docs/codec.md, "Untrusted containers").
 */
#define STACKS_MAX_NODES (5u << 16)

/*
 * Version 7: the most levels the stacks model may walk for an object of
 * `size` bytes, the base's records it learns from and the object's own
 * together (a level is a frame of a record, or its end). Each of the
 * object's levels writes at least 4 bytes (a quoted frame and its `, `),
 * so its own take at most a quarter of this; the encoder starts a new
 * base when the base's would pass the rest. Without it a container of a
 * few bytes per record 65,536 frames deep would keep the model busy for
 * minutes.
 */
static inline uint64_t stacks_level_budget(uint64_t size)
{
	return size / 2 + 64;
}
#define MAX_RECORDS (8u << 20)        /* samples: 13 bytes each while encoding (a 14 GB session) */
#define MAX_AFFIX (16u * 1024 * 1024) /* prefix, suffix */
#define MAX_NUMBER 40                 /* characters of a time */
#define READ_BLOCK (4u * 1024 * 1024) /* the sliding buffer */
#define MAP_MIN (16u * 1024 * 1024)   /* files from this size are mapped */

/* ---- small helpers ------------------------------------------------------ */

/* splitmix64's finaliser: every bit of x moves every bit of the result (hash-table slots). */
static inline uint64_t codec_mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* A zeroed table whose pages are written before it is used (session_model.c); free() it. */
void *codec_zalloc(size_t n, size_t size);

RS_MUST_CHECK
static inline int put_varint(struct rs_buf *b, uint64_t v)
{
	unsigned char tmp[10];

	return rs_buf_put(b, tmp, codec_varint_put(tmp, v));
}

static inline uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* A bounded reader over one decoded stream. */
struct cursor {
	const unsigned char *p;
	size_t len, pos;
};

RS_MUST_CHECK
static inline int get_varint(struct cursor *c, uint64_t *out)
{
	return codec_varint_get(c->p, c->len, &c->pos, out);
}

RS_MUST_CHECK
static inline int get_split(struct cursor *lo, struct cursor *hi, uint64_t *out)
{
	uint64_t h;

	if (lo->pos >= lo->len || get_varint(hi, &h) || h >> 56)
		return -1;
	*out = h << 8 | lo->p[lo->pos++];
	return 0;
}

static inline void put_le64(unsigned char *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint64_t get_le64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static inline void put_le32(unsigned char *p, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline uint32_t get_le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/*
 * repr() costs a few snprintf/strtod round trips; a run has only some
 * thousands of distinct times (the jitter is a few microseconds wide), so
 * a small cache answers most of them. The times are multiples of a grid
 * 2^-s: their low mantissa bits are all zero, so the double's bits are
 * mixed (splitmix64's finaliser) before they pick a slot, and a short
 * linear probe keeps two times that share a slot from evicting each other
 * on every record. (A direct-mapped slot taken from a plain product used
 * a sixteenth of the slots: a 224 MB session's 17,500 distinct times were
 * formatted 160,000 times, a tenth of the encoder's CPU time.)
 */
#define REPR_CACHE 65536
#define REPR_PROBE 8

/* One slot, 32 bytes: a look-up reads one cache line (the table is 2 MB). */
struct repr_slot {
	uint64_t bits;
	char text[23];
	unsigned char len;             /* 0: empty */
};

struct repr_cache {
	struct repr_slot slot[REPR_CACHE];
	uint64_t misses;               /* times formatted (one thread at a time uses it) */
};
struct repr_cache *codec_repr_cache_new(void);
/* Python's repr() of x into `out` (48 bytes), NUL-terminated; its length. */
size_t codec_py_repr(double x, char *out);
/* Start fetching the slot where x's text would be. */
void codec_repr_prefetch(const struct repr_cache *c, double x);
/* codec_py_repr through the cache; `out` needs 48 bytes. */
size_t codec_py_repr_cached(struct repr_cache *c, double x, char *out);

/* 1e9 / 2^9: the clock's period in nanoseconds (the clock's phase, below) */
#define CLOCK_PERIOD 1953125

/*
 * round(n * 2^s / 1e9): the grid steps nearest to n nanoseconds. The
 * encoder and decoder take it several times a sample, and a 128-bit
 * division is a library call of ~50 cycles: for n >= 0 and s >= 9 it is
 * floor((n 2^(s-9) + CLOCK_PERIOD / 2) / CLOCK_PERIOD) (1e9 = 2^9
 * CLOCK_PERIOD; the half is never reached, CLOCK_PERIOD being odd), a
 * 64-bit division by a constant, which the compiler makes a
 * multiplication, while n 2^(s-9) fits in 64 bits.
 */
static inline int64_t grid_of_ns(int64_t n, int s)
{
	__int128 v;

	if (s >= 9 && s <= 62 && n >= 0 && (uint64_t)n <= (UINT64_MAX - CLOCK_PERIOD / 2) >> (s - 9))
		return (int64_t)((((uint64_t)n << (s - 9)) + CLOCK_PERIOD / 2) / CLOCK_PERIOD);
	v = (__int128)n * ((__int128)1 << s) + 500000000; /* n may be negative: no shift of it */
	return (int64_t)(v >= 0 ? v / 1000000000 : -((-v + 999999999) / 1000000000));
}

/* grid_of_ns through the 128-bit division always (for the tests) */
static inline int64_t grid_of_ns_wide(int64_t n, int s)
{
	__int128 v = (__int128)n * ((__int128)1 << s) + 500000000; /* n may be negative: no shift of it */

	return (int64_t)(v >= 0 ? v / 1000000000 : -((-v + 999999999) / 1000000000));
}

/* round(m * 1e9 / 2^s): the nanoseconds nearest to m grid steps. */
static inline int64_t ns_of_grid(int64_t m, int s)
{
	__int128 v = (__int128)m * 1000000000 + ((__int128)1 << (s - 1));

	return (int64_t)(v >> s);
}

/*
 * The clock's phase (version 2). pyinstrument's times are differences of
 * successive readings: reading k + 1 is reading k plus the time, so the
 * readings in nanoseconds are x_0 + n_1 + ... + n_k, and each time in
 * grid steps is grid_of_ns(x_k) - grid_of_ns(x_{k-1}). That depends only
 * on x mod CLOCK_PERIOD (1e9 = 2^9 * 1953125: grid_of_ns(x + 1953125) is
 * grid_of_ns(x) + 2^(s - 9)), so with the reading's phase known the
 * residual is 0 and costs nothing; a residual is coded against this
 * prediction (phase_steps) when a reading was missed. Both sides keep x
 * in [0, CLOCK_PERIOD).
 */
static inline int64_t phase_steps(int64_t x, int64_t n, int s)
{
	return grid_of_ns(x + n, s) - grid_of_ns(x, s);
}

/*
 * A reading past a power of two of seconds (version 6): the clock's
 * doubles from there on are on the grid 2^-(s-1), twice as coarse. The
 * time that crosses, in steps of the finer grid 2^-s it starts on, is
 * 2 grid_of_ns(x + n, s - 1) - grid_of_ns(x, s): whole periods of the
 * reading cancel out as they do on one grid (both terms move by
 * 2^(s-9) a period), so the phase still suffices, while s - 1 >= 9.
 */
#define GRID_CHANGES_MAX 32
static inline int64_t change_steps(int64_t x, int64_t n, int s)
{
	return 2 * grid_of_ns(x + n, s - 1) - grid_of_ns(x, s);
}

static inline int64_t phase_next(int64_t x, int64_t n)
{
	int64_t y;

	/* in 64 bits when it can (a division by a constant; C truncates either way), else 128 */
	if (!__builtin_add_overflow(x, n, &y))
		return y % CLOCK_PERIOD;
	return (int64_t)(((__int128)x + n) % CLOCK_PERIOD);
}

/* The model of a range-coded stream in slot i; RC_KINDS: none may be. */
static inline enum rc_kind stream_model(int version, int i)
{
	if (version < 2)
		return RC_KINDS;
	if (version >= 7) /* the tree is gone, the stacks have a codec of their own (is_stacks_stream) */
		return i == SEC_TIMES ? RC_TIMES : RC_KINDS;
	if (i == SEC_BASE_TREE)
		return version >= 5 ? RC_TREE : RC_KINDS;
	return i == SEC_TREE ? RC_TREE : i == SEC_SAMPLES ? RC_SAMPLES : i == SEC_TIMES ? RC_TIMES : RC_KINDS;
}

/* Version 7's stacks streams (rc_stacks.h's syntax): the samples stream and the base's stacks. */
static inline int is_stacks_stream(int version, int i)
{
	return version >= 7 && (i == SEC_SAMPLES || i == SEC_BASE_TREE);
}

/* Streams of frame strings (varint length + text, each): the base, dict and threads. */
static inline int is_frame_list(int i)
{
	return i == SEC_BASE || i == SEC_DICT || i == SEC_THREADS;
}

/*
 * Codec 4's frame text (version 3): `name` SEP `file` SEP first line, then
 * optionally CLASS and the class, then optionally LINE and the line, the
 * lines in canonical decimal of at most 9 digits (docs/codec.md, "Frame
 * lists in columns").
 */
#define COL_SEP "\\u0000"
#define COL_CLASS "\\u0001c"
#define COL_LINE "\\u0001l"
#define COL_SEP_LEN 6
#define COL_ATTR_LEN 7 /* COL_CLASS, COL_LINE */
#define COL_MAX_LINE 999999999u
enum { COL_VERBATIM = 0, COL_PLAIN = 1, COL_WITH_CLASS = 2, COL_WITH_LINE = 3, COL_CLASS_LINE = 4, COL_REST = 5,
       COL_SAME = 6 /* codec 5: the previous frame's parts, another line */ };
/* Codec 5's columns, in their order: a frame's fields, each in a column of its own. */
enum { COLF_KIND, COLF_NAME, COLF_FILE, COLF_FIRST, COLF_CLASS, COLF_LINE, COLF_N };

/* The decoder's output buffers; the proof reads the file in pieces of this size. */
#define OUT_BUF (256u * 1024)

struct text {
	const unsigned char *p;
	uint32_t len;
};

/*
 * Version 5's base tree (docs/codec.md, "The base tree"), read: per node
 * (0 the root) its frame (a base rank, or nbase + a thread slot), parent
 * and children (rc: what the range coder's model sees of it). rc.n 0:
 * none.
 */
struct codec_base_tree {
	struct rc_base rc;
	uint32_t nbase, nthreads;
	uint32_t *frame, *parent, *kids, *first, *child;
};

/* Read the base tree's raw stream `p`/`len` (0 bytes: none) over `nbase` base frames. */
RS_MUST_CHECK int codec_base_tree_read(struct codec_base_tree *bt, const unsigned char *p, size_t len, uint64_t nbase);
void codec_base_tree_release(struct codec_base_tree *bt);

/*
 * A tree stream's walk: the root's child count, then per node in
 * depth-first preorder its frame and child count; with `base` (version
 * 5), nodes under a matched parent start with their match. Fills parent,
 * node_frame (nnodes each) and kids (when not NULL); refuses a stream
 * that does not hold exactly nnodes nodes and nothing more.
 */
struct tree_walk {
	struct cursor *c;
	int version;
	uint64_t nnodes, nframes;          /* frames the codes may name; the root's list is the last */
	const struct codec_base_tree *base;
	uint64_t thread_at, nthreads;      /* a base thread slot t is frame thread_at + t, t < nthreads */
	uint32_t *parent, *node_frame, *kids;
};
RS_MUST_CHECK int codec_walk_tree(const struct tree_walk *w);

struct decoded {
	int version;
	uint64_t max_size;        /* the most bytes the caller lets it write (read_sections) */
	int phased;               /* version 2: times follow the clock's phase (clock_x) */
	int64_t clock_x;
	int grid;                 /* the grid of the last reading: 2^-grid seconds */
	uint64_t grid_at[GRID_CHANGES_MAX]; /* version 6: the records where the grid coarsens */
	int ngrid, grid_next;
	uint64_t size;            /* the object's, as the main header says (at most the caller's) */
	unsigned char *owned[SEC_SLOTS];
	struct cursor sec[SEC_SLOTS];
	struct codec_base_tree bt; /* version 5: the base block's tree (bt.rc.n 0: none) */
	struct text *frames;      /* after quote_frames: each frame as `, "frame"` */
	unsigned char *quoted;    /* where those are */
	uint32_t *parent, *node_frame, *path;
	struct repr_cache *repr;
	int repr_owned;
	struct rc_aside *aside;   /* codec_read_sections: the samples' and the times' range decoders, on threads */
};

/*
 * Read the container's blocks and streams into `d` (codec_decoded_release
 * frees them whatever this returns): every length checked against the
 * bytes present and against `max_size`, the object's size at most.
 */
RS_MUST_CHECK int codec_read_sections(struct decoded *d, const unsigned char *p, size_t len, uint64_t max_size);
void codec_decoded_release(struct decoded *d);
/* rs_codec_decode with `repr`: a cache to use (the encoder's, for its proof), or NULL for one of its own. */
RS_MUST_CHECK int codec_decode(const unsigned char *p, size_t len, uint64_t max_size, rs_codec_write_fn write,
			    void *ctx, struct repr_cache *repr);

/* ---- the encoder's state (session_encode.c, session_proof.c) ------------ */

struct frame_entry {
	uint64_t off;   /* in the arena */
	uint32_t len;
	uint32_t hash;
	uint8_t thread; /* first met at depth 0 (and not in the base) */
	uint8_t used;   /* in a record of this run */
	uint8_t cls;    /* codec_build(): FRAME_* */
};

enum { FRAME_BASE, FRAME_NEW, FRAME_THREAD, FRAME_DROPPED };

/*
 * The input's SHA-256. The proof needs it (the input must hash to the
 * oid) and it is as much work as the whole parse, so it runs alongside
 * the parse instead of after it: a file read in the sliding buffer is
 * hashed as each read lands (the very bytes the parse then reads); a
 * mapped one on a thread of its own, which the parse, on the other core,
 * never waits for unless one of them gets HASH_AHEAD bytes ahead of the
 * other. The pages below both positions are given back as they go, so
 * that memory stays bounded whichever is ahead.
 */
#define HASH_STEP (1u << 20)
#define HASH_AHEAD (16u << 20)
#define DROP_STEP (4u << 20)

struct hasher {
	struct rs_sha256 *h;
	uint64_t hashed;          /* bytes fed to h */
	/* the mapped case: */
	const unsigned char *map;
	size_t len, page;
	pthread_t thread;
	int started;              /* the thread runs */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int sync;                 /* mu and cv are initialised */
	size_t parsed;            /* the parse's position, as it last said */
	size_t dropped;           /* map[0..dropped) is given back */
	int stop;
};

/* A slot of the call tree's table: one cache line holds the key and the node. */
struct node_slot {
	uint64_t key;             /* parent node << 32 | frame */
	uint32_t node1;           /* the child node + 1; 0: empty */
	uint32_t path;            /* the hash of the child's path (path_hash), which places it */
};

struct enc {
	uint64_t size;            /* the object's */
	int fd;
	struct stat opened;       /* the file as it was opened: it must not change */
	struct hasher hz;
	unsigned char *buf;
	size_t len, pos;
	int eof;
	uint64_t consumed;

	struct rs_buf prefix, suffix, arena, esc_text;

	struct frame_entry *frames;
	uint32_t nframes;         /* at most MAX_FRAMES */
	size_t aframes;           /* capacities: rs_array_grow's (util/array.h) */
	uint32_t *ftab;           /* frame id + 1, 0 empty */
	size_t ftab_mask;

	uint32_t *node_parent, *node_frame;
	uint32_t nnodes;          /* at most MAX_NODES */
	size_t anode_parent, anode_frame;
	struct node_slot *ntab;   /* (parent, frame) -> child node */
	size_t ntab_mask;

	uint32_t *rec_node;
	double *rec_time;
	unsigned char *rec_verbatim;
	uint64_t nrecords;        /* at most MAX_RECORDS */
	size_t arec_node, arec_time, arec_verbatim;

	uint32_t *prev_frame, *prev_node, *prev_path; /* prev_path: path_hash of prev_node */
	size_t prev_depth;
	size_t *span_off;
	uint32_t *span_len;
	int mapped;               /* buf is the whole file, mapped (len bytes) */
	struct repr_cache *repr;
	uint32_t nbase;           /* frames 0..nbase-1 are the given base dictionary */
	struct rs_buf base_stacks;/* the given base's stacks, their raw stream (version 7; empty: none) */
	uint64_t base_levels;     /* their levels (rs_stacks_check), which the model walks again */
	uint64_t stacks_levels;   /* put_stacks(): this run's levels */
	int rebase;               /* codec_build(): this container starts a new base */
	int force_rebase;         /* the base's stacks and this run's would pass codec_stacks_budget */
	uint64_t block_len;       /* codec_build(): bytes of the container's first block */
	struct rs_buf *next_base; /* codec_build(): where the base it used goes, or NULL */

	struct rs_codec_stats *stats;
};

/* Decline: not an error, the generic path takes the object. */
#define DECLINE 1

/*
 * What codec_build() makes of the parse: the streams, and the numbering they
 * share (a frame's place in the dictionary).
 */
struct streams {
	struct rs_buf sec[SEC_SLOTS];
	uint32_t *rank;          /* frame id -> its place in the dictionary */
	uint32_t nbase, ndict, nthreads;
	int s;                   /* the clock's grid is 2^-s seconds (0: no grid) */
	int64_t ref;             /* the median modelled time, in nanoseconds */
	int64_t phase;           /* the clock's reading mod CLOCK_PERIOD before the first time, + 1; 0: none */
	/* version 6: the records whose reading is the first on a grid twice coarser (with a phase only) */
	uint32_t grid_at[GRID_CHANGES_MAX];
	int ngrid;
};

/*
 * The most bytes of raw stacks a container may hold, the base's and its
 * own together, before it starts a new base rather than code its stacks
 * after the base's (MAX_STACKS_BYTES, the decoder's cap). A variable so
 * that tests can reach the case with a small session.
 */
extern uint64_t codec_stacks_budget;

/* Set why the codec declines (e->stats->declined); DECLINE. */
int codec_decline(struct enc *e, const char *why);
/* Open the file and set the encoder up (`dict` may be NULL); codec_enc_release whatever this returns. */
RS_MUST_CHECK int codec_enc_open(struct enc *e, const char *path, uint64_t size, struct rs_codec_dict *dict,
				 struct rs_codec_stats *stats);
/* Parse the file: prefix, records, suffix (0, DECLINE or an error). */
RS_MUST_CHECK int codec_enc_parse(struct enc *e);
void codec_enc_release(struct enc *e);
void codec_streams_init(struct streams *st);
void codec_streams_release(struct streams *st);
/* The streams of what the parse collected (0, DECLINE or an error). */
RS_MUST_CHECK int codec_make_streams(struct enc *e, struct streams *st);
/*
 * The clock's phase of the parse's times on the grid 2^-s (+ 1; 0 when
 * none explains any) into *phase, trying candidates while fewer than
 * `budget` records were walked (codec_make_streams: PHASE_BUDGET). With
 * `reference` set, it takes the slow steps through time_code and
 * phase_code that the fast ones must agree with (for the tests). 0 or an
 * error (out of memory).
 */
#define PHASE_BUDGET (64u << 20)
RS_MUST_CHECK int codec_find_phase(const struct enc *e, int s, uint64_t budget, int reference, int64_t *phase);
/* DECLINE unless the hash the parse took is `oid`'s, over `size` bytes. */
RS_MUST_CHECK int codec_input_is_the_object(struct enc *e, const struct rs_id *oid, uint64_t size);
/*
 * The container of `st` into `out`: compressed with `cctx`, or, with
 * `cctx` NULL, every stream stored as is (what the proof decodes first).
 * `block_len`, when not NULL, gets the size of the base block.
 */
RS_MUST_CHECK int codec_put_container(struct rs_buf *out, ZSTD_CCtx *cctx, const struct streams *st, uint64_t size,
				     uint64_t *block_len);
/*
 * Build the streams and the container from what the parse collected, and
 * prove it: 0 only when `out` rebuilds exactly the `size` bytes of the
 * file, and those hash to `oid`; DECLINE or an error otherwise.
 */
RS_MUST_CHECK int codec_build(struct enc *e, struct rs_buf *out, uint64_t size, const struct rs_id *oid);

#endif
