/*
 * The store on a folder remote: round trips, deduplication across
 * objects, and damage detection (a flipped or missing byte is never
 * handed out as data).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "remote/remote.h"
#include "store/cache.h"
#include "store/chunker.h"
#include "store/format.h"
#include "store/store.h"
#include "results/buf.h"
#include "results/error.h"
#include "util/fs.h"
#include "util/hash.h"

#include "store_fixture.h"

static int setup(void **state)
{
	return store_fixture_setup(state, "store", 0);
}

static int teardown(void **state)
{
	return store_fixture_teardown(state);
}

/* Session-like text: repeated frame strings with varying numbers. */
static void write_sample(const char *path, size_t n, uint64_t seed, size_t insert_at, size_t insert_len)
{
	static const char *frames[] = {
		"\"run\\u0000/model/src/sim.py\\u000035\\u0001l36\", ",
		"\"step\\u0000/model/src/core.py\\u0000317\\u0001cSimulation\\u0001l323\", ",
		"\"apply\\u0000/usr/lib/python3/dist-packages/pandas/core/frame.py\\u00009423\", ",
		"\"<listcomp>\\u0000/model/src/events.py\\u000088\\u0001l90\", ",
	};
	FILE *out = fopen(path, "wb");
	size_t written = 0;

	assert_non_null(out);
	while (written < n) {
		char num[64];
		uint64_t r = test_splitmix(&seed);
		int len;

		if (insert_len && written >= insert_at) {
			for (size_t i = 0; i < insert_len; i++)
				fputc('Z', out);
			written += insert_len;
			insert_len = 0;
		}
		len = fputs(frames[r % 4], out);
		assert_true(len >= 0);
		written += strlen(frames[r % 4]);
		len = snprintf(num, sizeof(num), "0.00%llu], ", (unsigned long long)(r >> 44));
		fputs(num, out);
		written += (size_t)len;
	}
	fclose(out);
}

static struct rs_store *open_store(struct store_fixture *f)
{
	struct rs_store_options o = { 0 };
	struct rs_store *s = NULL;

	o.cache_dir = f->cache_dir;
	o.threads = 2;
	assert_int_equal(rs_store_open(&s, f->remote, &o), 0);
	return s;
}

static void path_in(char *out, size_t n, const struct store_fixture *f, const char *name)
{
	snprintf(out, n, "%s/%s", f->dir, name);
}

/* A sample file in the fixture's folder, with its id and size. */
struct sample {
	char path[400];
	struct rs_id oid;
	uint64_t size;
};

/* `name` in the fixture's folder made a sample (write_sample's bytes). */
static void make_sample(struct sample *x, const struct store_fixture *f, const char *name, size_t n,
			uint64_t seed, size_t insert_at, size_t insert_len)
{
	path_in(x->path, sizeof(x->path), f, name);
	write_sample(x->path, n, seed, insert_at, insert_len);
	test_file_id(x->path, &x->oid, &x->size);
}

/* Samples a and b, b being a with `len` bytes inserted at `at`; a put by
 * a store handle that is closed again: what a later process finds. */
static void put_first_of_pair(struct store_fixture *f, struct sample *a, struct sample *b, size_t n,
			      uint64_t seed, size_t at, size_t len)
{
	struct rs_store *s = open_store(f);

	make_sample(a, f, "a.pyisession", n, seed, 0, 0);
	make_sample(b, f, "b.pyisession", n, seed, at, len);
	assert_int_equal(rs_store_put_file(s, &a->oid, a->size, a->path, NULL, NULL, NULL), 0);
	rs_store_free(s);
}

/* `x` comes back from the store byte for byte (as b.out). */
static void assert_gets_back(struct store_fixture *f, struct rs_store *s, const struct sample *x)
{
	char out[400];

	path_in(out, sizeof(out), f, "b.out");
	assert_int_equal(rs_store_get_file(s, &x->oid, x->size, out, NULL, NULL), 0);
	assert_true(test_files_equal(x->path, out));
}

static void test_round_trip_and_idempotent_push(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store *s = open_store(f);
	struct rs_store_put_stats st;
	char src[400], dst[400];
	struct rs_id oid;
	uint64_t size;

	path_in(src, sizeof(src), f, "a.pyisession");
	path_in(dst, sizeof(dst), f, "a.out");
	write_sample(src, 6u << 20, 1, 0, 0);
	test_file_id(src, &oid, &size);

	assert_int_equal(rs_store_has(s, &oid), RS_ENOTFOUND);
	assert_int_equal(rs_store_put_file(s, &oid, size, src, NULL, NULL, &st), 0);
	assert_false(st.already_present);
	print_message("%llu chunks, %llu bytes stored of %llu\n", (unsigned long long)st.chunks,
		      (unsigned long long)st.bytes_stored, (unsigned long long)size);
	assert_true(st.chunks >= 2);
	assert_int_equal(st.chunks_new, st.chunks);
	assert_true(st.bytes_stored < size / 4); /* compressed */
	assert_int_equal(rs_store_has(s, &oid), 0);

	assert_int_equal(rs_store_get_file(s, &oid, size, dst, NULL, NULL), 0);
	assert_true(test_files_equal(src, dst));
	{
		/* Files get the mode open(2) gives (a shared folder's team reads them). */
		struct stat sb;
		mode_t mask = umask(022);

		umask(mask);
		assert_int_equal(stat(dst, &sb), 0);
		assert_int_equal(sb.st_mode & 0777, 0666 & ~mask);
	}

	/* Pushing the same object again sends nothing. */
	assert_int_equal(rs_store_put_file(s, &oid, size, src, NULL, NULL, &st), 0);
	assert_true(st.already_present);
	assert_int_equal(st.bytes_stored, 0);
	rs_store_free(s);
}

