/*
 * The session codec: a byte-exact, reversible re-encoding of pyinstrument
 * session files (store transform 1, docs/codec.md). It splits a session
 * into streams -- the text before and after `frame_records` (verbatim),
 * a sorted frame dictionary, the root thread frames, one call tree of the
 * run, per-sample references into the tree and per-sample times modelled
 * as nanosecond differences of a clock -- and compresses each stream.
 *
 * Anything the model does not cover exactly (a time its float formatter
 * would write differently, a clock off the grid) is kept verbatim per
 * value; any other layout makes the encoder decline, and the caller
 * stores the object with the generic path. The encoder proves every
 * container it returns: the file it read hashes to the object's oid, and
 * the container decodes to that file byte for byte, so nothing is ever
 * stored that cannot be rebuilt.
 *
 * Containers come back from a remote: the decoder treats them as
 * untrusted. Every length is checked, memory is capped
 * (RS_CODEC_MAX_CONTAINER, RS_CODEC_MAX_STREAMS) and output beyond the
 * size the caller expects is refused.
 */
#ifndef RS_SESSION_CODEC_H
#define RS_SESSION_CODEC_H

#include "results/error.h"

#include <stddef.h>
#include <stdint.h>

#include "results/buf.h"
#include "util/hash.h"

/* The container version this build writes; it reads this one and the older ones from RS_CODEC_OLDEST. */
#define RS_CODEC_VERSION 7
#define RS_CODEC_OLDEST 1
#define RS_CODEC_MAGIC "RSPYSES\n"

/*
 * A reader refuses containers bigger than RS_CODEC_MAX_CONTAINER, and
 * streams that would decode to more than RS_CODEC_MAX_STREAMS in all (or,
 * each, to more than the object's size). With the caps on frames and
 * tree nodes (docs/codec.md, "Untrusted containers") they keep a decode
 * under 64 MB, whatever a container claims; a session whose container
 * would pass them (beyond about 1 GB) takes the generic path.
 */
#define RS_CODEC_MAX_CONTAINER (16u * 1024 * 1024)
#define RS_CODEC_MAX_STREAMS (16u * 1024 * 1024)

/* Output sink: write `n` bytes; a non-zero return stops decoding with it. */
typedef int (*rs_codec_write_fn)(void *ctx, const void *p, size_t n) RS_MUST_CHECK;

struct rs_codec_stats {
	uint64_t records;       /* samples */
	uint64_t frames;        /* distinct frame strings */
	uint64_t nodes;         /* call tree nodes */
	uint64_t times_verbatim;/* times kept as text */
	uint64_t times_residual;/* modelled times the clock's reading did not explain exactly */
	uint64_t grid_changes;  /* the clock's reading passing a power of two of seconds (version 6) */
	uint64_t container;     /* bytes of the container */
	uint64_t new_base;      /* 1: the container starts a new base (rs_codec_dict) */
	char declined[160];     /* why the encoder declined, when it did */
};

/*
 * The shared dictionary. A container starts with a block holding a base
 * dictionary of frame strings and (versions 5 and 6) a base call tree,
 * (version 7) the base run's stacks; the rest names frames by their place
 * in it, lists only the frames the base lacks, and codes its call tree
 * against the base tree (version 7: its stacks after the base's, the
 * model primed by them). Give the encoder
 * the base an earlier container of the same remote used, and it keeps it
 * while it still covers most frames: that first block is then byte for
 * byte the earlier one, and the store, which keeps it as a chunk of its
 * own, sends and stores it once for all those runs. The base's bytes
 * (`next`, the store's cache file) are the encoder's own layout
 * (docs/codec.md, "Shared dictionary: successive runs"); any other bytes
 * only make the container start a new base.
 */
struct rs_codec_dict {
	const unsigned char *base; /* in: an earlier container's base (`next`), or NULL */
	size_t base_len;
	struct rs_buf next;        /* out: the base this container holds (the caller's) */
	uint64_t block_len;        /* out: bytes of the container's first block */
};

/*
 * Encode the file at `path` (`size` bytes, SHA-256 `oid`) into `out`
 * (cleared first). `*applies` is set to 1 when `out` holds a proven
 * container, 0 when the file is not a session this codec reproduces
 * (the reason is in stats->declined; nothing is wrong: use the generic
 * path). A file that does not hash to `oid`, or is not `size` bytes,
 * declines too: the generic path then reports it. Returns 0, or
 * RS_ENOTFOUND / RS_EGENERIC when the file cannot be read or memory runs out.
 * `dict` (may be NULL) carries the shared dictionary in and out;
 * `stats` may be NULL.
 */
RS_MUST_CHECK
int rs_codec_encode_file(struct rs_buf *out, int *applies, const char *path, uint64_t size,
			 const struct rs_id *oid, struct rs_codec_dict *dict,
			 struct rs_codec_stats *stats);

/*
 * Decode container `p`/`len` and write the object, in order, to `write`.
 * At most `max_size` bytes are written: a container that would write more
 * is refused. Returns 0, RS_ECORRUPT (a damaged or hostile container),
 * RS_ENEWER (a container version above this build's), RS_EGENERIC
 * (out of memory) or the sink's code.
 */
RS_MUST_CHECK
int rs_codec_decode(const unsigned char *p, size_t len, uint64_t max_size,
		    rs_codec_write_fn write, void *ctx);

#endif
