#include "store/chunkindex.h"
#include "util/array.h"
#include "results/error.h"
#include "util/fs.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pack_slot {
	struct rs_id id;
	unsigned char *bytes; /* in-memory index only */
	size_t len;
	int live;
};

struct entry {
	uint64_t prefix;
	uint32_t pack;  /* slot in packs[] */
	uint32_t entry; /* position in that pack's .idx */
};

struct rs_chunk_index {
	char *dir;
	struct pack_slot *packs;
	size_t npacks, apacks;
	struct entry *entries;
	size_t nentries, aentries;
	int sorted;
};

static uint64_t prefix_of(const struct rs_id *id)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++)
		v = v << 8 | id->id[i];
	return v;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->prefix < y->prefix ? -1 : x->prefix > y->prefix;
}

int rs_chunk_index_open(struct rs_chunk_index **out, const char *dir)
{
	struct rs_chunk_index *ix = calloc(1, sizeof(*ix));
	int err;

	if (!ix)
		return rs_error_set(RS_EGENERIC, "out of memory");
	if (dir) {
		err = rs_fs_mkdir_p(dir, 0777);
		if (err) {
			free(ix);
			return err;
		}
		ix->dir = strdup(dir);
	}
	ix->sorted = 1;
	*out = ix;
	return 0;
}

void rs_chunk_index_free(struct rs_chunk_index *ix)
{
	size_t i;

	if (!ix)
		return;
	for (i = 0; i < ix->npacks; i++)
		free(ix->packs[i].bytes);
	free(ix->packs);
	free(ix->entries);
	free(ix->dir);
	free(ix);
}

static int cache_path(struct rs_buf *out, const struct rs_chunk_index *ix, const struct rs_id *pack)
{
	char hex[RS_ID_HEXSZ + 1];

	rs_id_to_hex(hex, pack);
	rs_buf_clear(out);
	return rs_buf_printf(out, "%s/%s.idx", ix->dir, hex);
}

static long find_pack(const struct rs_chunk_index *ix, const struct rs_id *pack)
{
	size_t i;

	for (i = 0; i < ix->npacks; i++)
		if (!rs_id_cmp(&ix->packs[i].id, pack))
			return (long)i;
	return -1;
}

static void ensure_sorted(struct rs_chunk_index *ix)
{
	if (!ix->sorted && ix->nentries) {
		qsort(ix->entries, ix->nentries, sizeof(*ix->entries), entry_cmp);
		ix->sorted = 1;
	}
}

/* Add the entries of a parsed, verified .idx as pack slot `slot`. */
static int add_entries(struct rs_chunk_index *ix, uint32_t slot,
		       const struct rs_chunk_ref *refs, size_t n)
{
	size_t i;
	int err;

	err = rs_array_grow(&ix->entries, &ix->aentries, ix->nentries + n, sizeof(*ix->entries), 64);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		struct entry *e = &ix->entries[ix->nentries++];

		e->prefix = prefix_of(&refs[i].chunk);
		e->pack = slot;
		e->entry = (uint32_t)i;
	}
	ix->sorted = 0;
	return 0;
}

/*
 * Load the verified index bytes of `pack`: remember them (in memory, or
 * in the cache folder) and add their entries.
 */
static int load_pack(struct rs_chunk_index *ix, const struct rs_id *pack,
		     const unsigned char *p, size_t len, int write_cache)
{
	struct rs_chunk_ref *refs = NULL;
	struct pack_slot *slot;
	size_t n = 0;
	int err;

	if (find_pack(ix, pack) >= 0)
		return 0;
	err = rs_idx_parse(&refs, &n, pack, p, len);
	if (err)
		return err;
	err = rs_array_grow(&ix->packs, &ix->apacks, ix->npacks + 1, sizeof(*ix->packs), 64);
	if (err) {
		free(refs);
		return err;
	}
	slot = &ix->packs[ix->npacks];
	memset(slot, 0, sizeof(*slot));
	slot->id = *pack;
	slot->live = 1;
	if (ix->dir) {
		if (write_cache) {
			struct rs_buf path = RS_BUF_INIT;

			err = cache_path(&path, ix, pack);
			/* not fsynced: load_cached parses the copy (its trailer
			   hash) and fetches a damaged one again */
			if (!err)
				err = rs_fs_write_file_cache(path.ptr, p, len);
			rs_buf_release(&path);
		}
	} else {
		slot->bytes = malloc(len);
		if (!slot->bytes)
			err = rs_error_set(RS_EGENERIC, "out of memory");
		else
			memcpy(slot->bytes, p, len);
		slot->len = len;
	}
	if (!err)
		err = add_entries(ix, (uint32_t)ix->npacks, refs, n);
	if (!err)
		ix->npacks++;
	else
		free(slot->bytes);
	free(refs);
	return err;
}