static void test_empty_object(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store *s = open_store(f);
	char src[400], dst[400];
	struct rs_id oid;
	uint64_t size;
	FILE *fp;

	path_in(src, sizeof(src), f, "empty");
	path_in(dst, sizeof(dst), f, "empty.out");
	fp = fopen(src, "wb");
	assert_non_null(fp);
	fclose(fp);
	test_file_id(src, &oid, &size);
	assert_int_equal(size, 0);
	assert_int_equal(rs_store_put_file(s, &oid, size, src, NULL, NULL, NULL), 0);
	assert_int_equal(rs_store_get_file(s, &oid, size, dst, NULL, NULL), 0);
	assert_true(test_files_equal(src, dst));
	rs_store_free(s);
}

static void test_dedup_across_objects_and_processes(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store *s2;
	struct rs_store_put_stats st;
	struct sample a, b;

	put_first_of_pair(f, &a, &b, 24u << 20, 5, 12u << 20, 300);

	/* A new store handle, as a later agent process: learns from the remote. */
	s2 = open_store(f);
	assert_int_equal(rs_store_put_file(s2, &b.oid, b.size, b.path, NULL, NULL, &st), 0);
	assert_true(st.chunks >= 5);
	assert_true(st.chunks_new <= 3); /* only the chunks around the insertion */
	assert_gets_back(f, s2, &b);
	rs_store_free(s2);
}

/* Apply `fn` (unless NULL) to every file of the remote's packs/ with the suffix; count them. */
static int for_each_pack(struct store_fixture *f, const char *suffix, void (*fn)(const char *))
{
	char dir[400], path[800];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/packs", f->remote_dir);
	d = opendir(dir);
	if (!d && !fn)
		return 0; /* only counting, and nothing was ever stored */
	assert_non_null(d);
	for (e = readdir(d); e; e = readdir(d)) {
		size_t len = strlen(e->d_name);

		if (len > strlen(suffix) && !strcmp(e->d_name + len - strlen(suffix), suffix)) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			if (fn)
				fn(path);
			n++;
		}
	}
	closedir(d);
	return n;
}

static void flip_middle_byte(const char *path)
{
	FILE *fp = fopen(path, "r+b");
	long n;
	int c;

	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	fseek(fp, n / 2, SEEK_SET);
	c = fgetc(fp);
	fseek(fp, n / 2, SEEK_SET);
	fputc(c ^ 0x20, fp);
	fclose(fp);
}

static void truncate_half(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(truncate(path, st.st_size / 2), 0);
}

static void remove_file(const char *path)
{
	assert_int_equal(unlink(path), 0);
}

static void check_damage_detected(struct store_fixture *f, void (*damage)(const char *), const char *says)
{
	struct rs_store *s = open_store(f);
	char src[400], dst[400];
	struct rs_id oid;
	uint64_t size;

	path_in(src, sizeof(src), f, "a.pyisession");
	path_in(dst, sizeof(dst), f, "a.out");
	write_sample(src, 3u << 20, 9, 0, 0);
	test_file_id(src, &oid, &size);
	assert_int_equal(rs_store_put_file(s, &oid, size, src, NULL, NULL, NULL), 0);
	assert_true(for_each_pack(f, ".pack", damage) >= 1);

	rs_error_clear();
	assert_int_equal(rs_store_get_file(s, &oid, size, dst, NULL, NULL), RS_ECORRUPT);
	if (!strstr(rs_error_message(), says))
		fail_msg("'%s' does not say '%s'", rs_error_message(), says);
	/* The pack is at fault, not the manifest: no advice to delete it. */
	assert_null(strstr(rs_error_message(), "delete 'objects/"));
	assert_non_null(strstr(rs_error_message(), "packs/"));
	assert_false(rs_fs_exists(dst)); /* no partial file */
	rs_store_free(s);
}

static void test_flipped_byte_in_pack_detected(void **state)
{
	check_damage_detected(*state, flip_middle_byte, "is damaged: its chunk");
}

static void test_truncated_pack_detected(void **state)
{
	check_damage_detected(*state, truncate_half, "the manifest points past the end of pack");
}

static void test_missing_pack_detected(void **state)
{
	check_damage_detected(*state, remove_file, "is missing from");
}

static void test_wrong_content_stores_nothing(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store *s = open_store(f);
	char src[400], key[400];
	struct rs_id oid;
	uint64_t size;
	int packs = 0;
	DIR *d;

	path_in(src, sizeof(src), f, "a.pyisession");
	write_sample(src, 1u << 20, 3, 0, 0);
	test_file_id(src, &oid, &size);
	oid.id[0] ^= 1; /* git-lfs hashed other bytes than the file now holds */
	assert_int_equal(rs_store_put_file(s, &oid, size, src, NULL, NULL, NULL), RS_ECORRUPT);
	assert_int_equal(rs_store_has(s, &oid), RS_ENOTFOUND);
	snprintf(key, sizeof(key), "%s/packs", f->remote_dir);
	d = opendir(key);
	if (d) {
		struct dirent *e;

		for (e = readdir(d); e; e = readdir(d))
			packs += e->d_name[0] != '.';
		closedir(d);
	}
	assert_int_equal(packs, 0);
	/* And a size that does not match is refused before reading. */
	test_file_id(src, &oid, &size);
	assert_int_equal(rs_store_put_file(s, &oid, size + 1, src, NULL, NULL, NULL), RS_ECORRUPT);
	rs_store_free(s);
}

static void test_missing_object(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store *s = open_store(f);
	struct rs_id oid;
	char dst[400];

	memset(&oid, 0xab, sizeof(oid));
	path_in(dst, sizeof(dst), f, "none.out");
	assert_int_equal(rs_store_get_file(s, &oid, 10, dst, NULL, NULL), RS_ENOTFOUND);
	assert_non_null(strstr(rs_error_message(), "not on the remote"));
	assert_false(rs_fs_exists(dst));
	rs_store_free(s);
}

