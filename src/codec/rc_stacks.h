/*
 * The stacks model (planned container version 7, docs/codec.md "Not done
 * yet"; measured in bench/stream_model.py, class Stacks): the records'
 * stacks coded one level at a time, the call tree folded in.
 *
 * The raw stream: a varint A (where the stream's thread frames start), a
 * varint T (their count), then per record a varint k (the frames it keeps
 * from the previous record's stack), a varint m and m frame ranks, each
 * below A + T. A base stream (the stacks of the run that made a base)
 * has the same syntax; a stream coded after it first runs the base's
 * records through the model, the base's thread slot t taken as the
 * stream's thread frame t.
 *
 * Internal to src/codec/.
 */
#ifndef RS_CODEC_RC_STACKS_H
#define RS_CODEC_RC_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "results/buf.h"
#include "results/error.h"

/*
 * Range-code the raw stacks stream `raw`/`len` into `out`, after the
 * base stream `base`/`base_len` (NULL, 0: none), walking at most
 * `max_levels` levels in all (a level: a record's frame, or its end; the
 * base's records count). Returns 0, 1 when the raw stream (or the base)
 * does not read as stacks or passes the model's caps (nothing is wrong:
 * store it another way), or an error.
 */
RS_MUST_CHECK int rs_stacks_pack(struct rs_buf *out, const unsigned char *raw, size_t len,
				 const unsigned char *base, size_t base_len, uint64_t max_levels);

/*
 * Decode `n` range-coded bytes at `p` into exactly `raw_len` bytes of raw
 * stacks stream at `raw` (allocated by the caller), after the base stream
 * (NULL, 0: none), walking at most `max_levels` levels as rs_stacks_pack.
 * Untrusted input: RS_ECORRUPT when the bytes do not code exactly that
 * much, the base is not a stacks stream or the levels pass `max_levels`;
 * RS_EGENERIC when memory runs out.
 */
RS_MUST_CHECK int rs_stacks_unpack(unsigned char *raw, size_t raw_len, const unsigned char *base, size_t base_len,
				   const unsigned char *p, size_t n, uint64_t max_levels);

/*
 * Whether `raw`/`len` reads as a raw stacks stream, without the model:
 * 0, its header's A and T in *a, *t, its records' count in *records and
 * their levels (each record's depth + 1) in *levels; 1 when it does not
 * (or in a form rs_stacks_unpack would not give back); or an error (out
 * of memory).
 */
RS_MUST_CHECK int rs_stacks_check(const unsigned char *raw, size_t len, uint64_t *a, uint64_t *t, uint64_t *records,
				  uint64_t *levels);

#endif
