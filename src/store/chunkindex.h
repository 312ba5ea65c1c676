/*
 * The chunk index: which chunks the remote already holds, and where, so
 * that a push asks the remote one listing per process rather than one
 * question per chunk.
 *
 * It is a cache of the remote's own pack indexes (packs/<id>.idx), kept in
 * a local folder and rebuilt from the remote whenever it is missing or
 * stale: nothing in it is authoritative. In memory it holds 16 bytes per
 * chunk (an 8-byte id prefix and where to find the full entry); a hit is
 * confirmed against the full 32-byte id in the cached .idx file.
 */
#ifndef RS_CHUNKINDEX_H
#define RS_CHUNKINDEX_H

#include "results/error.h"

#include <stddef.h>

#include "remote/remote.h"
#include "store/format.h"

struct rs_chunk_index;

/*
 * `dir` is the cache folder (created if missing); NULL keeps the index in
 * memory only. The index is the caller's (rs_chunk_index_free).
 */
RS_MUST_CHECK
int rs_chunk_index_open(struct rs_chunk_index **out, const char *dir);
void rs_chunk_index_free(struct rs_chunk_index *ix);

/*
 * Make the index match the remote: list packs/, fetch the .idx of every
 * pack not cached yet, and drop packs the remote no longer has (a garbage
 * collector removed them). A pack counts only when both its .pack and
 * .idx are listed.
 */
RS_MUST_CHECK
int rs_chunk_index_refresh(struct rs_chunk_index *ix, struct rs_remote *remote);

/* Record a pack this process wrote (its encoded .idx bytes). */
RS_MUST_CHECK
int rs_chunk_index_add(struct rs_chunk_index *ix, const struct rs_id *pack,
		       const unsigned char *idx, size_t len);

/* Forget a pack (it turned out to be gone from the remote). */
void rs_chunk_index_forget(struct rs_chunk_index *ix, const struct rs_id *pack);

/*
 * Where chunk `id` is stored: 0 and `*out`, or RS_ENOTFOUND.
 * Safe to call from several threads while no add/refresh/forget runs.
 */
RS_MUST_CHECK
int rs_chunk_index_lookup(struct rs_chunk_index *ix, const struct rs_id *id,
			  struct rs_chunk_ref *out);

/* Number of chunks and packs known. */
size_t rs_chunk_index_chunks(const struct rs_chunk_index *ix);
size_t rs_chunk_index_packs(const struct rs_chunk_index *ix);

#endif