int rs_chunk_index_add(struct rs_chunk_index *ix, const struct rs_id *pack,
		       const unsigned char *idx, size_t len)
{
	int err = load_pack(ix, pack, idx, len, 1);

	ensure_sorted(ix);
	return err;
}

struct listing {
	struct rs_id *packs;
	size_t n, alloc;
	struct rs_id *idxs;
	size_t nidx, aidx;
	uint64_t *idx_sizes; /* as listed, beside idxs */
	size_t asizes;
	struct rs_id *quarantined;
	size_t nquar, aquar;
};

/*
 * Collect "packs/<hex>.pack", "packs/<hex>.idx" (with its size) and
 * "packs/<hex>.quarantine"; ignore anything else.
 */
static int on_key(const char *key, uint64_t size, void *payload)
{
	struct listing *l = payload;
	struct rs_id id;

	if (!rs_key_parse(key, RS_KEY_PACKS, ".pack", &id))
		return rs_array_push_id(&l->packs, &l->n, &l->alloc, &id);
	if (!rs_key_parse(key, RS_KEY_PACKS, ".quarantine", &id))
		return rs_array_push_id(&l->quarantined, &l->nquar, &l->aquar, &id);
	if (!rs_key_parse(key, RS_KEY_PACKS, ".idx", &id)) {
		int err = rs_array_grow(&l->idx_sizes, &l->asizes, l->nidx + 1, sizeof(*l->idx_sizes), 64);

		if (err)
			return err;
		l->idx_sizes[l->nidx] = size;
		return rs_array_push_id(&l->idxs, &l->nidx, &l->aidx, &id);
	}
	return 0;
}

static int id_cmp(const void *a, const void *b)
{
	return rs_id_cmp(a, b);
}

/* Rebuild entries from the live packs only (after packs were dropped). */
static void compact(struct rs_chunk_index *ix)
{
	size_t i, j = 0;

	for (i = 0; i < ix->nentries; i++)
		if (ix->packs[ix->entries[i].pack].live)
			ix->entries[j++] = ix->entries[i];
	ix->nentries = j;
}

/* Whether sorted `ids` (n of them) hold `id`. */
static int has_id(const struct rs_id *ids, size_t n, const struct rs_id *id)
{
	return n && bsearch(id, ids, n, sizeof(*ids), id_cmp);
}

static void listing_release(struct listing *l)
{
	free(l->packs);
	free(l->idxs);
	free(l->idx_sizes);
	free(l->quarantined);
}

/* List packs/ into `l`, its packs and quarantine marks sorted. */
static int listing_take(struct listing *l, struct rs_remote *remote)
{
	int err = remote->list(remote, RS_KEY_PACKS, on_key, l);

	if (err)
		return rs_error_wrap(err, "cannot list the packs on '%s'", remote->display_url);
	if (l->n)
		qsort(l->packs, l->n, sizeof(*l->packs), id_cmp);
	if (l->nquar)
		qsort(l->quarantined, l->nquar, sizeof(*l->quarantined), id_cmp);
	return 0;
}

/* The cached copy of the .idx of `pack`, if it loads; 1 when it did. */
static int load_cached(struct rs_chunk_index *ix, const struct rs_id *pack, struct rs_buf *bytes,
		       struct rs_buf *path, int *loaded)
{
	int err;

	*loaded = 0;
	if (!ix->dir)
		return 0;
	err = cache_path(path, ix, pack);
	if (err)
		return err;
	rs_buf_clear(bytes);
	if (rs_fs_read_file(bytes, path->ptr, RS_IDX_MAX_SIZE)) {
		rs_error_clear(); /* not cached yet */
		return 0;
	}
	/* A damaged cache file is fetched again. */
	*loaded = !load_pack(ix, pack, (unsigned char *)bytes->ptr, bytes->len, 0);
	rs_error_clear();
	return 0;
}

/*
 * Fetch the .idx of `pack`, listed as `size` bytes: exactly that, into a
 * buffer capped at it. An index the format does not allow, one that is
 * damaged, or an answer of another size than listed, only costs
 * deduplication against its pack: skipped, as one removed since the
 * listing is.
 */
static int load_remote(struct rs_chunk_index *ix, struct rs_remote *remote, const struct rs_id *pack,
		       uint64_t size, struct rs_buf *bytes, struct rs_buf *key)
{
	int err;

	if (size > RS_IDX_MAX_SIZE || size < RS_IDX_HEADER_SIZE + RS_ID_RAWSZ)
		return 0;
	rs_buf_clear(bytes);
	bytes->max = (size_t)size;
	err = rs_key_idx(key, pack);
	if (!err)
		err = remote->get(remote, key->ptr, 0, size, bytes);
	bytes->max = RS_IDX_MAX_SIZE;
	if (!err)
		err = load_pack(ix, pack, (unsigned char *)bytes->ptr, bytes->len, 1);
	if (err == RS_ENOTFOUND || err == RS_ECORRUPT || err == RS_EUSAGE || err == RS_ETOOBIG ||
	    err == RS_EFORMAT || err == RS_ENEWER) {
		rs_error_clear();
		err = 0;
	}
	return err;
}