/* A pack known to the index vanishes (garbage collected): the push re-uploads. */
static void test_vanished_pack_is_reuploaded(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store *s = open_store(f);
	struct rs_store_put_stats st;
	struct sample a, b;
	struct rs_buf key = RS_BUF_INIT;

	make_sample(&a, f, "a.pyisession", 8u << 20, 11, 0, 0);
	make_sample(&b, f, "b.pyisession", 8u << 20, 11, 4u << 20, 50);
	assert_int_equal(rs_store_put_file(s, &a.oid, a.size, a.path, NULL, NULL, &st), 0);
	/* The collector removes a's manifest and packs while s still knows them. */
	assert_int_equal(rs_key_manifest(&key, &a.oid), 0);
	assert_int_equal(f->remote->del(f->remote, key.ptr), 0);
	assert_true(for_each_pack(f, ".idx", remove_file) >= 1);
	assert_true(for_each_pack(f, ".pack", remove_file) >= 1);
	assert_int_equal(rs_store_put_file(s, &b.oid, b.size, b.path, NULL, NULL, &st), 0);
	assert_int_equal(st.chunks_new, st.chunks);
	assert_gets_back(f, s, &b);
	rs_buf_release(&key);
	rs_store_free(s);
}

/*
 * A remote that fails on purpose: it passes everything to the folder
 * remote except the first `fail_puts` puts whose key starts with
 * `fail_prefix`, which fail as a dropped connection would.
 */
struct faulty_remote {
	struct rs_remote parent;
	struct rs_remote *inner;
	const char *fail_prefix;
	int fail_puts;
	int puts;
	int streams;           /* put_stream calls that got a sealed file */
	int sealed_cancels;    /* streams cancelled after their seal */
	int uncapped_gets;     /* gets into a buffer without a cap */
	int pack_extra;        /* > 0: pack reads answer that many bytes more; < 0: fewer */
	pthread_mutex_t lock;  /* streams run on the store's threads */
};

static int faulty_get(struct rs_remote *r, const char *key, uint64_t off, uint64_t len, struct rs_buf *out)
{
	struct faulty_remote *f = (struct faulty_remote *)r;
	int err;

	pthread_mutex_lock(&f->lock);
	f->uncapped_gets += out->max == 0;
	pthread_mutex_unlock(&f->lock);
	err = f->inner->get(f->inner, key, off, len, out);
	if (err || !f->pack_extra || !strstr(key, ".pack"))
		return err;
	/* A lying server: it adds bytes (a buffer's cap refuses them), or drops some. */
	if (f->pack_extra == -1000) {
		out->len = 0;
		return rs_error_set(RS_ECORRUPT, "the answer ended early");
	}
	if (f->pack_extra > 0)
		return rs_buf_put(out, "xxxxxxxx", (size_t)f->pack_extra);
	out->len -= (size_t)-f->pack_extra;
	return 0;
}

static int faulty_fail(struct faulty_remote *f, const char *key)
{
	int fail;

	pthread_mutex_lock(&f->lock);
	f->puts++;
	fail = f->fail_puts > 0 && !strncmp(key, f->fail_prefix, strlen(f->fail_prefix));
	if (fail)
		f->fail_puts--;
	pthread_mutex_unlock(&f->lock);
	return fail ? rs_error_set(RS_ERETRY, "injected failure writing '%s'", key) : 0;
}

static int faulty_put_file(struct rs_remote *r, const char *key, const char *path)
{
	struct faulty_remote *f = (struct faulty_remote *)r;

	return faulty_fail(f, key) ? rs_error_last() : f->inner->put_file(f->inner, key, path);
}

static int faulty_put_buf(struct rs_remote *r, const char *key, const void *p, size_t n)
{
	struct faulty_remote *f = (struct faulty_remote *)r;

	return faulty_fail(f, key) ? rs_error_last() : f->inner->put_buf(f->inner, key, p, n);
}

/*
 * A streaming backend's contract, simply: follow the file as it grows,
 * store nothing when the writer cancels, and store it whole once sealed.
 */
static int faulty_put_stream(struct rs_remote *r, const char *key, struct rs_growing *g)
{
	struct faulty_remote *f = (struct faulty_remote *)r;
	uint64_t avail = 0;
	int sealed = 0, err;

	do {
		err = rs_growing_wait(g, avail + 1, &avail, &sealed);
		if (err) {
			/* A store that seals and then gives up has shown a pack. */
			pthread_mutex_lock(&f->lock);
			f->sealed_cancels += sealed;
			pthread_mutex_unlock(&f->lock);
			return err;
		}
	} while (!sealed);
	if (faulty_fail(f, key))
		return rs_error_last();
	pthread_mutex_lock(&f->lock);
	f->streams++;
	pthread_mutex_unlock(&f->lock);
	return f->inner->put_file(f->inner, key, rs_growing_path(g));
}

static int faulty_stat(struct rs_remote *r, const char *key, uint64_t *size)
{
	struct faulty_remote *f = (struct faulty_remote *)r;

	return f->inner->stat(f->inner, key, size);
}

static int faulty_list(struct rs_remote *r, const char *prefix, rs_remote_list_cb cb, void *payload)
{
	struct faulty_remote *f = (struct faulty_remote *)r;

	return f->inner->list(f->inner, prefix, cb, payload);
}

static void faulty_init(struct faulty_remote *f, struct rs_remote *inner, const char *prefix, int fails)
{
	memset(f, 0, sizeof(*f));
	f->parent.version = RS_REMOTE_VERSION;
	f->parent.get = faulty_get;
	f->parent.put_file = faulty_put_file;
	f->parent.put_buf = faulty_put_buf;
	f->parent.stat = faulty_stat;
	f->parent.list = faulty_list;
	f->parent.display_url = inner->display_url;
	f->inner = inner;
	f->fail_prefix = prefix;
	f->fail_puts = fails;
	pthread_mutex_init(&f->lock, NULL);
}

