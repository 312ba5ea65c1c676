#include "store/chunkindex.h"
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

	if (ix->nentries + n > ix->aentries) {
		size_t want = ix->aentries ? ix->aentries : 1024;
		struct entry *e;

		while (want < ix->nentries + n)
			want *= 2;
		e = realloc(ix->entries, want * sizeof(*e));
		if (!e)
			return rs_error_set(RS_EGENERIC, "out of memory");
		ix->entries = e;
		ix->aentries = want;
	}
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
	if (ix->npacks == ix->apacks) {
		size_t want = ix->apacks ? ix->apacks * 2 : 64;
		struct pack_slot *ps = realloc(ix->packs, want * sizeof(*ps));

		if (!ps) {
			free(refs);
			return rs_error_set(RS_EGENERIC, "out of memory");
		}
		ix->packs = ps;
		ix->apacks = want;
	}
	slot = &ix->packs[ix->npacks];
	memset(slot, 0, sizeof(*slot));
	slot->id = *pack;
	slot->live = 1;
	if (ix->dir) {
		if (write_cache) {
			struct rs_buf path = RS_BUF_INIT;

			err = cache_path(&path, ix, pack);
			if (!err)
				err = rs_fs_write_file_atomic(path.ptr, p, len);
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

static int push_id(struct rs_id **arr, size_t *n, size_t *alloc, const struct rs_id *id)
{
	if (*n == *alloc) {
		size_t want = *alloc ? *alloc * 2 : 64;
		struct rs_id *a = realloc(*arr, want * sizeof(**arr));

		if (!a)
			return rs_error_set(RS_EGENERIC, "out of memory");
		*arr = a;
		*alloc = want;
	}
	(*arr)[(*n)++] = *id;
	return 0;
}

/*
 * Collect "packs/<hex>.pack", "packs/<hex>.idx" (with its size) and
 * "packs/<hex>.quarantine"; ignore anything else.
 */
static int on_key(const char *key, uint64_t size, void *payload)
{
	struct listing *l = payload;
	size_t plen = strlen(RS_KEY_PACKS), klen = strlen(key);
	struct rs_id id;
	const char *hex = key + plen;

	if (klen < plen + RS_ID_HEXSZ || strncmp(key, RS_KEY_PACKS, plen) ||
	    rs_id_from_hex(&id, hex, RS_ID_HEXSZ)) {
		rs_error_clear();
		return 0;
	}
	if (!strcmp(hex + RS_ID_HEXSZ, ".pack"))
		return push_id(&l->packs, &l->n, &l->alloc, &id);
	if (!strcmp(hex + RS_ID_HEXSZ, ".quarantine"))
		return push_id(&l->quarantined, &l->nquar, &l->aquar, &id);
	if (!strcmp(hex + RS_ID_HEXSZ, ".idx")) {
		if (l->nidx == l->asizes) {
			size_t want = l->asizes ? l->asizes * 2 : 64;
			uint64_t *a = realloc(l->idx_sizes, want * sizeof(*a));

			if (!a)
				return rs_error_set(RS_EGENERIC, "out of memory");
			l->idx_sizes = a;
			l->asizes = want;
		}
		l->idx_sizes[l->nidx] = size;
		return push_id(&l->idxs, &l->nidx, &l->aidx, &id);
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

int rs_chunk_index_refresh(struct rs_chunk_index *ix, struct rs_remote *remote)
{
	struct listing l;
	struct rs_buf key = RS_BUF_INIT, bytes = RS_BUF_INIT, path = RS_BUF_INIT;
	size_t i;
	int err;

	memset(&l, 0, sizeof(l));
	rs_buf_init(&bytes, RS_IDX_MAX_SIZE);
	err = remote->list(remote, RS_KEY_PACKS, on_key, &l);
	if (err) {
		err = rs_error_wrap(err, "cannot list the packs on '%s'", remote->display_url);
		goto out;
	}
	if (l.n)
		qsort(l.packs, l.n, sizeof(*l.packs), id_cmp);
	if (l.nquar)
		qsort(l.quarantined, l.nquar, sizeof(*l.quarantined), id_cmp);
	/* Packs the remote no longer has, or has put in quarantine. */
	for (i = 0; i < ix->npacks; i++) {
		if (!ix->packs[i].live)
			continue;
		if (!l.n || !bsearch(&ix->packs[i].id, l.packs, l.n, sizeof(*l.packs), id_cmp) ||
		    (l.nquar && bsearch(&ix->packs[i].id, l.quarantined, l.nquar, sizeof(*l.quarantined), id_cmp)))
			rs_chunk_index_forget(ix, &ix->packs[i].id);
	}
	for (i = 0; i < l.nidx; i++) {
		const struct rs_id *pack = &l.idxs[i];
		int from_cache = 0;

		if (!l.n || !bsearch(pack, l.packs, l.n, sizeof(*l.packs), id_cmp))
			continue; /* .idx without its pack: an interrupted writer */
		if (l.nquar && bsearch(pack, l.quarantined, l.nquar, sizeof(*l.quarantined), id_cmp))
			continue; /* known damaged: never borrow from it */
		if (find_pack(ix, pack) >= 0)
			continue;
		rs_buf_clear(&bytes);
		if (ix->dir) {
			err = cache_path(&path, ix, pack);
			if (err)
				goto out;
			err = rs_fs_read_file(&bytes, path.ptr, RS_IDX_MAX_SIZE);
			from_cache = !err;
			rs_error_clear();
		}
		if (from_cache) {
			err = load_pack(ix, pack, (unsigned char *)bytes.ptr, bytes.len, 0);
			if (!err)
				continue;
			rs_buf_clear(&bytes); /* damaged cache file: fetch it again */
		}
		/*
		 * Exactly the listed size, into a buffer capped at it; an index
		 * larger than the format allows is damaged: skipped.
		 */
		if (l.idx_sizes[i] > RS_IDX_MAX_SIZE || l.idx_sizes[i] < RS_IDX_HEADER_SIZE + RS_ID_RAWSZ)
			continue;
		bytes.max = (size_t)l.idx_sizes[i];
		err = rs_key_idx(&key, pack);
		if (!err)
			err = remote->get(remote, key.ptr, 0, l.idx_sizes[i], &bytes);
		bytes.max = RS_IDX_MAX_SIZE;
		if (err == RS_ENOTFOUND) {
			err = 0; /* removed since the listing */
			continue;
		}
		if (!err)
			err = load_pack(ix, pack, (unsigned char *)bytes.ptr, bytes.len, 1);
		if (err == RS_ECORRUPT || err == RS_EUSAGE) {
			/*
			 * A damaged index (or an answer of another size than
			 * listed) only costs deduplication against its pack.
			 */
			rs_error_clear();
			err = 0;
			continue;
		}
		if (err)
			goto out;
	}
out:
	ensure_sorted(ix);
	free(l.packs);
	free(l.idxs);
	free(l.idx_sizes);
	free(l.quarantined);
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
		out->chunk = *id;
		out->pack = slot->id;
		out->offset = rs_get_le64(e + 32);
		out->raw_len = rs_get_le32(e + 40);
		out->stored_len = rs_get_le32(e + 44);
		out->codec = e[48];
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