int rs_chunk_index_refresh(struct rs_chunk_index *ix, struct rs_remote *remote)
{
	struct listing l;
	struct rs_buf key = RS_BUF_INIT, bytes = RS_BUF_INIT, path = RS_BUF_INIT;
	size_t i;
	int err;

	memset(&l, 0, sizeof(l));
	rs_buf_init(&bytes, RS_IDX_MAX_SIZE);
	err = listing_take(&l, remote);
	if (err)
		goto out;
	/* Packs the remote no longer has, or has put in quarantine. */
	for (i = 0; i < ix->npacks; i++)
		if (ix->packs[i].live && (!has_id(l.packs, l.n, &ix->packs[i].id) ||
					  has_id(l.quarantined, l.nquar, &ix->packs[i].id)))
			rs_chunk_index_forget(ix, &ix->packs[i].id);
	for (i = 0; i < l.nidx; i++) {
		const struct rs_id *pack = &l.idxs[i];
		int cached;

		if (!has_id(l.packs, l.n, pack))
			continue; /* .idx without its pack: an interrupted writer */
		if (has_id(l.quarantined, l.nquar, pack))
			continue; /* known damaged: never borrow from it */
		if (find_pack(ix, pack) >= 0)
			continue;
		err = load_cached(ix, pack, &bytes, &path, &cached);
		if (!err && !cached)
			err = load_remote(ix, remote, pack, l.idx_sizes[i], &bytes, &key);
		if (err)
			goto out;
	}
out:
	ensure_sorted(ix);
	listing_release(&l);
	rs_buf_release(&key);
	rs_buf_release(&bytes);
	rs_buf_release(&path);
	return err;
}

void rs_chunk_index_forget(struct rs_chunk_index *ix, const struct rs_id *pack)
{
	long slot = find_pack(ix, pack);

	if (slot < 0 || !ix->packs[slot].live)
		return;
	ix->packs[slot].live = 0;
	if (ix->dir) {
		struct rs_buf path = RS_BUF_INIT;

		if (!cache_path(&path, ix, pack))
			unlink(path.ptr);
		rs_buf_release(&path);
	}
	compact(ix);
}

/* Read entry `n` of a pack's .idx, from memory or the cache file. */
static int read_entry(struct rs_chunk_index *ix, const struct pack_slot *slot, uint32_t n,
		      unsigned char e[RS_IDX_ENTRY_SIZE])
{
	size_t off = RS_IDX_HEADER_SIZE + (size_t)n * RS_IDX_ENTRY_SIZE;
	struct rs_buf path = RS_BUF_INIT;
	int fd, err;

	if (!ix->dir) {
		if (off + RS_IDX_ENTRY_SIZE > slot->len)
			return rs_error_set(RS_ECORRUPT, "chunk index entry out of range");
		memcpy(e, slot->bytes + off, RS_IDX_ENTRY_SIZE);
		return 0;
	}
	err = cache_path(&path, ix, &slot->id);
	if (err)
		return err;
	fd = open(path.ptr, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		err = rs_error_errno(RS_ENOTFOUND, "cached pack index '%s' vanished", path.ptr);
	else {
		err = rs_fs_pread_all(fd, e, RS_IDX_ENTRY_SIZE, off);
		close(fd);
	}
	rs_buf_release(&path);
	return err;
}

int rs_chunk_index_lookup(struct rs_chunk_index *ix, const struct rs_id *id,
			  struct rs_chunk_ref *out)
{
	uint64_t prefix = prefix_of(id);
	size_t lo = 0, hi = ix->nentries, i;

	assert(ix->sorted); /* add, refresh and forget sort before returning */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->entries[mid].prefix < prefix)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < ix->nentries && ix->entries[i].prefix == prefix; i++) {
		const struct entry *en = &ix->entries[i];
		const struct pack_slot *slot = &ix->packs[en->pack];
		unsigned char e[RS_IDX_ENTRY_SIZE];

		if (!slot->live || read_entry(ix, slot, en->entry, e))
			continue;
		if (memcmp(e, id->id, RS_ID_RAWSZ))
			continue;
		rs_idx_entry_get(out, e, &slot->id);
		return 0;
	}
	return RS_ENOTFOUND;
}

size_t rs_chunk_index_chunks(const struct rs_chunk_index *ix)
{
	return ix->nentries;
}

size_t rs_chunk_index_packs(const struct rs_chunk_index *ix)
{
	size_t i, n = 0;

	for (i = 0; i < ix->npacks; i++)
		n += ix->packs[i].live;
	return n;
}