/* A push cut off before its manifest: the retry sends only the manifest. */
static void test_retry_after_interruption_sends_only_what_is_missing(void **state)
{
	struct store_fixture *f = *state;
	struct faulty_remote faulty;
	struct rs_store_options o = { 0 };
	struct rs_store_put_stats st;
	struct rs_store *s = NULL, *s2 = NULL;
	char src[400], dst[400];
	struct rs_id oid;
	uint64_t size;

	path_in(src, sizeof(src), f, "a.pyisession");
	path_in(dst, sizeof(dst), f, "a.out");
	write_sample(src, 10u << 20, 23, 0, 0);
	test_file_id(src, &oid, &size);
	faulty_init(&faulty, f->remote, "objects/", 2);
	o.cache_dir = f->cache_dir;
	assert_int_equal(rs_store_open(&s, &faulty.parent, &o), 0);

	assert_int_equal(rs_store_put_file(s, &oid, size, src, NULL, NULL, &st), RS_ERETRY);
	assert_int_equal(rs_store_has(s, &oid), RS_ENOTFOUND); /* not half there */
	assert_true(st.chunks_new >= 3);

	/* Retried in the same agent process. */
	assert_int_equal(rs_store_put_file(s, &oid, size, src, NULL, NULL, &st), RS_ERETRY);
	assert_int_equal(st.chunks_new, 0);

	/* And by a new process, which learns the packs from the remote. */
	assert_int_equal(rs_store_open(&s2, &faulty.parent, &o), 0);
	faulty.puts = 0;
	assert_int_equal(rs_store_put_file(s2, &oid, size, src, NULL, NULL, &st), 0);
	assert_int_equal(st.chunks_new, 0);
	assert_int_equal(st.bytes_stored, 0);
	assert_int_equal(faulty.puts, 1); /* the manifest alone */
	assert_int_equal(rs_store_get_file(s2, &oid, size, dst, NULL, NULL), 0);
	assert_true(test_files_equal(src, dst));
	rs_store_free(s);
	rs_store_free(s2);
}

/*
 * A remote that streams (put_stream): packs go through it, not put_file;
 * a stream that fails fails the push with its message and leaves no
 * object; the retry completes it; and an object whose bytes do not match
 * its oid leaves no pack at all (its only pack is cancelled, never sealed).
 */
static void test_streaming_remote(void **state)
{
	struct store_fixture *f = *state;
	struct faulty_remote faulty;
	struct rs_store_options o = { 0 };
	struct rs_store_put_stats st;
	struct rs_store *s = NULL;
	char src[400], dst[400], other[400];
	struct rs_id oid, bad;
	uint64_t size, bad_size;
	int packs;

	path_in(src, sizeof(src), f, "a.pyisession");
	path_in(dst, sizeof(dst), f, "a.out");
	path_in(other, sizeof(other), f, "b.pyisession");
	write_sample(src, 10u << 20, 29, 0, 0);
	test_file_id(src, &oid, &size);
	faulty_init(&faulty, f->remote, "packs/", 1);
	faulty.parent.put_stream = faulty_put_stream;
	o.cache_dir = f->cache_dir;
	assert_int_equal(rs_store_open(&s, &faulty.parent, &o), 0);

	assert_int_equal(rs_store_put_file(s, &oid, size, src, NULL, NULL, &st), RS_ERETRY);
	assert_non_null(strstr(rs_error_message(), "injected failure writing 'packs/"));
	assert_int_equal(rs_store_has(s, &oid), RS_ENOTFOUND);
	assert_int_equal(for_each_pack(f, ".idx", NULL), 0);

	assert_int_equal(rs_store_put_file(s, &oid, size, src, NULL, NULL, &st), 0);
	assert_true(faulty.streams >= 1);
	assert_int_equal(for_each_pack(f, ".pack", NULL), faulty.streams);
	assert_int_equal(rs_store_get_file(s, &oid, size, dst, NULL, NULL), 0);
	assert_true(test_files_equal(src, dst));

	/* The file changed since git-lfs hashed it: no new pack shows. */
	write_sample(other, 1u << 20, 31, 0, 0);
	test_file_id(other, &bad, &bad_size);
	bad.id[0] ^= 1;
	packs = for_each_pack(f, ".pack", NULL);
	assert_int_equal(rs_store_put_file(s, &bad, bad_size, other, NULL, NULL, &st), RS_ECORRUPT);
	assert_true(st.chunks_new >= 1);
	assert_int_equal(for_each_pack(f, ".pack", NULL), packs);
	assert_int_equal(faulty.sealed_cancels, 0);
	rs_store_free(s);
	pthread_mutex_destroy(&faulty.lock);
}

struct racer {
	struct store_fixture *f;
	const char *src;
	struct rs_id oid;
	uint64_t size;
	int err;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	struct rs_store_options o = { 0 };
	struct rs_store *s = NULL;

	o.cache_dir = NULL;
	r->err = rs_store_open(&s, r->f->remote, &o);
	if (!r->err)
		r->err = rs_store_put_file(s, &r->oid, r->size, r->src, NULL, NULL, NULL);
	rs_store_free(s);
	return NULL;
}

/* Only the .idx is gone (a collector marked the pack): do not borrow it. */
static void test_marked_pack_is_not_borrowed(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store *s = open_store(f);
	struct rs_store_put_stats st;
	struct sample a, b;

	make_sample(&a, f, "a.pyisession", 8u << 20, 17, 0, 0);
	make_sample(&b, f, "b.pyisession", 8u << 20, 17, 6u << 20, 50);
	assert_int_equal(rs_store_put_file(s, &a.oid, a.size, a.path, NULL, NULL, &st), 0);
	assert_true(for_each_pack(f, ".idx", remove_file) >= 1);
	assert_int_equal(rs_store_put_file(s, &b.oid, b.size, b.path, NULL, NULL, &st), 0);
	assert_int_equal(st.chunks_new, st.chunks);
	rs_store_free(s);
}

static void test_two_writers_at_once(void **state)
{
	struct store_fixture *f = *state;
	struct racer r[2];
	pthread_t t[2];
	char src[400], dst[400];
	struct rs_store *s;
	int i;

	path_in(src, sizeof(src), f, "a.pyisession");
	path_in(dst, sizeof(dst), f, "a.out");
	write_sample(src, 5u << 20, 13, 0, 0);
	for (i = 0; i < 2; i++) {
		r[i].f = f;
		r[i].src = src;
		test_file_id(src, &r[i].oid, &r[i].size);
		assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(r[i].err, 0);
	}
	s = open_store(f);
	assert_int_equal(rs_store_get_file(s, &r[0].oid, r[0].size, dst, NULL, NULL), 0);
	assert_true(test_files_equal(src, dst));
	rs_store_free(s);
}

/* Append `n` bytes of `byte`, or of noise when byte < 0, to `path`. */
static void append_bytes(const char *path, size_t n, int byte, uint64_t seed)
{
	FILE *out = fopen(path, "ab");

	assert_non_null(out);
	while (n--)
		fputc(byte >= 0 ? byte : (int)(test_splitmix(&seed) & 0xff), out);
	fclose(out);
}

static struct rs_store *open_store_threads(struct store_fixture *f, int threads)
{
	struct rs_store_options o = { 0 };
	struct rs_store *s = NULL;

	o.cache_dir = f->cache_dir;
	o.threads = threads;
	assert_int_equal(rs_store_open(&s, f->remote, &o), 0);
	return s;
}

struct progress_log {
	uint64_t last, total, stop_after;
	int calls;
};

static int log_progress(uint64_t done, uint64_t total, void *payload)
{
	struct progress_log *p = payload;

	assert_true(done > p->last || (done == 0 && total == 0));
	p->last = done;
	p->total = total;
	p->calls++;
	return p->stop_after && done >= p->stop_after ? 42 : 0;
}

/*
 * However the put reads the file (it cuts what it has read and carries a
 * cut-less tail over to its next buffer), the chunks must be the ones the
 * chunker gives over the whole file in one buffer: ids, and so
 * deduplication, depend on it. Session text, forced max_size cuts in a
 * zero run, and noise, over several of the put's buffers.
 */
static void test_chunks_are_cut_as_in_one_buffer(void **state)
{
	struct store_fixture *f = *state;
	struct rs_chunker c;
	struct rs_buf whole = RS_BUF_INIT, key = RS_BUF_INIT, mbytes = RS_BUF_INIT;
	char src[400];
	struct rs_id oid;
	uint64_t size;
	int threads;

	path_in(src, sizeof(src), f, "a.pyisession");
	write_sample(src, 20u << 20, 23, 0, 0);
	append_bytes(src, (17u << 20) + 5, 0, 0);
	append_bytes(src, 5u << 20, -1, 3);
	test_file_id(src, &oid, &size);
	assert_int_equal(rs_fs_read_file(&whole, src, 1u << 30), 0);
	assert_int_equal(rs_chunker_init(&c, RS_CHUNK_MIN, RS_CHUNK_AVG, RS_CHUNK_MAX), 0);
	assert_int_equal(rs_key_manifest(&key, &oid), 0);

	for (threads = 1; threads <= 4; threads *= 2) {
		struct rs_store *s = open_store_threads(f, threads);
		struct progress_log log = { 0 };
		struct rs_manifest m;
		size_t off = 0, n = 0;

		assert_int_equal(rs_store_put_file(s, &oid, size, src, log_progress, &log, NULL), 0);
		assert_int_equal(log.last, size);
		assert_int_equal(log.total, size);
		rs_buf_clear(&mbytes);
		assert_int_equal(f->remote->get(f->remote, key.ptr, 0, UINT64_MAX, &mbytes), 0);
		assert_int_equal(rs_manifest_parse(&m, &oid, (unsigned char *)mbytes.ptr, mbytes.len), 0);
		while (off < whole.len) {
			size_t avail = whole.len - off < c.max_size ? whole.len - off : c.max_size;
			size_t len = rs_chunker_next(&c, (unsigned char *)whole.ptr + off, avail);
			struct rs_id id;

			rs_sha256(&id, whole.ptr + off, len);
			assert_true(n < m.nchunks);
			assert_int_equal(m.chunks[n].raw_len, len);
			assert_int_equal(rs_id_cmp(&m.chunks[n].chunk, &id), 0);
			off += len;
			n++;
		}
		assert_int_equal(n, m.nchunks);
		assert_int_equal(log.calls, (int)n);
		print_message("%d thread(s): %zu chunks as in one buffer\n", threads, n);
		rs_manifest_release(&m);
		/* The next round stores it again from scratch. */
		assert_int_equal(f->remote->del(f->remote, key.ptr), 0);
		rs_store_free(s);
	}
	rs_buf_release(&whole);
	rs_buf_release(&key);
	rs_buf_release(&mbytes);
}

/* A progress callback's refusal stops the put mid-way, and nothing is committed. */
static void test_progress_abort_stores_nothing(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store *s = open_store(f);
	struct progress_log log = { 0 };
	char src[400];
	struct rs_id oid;
	uint64_t size;

	path_in(src, sizeof(src), f, "a.pyisession");
	write_sample(src, 40u << 20, 29, 0, 0);
	test_file_id(src, &oid, &size);
	log.stop_after = 10u << 20;
	assert_int_equal(rs_store_put_file(s, &oid, size, src, log_progress, &log, NULL), 42);
	assert_true(log.last >= log.stop_after && log.last < size);
	assert_int_equal(rs_store_has(s, &oid), RS_ENOTFOUND);
	rs_store_free(s);
}


/* Store a 1 MiB sample as "a"; its oid and size. */
static void put_sample(struct store_fixture *f, struct rs_store *s, struct rs_id *oid, uint64_t *size)
{
	char src[400];

	path_in(src, sizeof(src), f, "a.pyisession");
	write_sample(src, 1u << 20, 21, 0, 0);
	test_file_id(src, oid, size);
	assert_int_equal(rs_store_put_file(s, oid, *size, src, NULL, NULL, NULL), 0);
}

/* Read, change (by `edit`) and rewrite the manifest of `oid`, as a hostile store would. */
static void edit_manifest(struct store_fixture *f, const struct rs_id *oid,
			  void (*edit)(struct rs_manifest *m, void *arg), void *arg)
{
	struct rs_buf key = RS_BUF_INIT, path = RS_BUF_INIT, bytes = RS_BUF_INIT;
	struct rs_manifest m;

	assert_int_equal(rs_key_manifest(&key, oid), 0);
	assert_int_equal(rs_fs_join(&path, f->remote_dir, key.ptr), 0);
	assert_int_equal(rs_fs_read_file(&bytes, path.ptr, 1u << 24), 0);
	assert_int_equal(rs_manifest_parse(&m, oid, (unsigned char *)bytes.ptr, bytes.len), 0);
	edit(&m, arg);
	assert_int_equal(rs_manifest_encode(&bytes, &m), 0);
	assert_int_equal(rs_fs_write_file_atomic(path.ptr, bytes.ptr, bytes.len), 0);
	rs_manifest_release(&m);
	rs_buf_release(&key);
	rs_buf_release(&path);
	rs_buf_release(&bytes);
}

/* The first chunk, `*(uint32_t *)arg` times: sizes made to add up. */
static void repeat_first_chunk(struct rs_manifest *m, void *arg)
{
	uint32_t i, n = *(uint32_t *)arg;
	struct rs_chunk_ref *c = calloc(n, sizeof(*c));

	assert_non_null(c);
	for (i = 0; i < n; i++)
		c[i] = m->chunks[0];
	free(m->chunks);
	m->chunks = c;
	m->nchunks = n;
	m->size = m->transformed_size = (uint64_t)n * c[0].raw_len;
}

static void offset_past_pack(struct rs_manifest *m, void *arg)
{
	(void)arg;
	m->chunks[m->nchunks - 1].offset += 1u << 30;
}

/* Nothing but the store's own files in `dir`: no temporary left behind. */
static int entries_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	for (e = readdir(d); e; e = readdir(d))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * A manifest that repeats one chunk many times (a few KB on the remote
 * that would rebuild gigabytes) is refused before anything is written,
 * when its size is not the one the pointer gives; the message blames the
 * pointer, not the store, and does not advise deleting the manifest.
 */
static void test_hostile_manifest_refused_before_writing(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store *s = open_store(f);
	char outdir[400], dst[420];
	struct rs_id oid;
	uint64_t size;
	uint32_t times = 4000;

	put_sample(f, s, &oid, &size);
	path_in(outdir, sizeof(outdir), f, "out");
	assert_int_equal(mkdir(outdir, 0700), 0);
	snprintf(dst, sizeof(dst), "%s/a", outdir);
	edit_manifest(f, &oid, repeat_first_chunk, &times);
	rs_error_clear();
	assert_int_equal(rs_store_get_file(s, &oid, size, dst, NULL, NULL), RS_ECORRUPT);
	if (!strstr(rs_error_message(), "the repository's pointer for object"))
		fail_msg("unexpected: %s", rs_error_message());
	assert_non_null(strstr(rs_error_message(), "the store is fine"));
	assert_null(strstr(rs_error_message(), "objects/"));
	assert_int_equal(entries_in(outdir), 0); /* not even a temporary file */
	rs_store_free(s);
}

/* An offset past the end of its pack: named as such, not "truncated". */
static void test_offset_past_pack(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store *s = open_store(f);
	char dst[400];
	struct rs_id oid;
	uint64_t size;

	put_sample(f, s, &oid, &size);
	path_in(dst, sizeof(dst), f, "a.out");
	edit_manifest(f, &oid, offset_past_pack, NULL);
	assert_int_equal(rs_store_get_file(s, &oid, size, dst, NULL, NULL), RS_ECORRUPT);
	if (!strstr(rs_error_message(), "the manifest points past the end of pack 'packs/"))
		fail_msg("unexpected: %s", rs_error_message());
	assert_null(strstr(rs_error_message(), "truncated"));
	assert_false(rs_fs_exists(dst));
	rs_store_free(s);
}

/*
 * Every read the store makes goes into a capped buffer, and a server
 * that answers with more or fewer bytes than asked is a transfer fault
 * (retry), not damage.
 */
static void test_reads_are_capped_and_exact(void **state)
{
	struct store_fixture *f = *state;
	struct faulty_remote faulty;
	struct rs_store_options o = { 0 };
	struct rs_store *s = NULL;
	char src[400], dst[400];
	struct rs_id oid;
	uint64_t size;

	faulty_init(&faulty, f->remote, "", 0);
	o.cache_dir = f->cache_dir;
	o.threads = 2;
	path_in(src, sizeof(src), f, "a.pyisession");
	path_in(dst, sizeof(dst), f, "a.out");
	write_sample(src, 1u << 20, 22, 0, 0);
	test_file_id(src, &oid, &size);
	/* A first push fills the store; a second process reads its indexes. */
	assert_int_equal(rs_store_open(&s, &faulty.parent, &o), 0);
	assert_int_equal(rs_store_put_file(s, &oid, size, src, NULL, NULL, NULL), 0);
	rs_store_free(s);
	o.cache_dir = NULL;
	assert_int_equal(rs_store_open(&s, &faulty.parent, &o), 0);
	write_sample(src, 1u << 20, 22, 5000, 100);
	{
		struct rs_id other;
		uint64_t osize;

		test_file_id(src, &other, &osize);
		assert_int_equal(rs_store_put_file(s, &other, osize, src, NULL, NULL, NULL), 0);
	}
	assert_int_equal(rs_store_check_format(s), 0);
	assert_int_equal(rs_store_get_file(s, &oid, size, dst, NULL, NULL), 0);
	assert_int_equal(faulty.uncapped_gets, 0);
	unlink(dst);

	faulty.pack_extra = 3;
	assert_int_equal(rs_store_get_file(s, &oid, size, dst, NULL, NULL), RS_ERETRY);
	if (!strstr(rs_error_message(), "with more bytes: a transfer fault"))
		fail_msg("unexpected: %s", rs_error_message());
	assert_false(rs_fs_exists(dst));
	faulty.pack_extra = -1;
	assert_int_equal(rs_store_get_file(s, &oid, size, dst, NULL, NULL), RS_ERETRY);
	if (!strstr(rs_error_message(), "with fewer bytes: a transfer fault"))
		fail_msg("unexpected: %s", rs_error_message());
	assert_false(rs_fs_exists(dst));
	/* A backend that says "short" of a pack that holds the bytes: not damage either. */
	faulty.pack_extra = -1000;
	assert_int_equal(rs_store_get_file(s, &oid, size, dst, NULL, NULL), RS_ERETRY);
	if (!strstr(rs_error_message(), "(the answer ended early): a transfer fault"))
		fail_msg("unexpected: %s", rs_error_message());
	assert_false(rs_fs_exists(dst));
	rs_store_free(s);
}


/* Count the files in the remote's packs/ whose names end in `suffix`. */
static int count_packs(struct store_fixture *f, const char *suffix)
{
	char dir[400];
	DIR *d;
	struct dirent *e;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/packs", f->remote_dir);
	d = opendir(dir);
	assert_non_null(d);
	for (e = readdir(d); e; e = readdir(d)) {
		size_t l = strlen(e->d_name), k = strlen(suffix);

		n += l > k && !strcmp(e->d_name + l - k, suffix);
	}
	closedir(d);
	return n;
}

static void quarantine_pack(const char *pack_path)
{
	char q[600];
	FILE *fp;

	snprintf(q, sizeof(q), "%.*s.quarantine", (int)(strlen(pack_path) - strlen(".pack")), pack_path);
	fp = fopen(q, "w");
	assert_non_null(fp);
	fclose(fp);
}

/*
 * A pack in quarantine (packs/<id>.quarantine, as the damage message
 * advises) is never borrowed from: a push sharing its chunks stores them
 * anew, in this process (whose index knew the pack) and in a new one.
 */
static void test_quarantined_pack_is_not_borrowed(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store *s2;
	struct rs_store_put_stats st;
	struct sample a, b;

	put_first_of_pair(f, &a, &b, 16u << 20, 31, 8u << 20, 50);
	assert_int_equal(for_each_pack(f, ".pack", quarantine_pack), 1);
	s2 = open_store(f); /* its cache knows the pack: quarantine overrides it */
	assert_int_equal(rs_store_put_file(s2, &b.oid, b.size, b.path, NULL, NULL, &st), 0);
	assert_true(st.chunks >= 5);
	assert_int_equal(st.chunks_new, st.chunks);
	assert_true(count_packs(f, ".pack") >= 2);
	assert_gets_back(f, s2, &b);
	rs_store_free(s2);
}

static void fifo_instead(const char *path)
{
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
}

static void on_alarm(int sig)
{
	(void)sig;
	/* A read blocked on a FIFO: the defect under test. */
	fprintf(stderr, "blocked on a FIFO in the store\n");
	_exit(1);
}

/*
 * A pack, or FORMAT, that is a FIFO blocked open() forever: the folder
 * backend opens with O_NONBLOCK and refuses anything but a regular
 * file, naming the key. An alarm turns a hang into a failure.
 */
static void test_fifo_in_store_refused(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store *s = open_store(f);
	struct rs_buf b = RS_BUF_INIT;
	char dst[400], path[400];
	struct rs_id oid;
	uint64_t size;

	signal(SIGALRM, on_alarm);
	alarm(20);
	put_sample(f, s, &oid, &size);
	path_in(dst, sizeof(dst), f, "a.out");
	assert_int_equal(for_each_pack(f, ".pack", fifo_instead), 1);
	assert_int_equal(rs_store_get_file(s, &oid, size, dst, NULL, NULL), RS_ECORRUPT);
	if (!strstr(rs_error_message(), "is not a regular file (a FIFO)"))
		fail_msg("unexpected: %s", rs_error_message());
	assert_non_null(strstr(rs_error_message(), "packs/"));
	assert_false(rs_fs_exists(dst));
	rs_store_free(s);

	snprintf(path, sizeof(path), "%s/FORMAT", f->remote_dir);
	fifo_instead(path);
	assert_int_equal(f->remote->get(f->remote, "FORMAT", 0, UINT64_MAX, &b), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "'FORMAT'"));
	/* A symlink in the store is not followed either. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	assert_int_equal(f->remote->get(f->remote, "FORMAT", 0, UINT64_MAX, &b), RS_ECORRUPT);
	assert_non_null(strstr(rs_error_message(), "symbolic link"));
	assert_int_equal(b.len, 0);
	alarm(0);
	rs_buf_release(&b);
}

/* The folder backend never returns more than its caller's buffer takes. */
static void test_folder_get_honours_cap(void **state)
{
	struct store_fixture *f = *state;
	struct rs_buf b = RS_BUF_INIT;

	assert_int_equal(f->remote->put_buf(f->remote, "objects/big", "0123456789", 10), 0);
	rs_buf_init(&b, 4);
	assert_int_equal(f->remote->get(f->remote, "objects/big", 0, UINT64_MAX, &b), RS_ETOOBIG);
	assert_non_null(strstr(rs_error_message(), "more than the 4 expected"));
	assert_int_equal(b.len, 0);
	assert_int_equal(f->remote->get(f->remote, "objects/big", 2, 4, &b), 0);
	assert_int_equal(b.len, 4);
	assert_memory_equal(b.ptr, "2345", 4);
	rs_buf_release(&b);
}

/*
 * Opening a folder remote for reading creates nothing: a mistyped path
 * reads as a remote without a store, with the one message for it; the
 * first put creates the folder.
 */
static void test_missing_folder_not_created(void **state)
{
	struct store_fixture *f = *state;
	struct rs_remote *r = NULL;
	struct rs_store *s = NULL;
	char path[400];
	struct rs_id oid;
	uint64_t size;

	path_in(path, sizeof(path), f, "typo");
	assert_int_equal(rs_remote_open(&r, path, NULL), 0);
	assert_false(rs_fs_exists(path));
	assert_int_equal(rs_store_open(&s, r, NULL), 0);
	assert_int_equal(rs_store_check_format(s), RS_ENOTFOUND);
	if (!strstr(rs_error_message(), "holds no results store (no FORMAT file): check results.remote"))
		fail_msg("unexpected: %s", rs_error_message());
	assert_false(rs_fs_exists(path));
	rs_store_free(s);
	rs_remote_free(r);
	/* A missing parent is an error at once, and still nothing is created. */
	path_in(path, sizeof(path), f, "no/such/store");
	assert_int_equal(rs_remote_open(&r, path, NULL), RS_EUSAGE);
	assert_non_null(strstr(rs_error_message(), "nor does its parent"));
	path_in(path, sizeof(path), f, "no");
	assert_false(rs_fs_exists(path));
	/* A push to a new folder creates it. */
	path_in(path, sizeof(path), f, "new-store");
	assert_int_equal(rs_remote_open(&r, path, NULL), 0);
	assert_int_equal(rs_store_open(&s, r, NULL), 0);
	{
		char src[400];

		path_in(src, sizeof(src), f, "n.pyisession");
		write_sample(src, 100000, 41, 0, 0);
		test_file_id(src, &oid, &size);
		assert_int_equal(rs_store_put_file(s, &oid, size, src, NULL, NULL, NULL), 0);
	}
	assert_int_equal(rs_store_has(s, &oid), 0);
	rs_store_free(s);
	rs_remote_free(r);
}

/* A folder store's stale temporary files go at the first put; live ones stay. */
static void test_folder_removes_stale_tmp(void **state)
{
	struct store_fixture *f = *state;
	struct rs_store *s = open_store(f);
	char stale[440], fresh[440], packs[400];
	struct timespec old[2] = { { 0, 0 }, { 0, 0 } };
	FILE *fp;
	struct rs_id oid;
	uint64_t size;

	snprintf(packs, sizeof(packs), "%s/packs", f->remote_dir);
	assert_int_equal(rs_fs_mkdir_p(packs, 0777), 0);
	snprintf(stale, sizeof(stale), "%s/x.pack.tmp-AbC123", packs);
	snprintf(fresh, sizeof(fresh), "%s/y.pack.tmp-AbC124", packs);
	fp = fopen(stale, "w");
	fclose(fp);
	fp = fopen(fresh, "w");
	fclose(fp);
	old[0].tv_sec = old[1].tv_sec = time(NULL) - 7200;
	assert_int_equal(utimensat(AT_FDCWD, stale, old, 0), 0);
	put_sample(f, s, &oid, &size);
	assert_false(rs_fs_exists(stale));
	assert_true(rs_fs_exists(fresh));
	rs_store_free(s);
}

/* A 10-minute-old pack-XXXXXX in the cache's tmp/, put by a store opened with `grace`. */
static int cache_tmp_survives(struct store_fixture *f, long grace, const char *name)
{
	struct rs_store_options o = { 0 };
	struct rs_store *s = NULL;
	struct rs_buf dir = RS_BUF_INIT;
	struct timespec old[2] = { { 0, 0 }, { 0, 0 } };
	char path[600], src[400];
	struct rs_id oid;
	uint64_t size;
	FILE *fp;
	int survives;

	o.cache_dir = f->cache_dir;
	o.threads = 2;
	o.tmp_grace = grace;
	assert_int_equal(rs_store_open(&s, f->remote, &o), 0);
	assert_int_equal(rs_store_cache_folder(&dir, f->cache_dir, f->remote->display_url), 0);
	assert_int_equal(rs_buf_puts(&dir, "/tmp"), 0);
	assert_int_equal(rs_fs_mkdir_p(dir.ptr, 0700), 0);
	snprintf(path, sizeof(path), "%s/%s", dir.ptr, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fclose(fp);
	old[0].tv_sec = old[1].tv_sec = time(NULL) - 600;
	assert_int_equal(utimensat(AT_FDCWD, path, old, 0), 0);
	/* A new object each time: a put of one already there writes nothing. */
	path_in(src, sizeof(src), f, name);
	write_sample(src, 1u << 20, (uint64_t)grace + 1, 0, 0);
	test_file_id(src, &oid, &size);
	assert_int_equal(rs_store_put_file(s, &oid, size, src, NULL, NULL, NULL), 0);
	survives = rs_fs_exists(path);
	unlink(path);
	rs_store_free(s);
	rs_buf_release(&dir);
	return survives;
}

/* The cache's grace period is the caller's (results.tmpGracePeriod), not the environment's. */
static void test_cache_grace_is_a_parameter(void **state)
{
	struct store_fixture *f = *state;

	setenv("RESULTS_TMP_GRACE", "1", 1); /* read by no library code */
	assert_true(cache_tmp_survives(f, 0, "pack-Keep01"));   /* the default: one hour */
	assert_false(cache_tmp_survives(f, 60, "pack-Gone01")); /* a minute */
	unsetenv("RESULTS_TMP_GRACE");
}

/*
 * A write that fails (the disk full, here the file size limit) names the
 * file it was writing, so the user knows which disk to free.
 */
static void test_write_failure_names_the_path(void **state)
{
	struct store_fixture *f = *state;
	struct rlimit old, small;
	char want[400], *big;
	int err;

	big = calloc(1, 100000);
	assert_non_null(big);
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = old;
	small.rlim_cur = 4096;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	err = f->remote->put_buf(f->remote, "objects/big", big, 100000);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_not_equal(err, 0);
	snprintf(want, sizeof(want), "cannot write '%s/objects/big.tmp-", f->remote_dir);
	if (!strstr(rs_error_message(), want))
		fail_msg("'%s' does not name the file", rs_error_message());
	snprintf(want, sizeof(want), "%s/objects", f->remote_dir);
	assert_int_equal(rs_fs_remove_stale(want, rs_fs_is_tmp_name, 0), 0); /* none left */
	free(big);
}
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip_and_idempotent_push, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_object, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dedup_across_objects_and_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flipped_byte_in_pack_detected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated_pack_detected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_pack_detected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_content_stores_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_object, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vanished_pack_is_reuploaded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_marked_pack_is_not_borrowed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_retry_after_interruption_sends_only_what_is_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_two_writers_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_streaming_remote, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunks_are_cut_as_in_one_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_progress_abort_stores_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_manifest_refused_before_writing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offset_past_pack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reads_are_capped_and_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quarantined_pack_is_not_borrowed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_in_store_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_folder_get_honours_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_folder_not_created, setup, teardown),
		cmocka_unit_test_setup_teardown(test_folder_removes_stale_tmp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_grace_is_a_parameter, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_failure_names_the_path, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
