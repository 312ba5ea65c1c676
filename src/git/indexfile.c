/*
 * .git/index spliced in place of a libgit2 load and write (indexfile.h
 * says why). The format is git's Documentation/gitformat-index.txt:
 *
 *   "DIRC", version, entry count (big-endian 32-bit)
 *   entries sorted by (path bytes, stage); in versions 2 and 3 each is
 *     62 bytes of stat data, id and flags (64 with v3's extended flags),
 *     the path, and 1 to 8 NUL bytes to a multiple of 8; in version 4
 *     the fixed part, then how many bytes of the previous path to drop
 *     (a varint), the rest of the path and one NUL
 *   extensions: a 4-byte signature (an upper-case first letter: optional,
 *     a reader may ignore it), a 32-bit size, the data
 *   the SHA-1 of everything before it.
 *
 * Reading is one pass over the mapped file that records where each entry
 * starts (4 bytes an entry, 1.2 MB at 300,000 entries) and checks every
 * length and the order against the file's bounds. Writing copies the runs
 * of entries between the changed paths as they are, writes the new
 * entries between them, rewrites the cache tree with the changed paths'
 * folders marked invalid (git's own cache_tree_invalidate_path: entry
 * count -1, no id), keeps the resolve-undo data, and hashes all of it.
 * The unchanged runs (of entries and of the cache tree) are written from
 * the map where they lie, never copied into memory of ours, and the
 * SHA-1 runs on a thread beside the writes (at 300,000 entries the two
 * are 40 MB each way). The old file is never written: the new one goes
 * to the lock, renamed over the index at the end.
 */
#include "git/indexfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "results/buf.h"
#include "util/array.h"
#include "util/fs.h"

#define HEADER_SIZE 12
#define TRAILER_SIZE 20   /* SHA-1 */
#define ENTRY_FIXED 62    /* stat data (40), id (20), flags (2) */
#define FLAG_EXTENDED 0x4000
#define FLAG_STAGE_SHIFT 12
#define NAME_MASK 0xfff
#define XFLAG_SKIP_WORKTREE 0x4000   /* of the extended flags (version 3) */
#define MODE_SPARSE_DIR 040000       /* a sparse directory entry: a tree */
#define CONE_FILE_MAX (1u << 20)     /* .git/info/sparse-checkout */
/* Offsets are 32-bit: git's own entry count and extension sizes are. */
#define INDEX_MAX 0xffffffffu
/* The cache tree is as deep as the paths; deeper is no tree git wrote. */
#define TREE_DEPTH_MAX 1024
/* Version 4's paths written out whole: more than this is no index of a clone. */
#define NAMES_MAX (1u << 30)

/*
 * The cone of a sparse checkout (git's cone mode, .git/info/sparse-checkout):
 * folders whose whole content is in it (recursive) and folders whose files
 * but not subfolders are (parents; the root always is). Names without
 * leading or trailing '/'.
 */
#define CONE_WHOLE 1     /* "/A/B/": A/B and all below it */
#define CONE_PARENT 2    /* an ancestor of such a folder: its files only */
#define CONE_NOT_BELOW 4 /* "!/A/B/ then star slash": A/B a parent only */
struct cone {
	char **dirs;
	unsigned char *how;       /* per dir: CONE_* bits */
	size_t n, alloc, halloc;
	int read, ok;             /* read: tried; ok: the patterns are cone mode */
};

struct rs_index_file {
	char *path, *lock_path, *spare_path;
	int lock_fd;              /* -1: not locked (or the lock was renamed) */
	int lock_reused;          /* the lock is the spare's inode: its old bytes follow ours */
	const unsigned char *map; /* the file, or NULL for an empty index */
	size_t size;
	uint32_t version, count;
	uint32_t *offsets;        /* where entry i starts */
	char *names;              /* version 4: every path, NUL-terminated (else NULL) */
	size_t names_len, names_cap;
	uint32_t *name_at, *name_len;  /* version 4: entry i's path in `names` */
	size_t entries_end;       /* where the extensions start */
	size_t tree_off, tree_len;   /* TREE data (tree_len 0: none) */
	size_t reuc_off, reuc_len;   /* REUC data */
	int conflicts;
	int sparse;               /* an "sdir" extension: folders may be entries */
	uint32_t dirs;            /* sparse directory entries */
	struct cone cone;         /* read when sparse */
	struct stat stamp;        /* the mapped file's (st_ino 0: none mapped) */
};

static uint32_t get_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* The name of entry i and its length (checked by parse_entries). */
static const char *entry_name(const struct rs_index_file *f, size_t i, size_t *len)
{
	const unsigned char *e = f->map + f->offsets[i];

	if (f->names) {
		*len = f->name_len[i];
		return f->names + f->name_at[i];
	}
	unsigned flags = (unsigned)e[60] << 8 | e[61];
	const char *name = (const char *)e + ENTRY_FIXED + (flags & FLAG_EXTENDED ? 2 : 0);

	*len = (flags & NAME_MASK) < NAME_MASK ? (flags & NAME_MASK) : strlen(name);
	return name;
}

static int entry_stage(const struct rs_index_file *f, size_t i)
{
	return (f->map[f->offsets[i] + 60] >> (FLAG_STAGE_SHIFT - 8)) & 3;
}

/* git's order: path bytes (a prefix first), then stage. */
static int name_cmp(const char *a, size_t alen, int astage, const char *b, size_t blen,
		    int bstage)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c)
		return c;
	if (alen != blen)
		return alen < blen ? -1 : 1;
	return astage - bstage;
}

/* Is entry i a sparse directory entry (checked by parse_entries)? */
static int entry_is_dir(const struct rs_index_file *f, size_t i)
{
	return get_be32(f->map + f->offsets[i] + 24) == MODE_SPARSE_DIR;
}

/*
 * A sparse directory entry (git's sparse index): a path ending in '/',
 * mode 040000, the id of a tree, stage 0, skip-worktree. Anything else
 * with one of those marks is no entry git wrote.
 */
static int check_dir_entry(struct rs_index_file *f, uint32_t i, const unsigned char *e,
			   unsigned flags, const char *name, size_t len)
{
	uint32_t mode = get_be32(e + 24);
	unsigned xflags = flags & FLAG_EXTENDED ? (unsigned)e[62] << 8 | e[63] : 0;
	int is_dir = len && name[len - 1] == '/';

	if (!is_dir && mode != MODE_SPARSE_DIR)
		return 0;
	if (!is_dir)
		return rs_error_set(RS_ECORRUPT, "'%s': entry %u has the mode of a folder (040000) "
				    "but a path not ending in '/'", f->path, (unsigned)i + 1);
	if (mode != MODE_SPARSE_DIR)
		return rs_error_set(RS_ECORRUPT, "'%s': entry %u is a folder (its path ends in "
				    "'/') of mode %o, not 040000", f->path, (unsigned)i + 1,
				    (unsigned)mode);
	if (flags >> FLAG_STAGE_SHIFT & 3)
		return rs_error_set(RS_ECORRUPT, "'%s': entry %u is a folder at a merge stage",
				    f->path, (unsigned)i + 1);
	if (!(xflags & XFLAG_SKIP_WORKTREE))
		return rs_error_set(RS_ECORRUPT, "'%s': entry %u is a folder not marked "
				    "skip-worktree", f->path, (unsigned)i + 1);
	f->dirs++;
	return 0;
}

/*
 * git's variable-length number of version 4 (varint.c): 7 bits a byte,
 * most significant first, each continuation adding one. 0, and *used
 * bytes, or -1 when it runs past `avail` bytes or past 32 bits.
 */
static int get_varint(const unsigned char *p, size_t avail, uint64_t *out, size_t *used)
{
	uint64_t v;
	size_t i = 0;

	if (!avail)
		return -1;
	v = p[0] & 127;
	while (p[i] & 128) {
		if (++i >= avail || v >= (1u << 24))
			return -1;
		v = ((v + 1) << 7) | (p[i] & 127);
	}
	*out = v;
	*used = i + 1;
	return 0;
}

/* `v` as get_varint reads it into `buf` (10 bytes at most): its length. */
static size_t put_varint(uint64_t v, unsigned char *buf)
{
	unsigned char tmp[16];
	size_t pos = sizeof(tmp) - 1;

	tmp[pos] = v & 127;
	while (v >>= 7)
		tmp[--pos] = (unsigned char)(128 | (--v & 127));
	memcpy(buf, tmp + pos, sizeof(tmp) - pos);
	return sizeof(tmp) - pos;
}

/*
 * Entry i's path in version 4, at `p` (`avail` bytes to the end of the
 * entries): how many bytes of the previous path to drop, then the rest,
 * NUL-terminated, no padding. Written out whole into f->names; *size:
 * the bytes it took.
 */
static int parse_name_v4(struct rs_index_file *f, uint32_t i, const unsigned char *p,
			 size_t avail, size_t *size)
{
	size_t prev_len = i ? f->name_len[i - 1] : 0, used, slen, len;
	const unsigned char *nul;
	uint64_t strip;

	if (get_varint(p, avail, &strip, &used))
		return rs_error_set(RS_ECORRUPT, "'%s': entry %u has a bad path prefix length",
				    f->path, (unsigned)i + 1);
	if (strip > prev_len)
		return rs_error_set(RS_ECORRUPT, "'%s': entry %u drops more of the path before "
				    "it than it has", f->path, (unsigned)i + 1);
	nul = memchr(p + used, '\0', avail - used);
	if (!nul)
		return rs_error_set(RS_ECORRUPT, "'%s' ends inside a path", f->path);
	slen = (size_t)(nul - (p + used));
	len = prev_len - (size_t)strip + slen;
	if (len + 1 > NAMES_MAX - f->names_len)
		return rs_error_set(RS_ETOOBIG, "'%s' has paths too long to read", f->path);
	if (f->names_len + len + 1 > f->names_cap) {
		size_t cap = f->names_cap * 2 > f->names_len + len + 1 ? f->names_cap * 2
								 : f->names_len + len + 1;
		char *q = realloc(f->names, cap);

		if (!q)
			return rs_error_set(RS_EGENERIC, "out of memory");
		f->names = q;
		f->names_cap = cap;
	}
	if (i)
		memcpy(f->names + f->names_len, f->names + f->name_at[i - 1], prev_len - (size_t)strip);
	memcpy(f->names + f->names_len + prev_len - (size_t)strip, p + used, slen);
	f->names[f->names_len + len] = '\0';
	f->name_at[i] = (uint32_t)f->names_len;
	f->name_len[i] = (uint32_t)len;
	f->names_len += len + 1;
	*size = used + slen + 1;
	return 0;
}

/* Walk the entries: every length inside the file, names in order. */
static int parse_entries(struct rs_index_file *f)
{
	size_t off = HEADER_SIZE, end = f->size - TRAILER_SIZE;
	const char *prev = NULL;
	size_t prev_len = 0;
	int prev_stage = 0, err;

	if (f->count > (end - HEADER_SIZE) / (ENTRY_FIXED + 2))
		return rs_error_set(RS_ECORRUPT, "'%s' claims more entries than it holds", f->path);
	f->offsets = malloc((f->count ? f->count : 1) * sizeof(*f->offsets));
	if (!f->offsets)
		return rs_error_set(RS_EGENERIC, "out of memory");
	if (f->version == 4) {
		f->name_at = malloc((f->count ? f->count : 1) * sizeof(*f->name_at));
		f->name_len = malloc((f->count ? f->count : 1) * sizeof(*f->name_len));
		f->names_cap = f->size; /* a guess: the paths are about as long as the file */
		f->names = malloc(f->names_cap);
		if (!f->name_at || !f->name_len || !f->names)
			return rs_error_set(RS_EGENERIC, "out of memory");
	}
	for (uint32_t i = 0; i < f->count; i++) {
		const unsigned char *e = f->map + off;
		unsigned flags;
		size_t name_off, len, total = 0;
		const char *name;
		const unsigned char *nul;

		if (end - off < ENTRY_FIXED + 2)
			return rs_error_set(RS_ECORRUPT, "'%s' ends inside an entry", f->path);
		flags = (unsigned)e[60] << 8 | e[61];
		if ((flags & FLAG_EXTENDED) && f->version < 3)
			return rs_error_set(RS_ECORRUPT, "'%s' has extended flags in version 2",
					    f->path);
		name_off = ENTRY_FIXED + (flags & FLAG_EXTENDED ? 2 : 0);
		if (f->version == 4) {
			err = parse_name_v4(f, i, e + name_off, end - off - name_off, &total);
			if (err)
				return err;
			name = f->names + f->name_at[i];
			len = f->name_len[i];
			total += name_off;
			/* the previous name may have moved with the buffer */
			if (i)
				prev = f->names + f->name_at[i - 1];
		} else {
			name = (const char *)e + name_off;
			/* a length below the mask is the path's (git reads it so): only
			   its ends are looked at, not every byte; a longer one is measured */
			if ((flags & NAME_MASK) < NAME_MASK) {
				len = flags & NAME_MASK;
				nul = len < end - off - name_off ? (const unsigned char *)name + len
								 : NULL;
				/* past the path (into its padding) or short of its end */
				if (nul && (*nul || (len && name[len - 1] == '\0')))
					return rs_error_set(RS_ECORRUPT, "'%s' has a path of the "
							    "wrong length", f->path);
			} else {
				nul = memchr(name, '\0', end - off - name_off);
			}
			if (!nul)
				return rs_error_set(RS_ECORRUPT, "'%s' ends inside a path", f->path);
			len = (size_t)((const char *)nul - name);
			total = (name_off + len + 8) & ~(size_t)7;
			if (total > end - off)
				return rs_error_set(RS_ECORRUPT, "'%s' ends inside an entry", f->path);
		}
		if ((flags & NAME_MASK) < NAME_MASK ? len != (flags & NAME_MASK) : len < NAME_MASK)
			return rs_error_set(RS_ECORRUPT, "'%s' has a path of the wrong length",
					    f->path);
		if (prev && name_cmp(prev, prev_len, prev_stage, name, len,
				     (int)(flags >> FLAG_STAGE_SHIFT) & 3) >= 0)
			return rs_error_set(RS_ECORRUPT, "'%s' has entries out of order", f->path);
		/* nothing inside a sparse folder: the entries after it come after all it holds */
		if (prev && prev_len && prev[prev_len - 1] == '/' && len > prev_len &&
		    memcmp(prev, name, prev_len) == 0)
			return rs_error_set(RS_ECORRUPT, "'%s': entry %u is inside the folder of "
					    "entry %u", f->path, (unsigned)i + 1, (unsigned)i);
		err = check_dir_entry(f, i, e, flags, name, len);
		if (err)
			return err;
		f->offsets[i] = (uint32_t)off;
		prev = name;
		prev_len = len;
		prev_stage = (int)(flags >> FLAG_STAGE_SHIFT) & 3;
		if (prev_stage)
			f->conflicts = 1;
		off += total;
	}
	f->entries_end = off;
	return 0;
}

/*
 * The extensions: TREE and REUC kept, "sdir" (a sparse index) noted,
 * other optional ones dropped.
 */
static int parse_extensions(struct rs_index_file *f)
{
	size_t off = f->entries_end, end = f->size - TRAILER_SIZE;

	while (off < end) {
		const unsigned char *x = f->map + off;
		size_t len;

		if (end - off < 8)
			return rs_error_set(RS_ECORRUPT, "'%s' ends inside an extension", f->path);
		len = get_be32(x + 4);
		if (len > end - off - 8)
			return rs_error_set(RS_ECORRUPT, "'%s' ends inside an extension", f->path);
		if (memcmp(x, "sdir", 4) == 0) {
			f->sparse = 1; /* no data: folders may be entries */
			off += 8 + len;
			continue;
		}
		if (x[0] < 'A' || x[0] > 'Z')
			/* a split index ("link"), or newer */
			return rs_error_set(RS_EFORMAT, "'%s' has the extension '%.4s', which "
					    "must be understood to read it", f->path, (const char *)x);
		if (memcmp(x, "TREE", 4) == 0) {
			f->tree_off = off + 8;
			f->tree_len = len;
		} else if (memcmp(x, "REUC", 4) == 0) {
			f->reuc_off = off + 8;
			f->reuc_len = len;
		}
		off += 8 + len;
	}
	if (f->dirs && !f->sparse)
		return rs_error_set(RS_ECORRUPT, "'%s' has folder entries but no sparse-index "
				    "extension (sdir)", f->path);
	return 0;
}

/*
 * The spare (`<index>.results-spare`, see indexfile.h) taken as the lock:
 * linking it there is as exclusive as O_EXCL (EEXIST when the lock is
 * held). It is written in place only when it is a regular file with no
 * other name once the spare's is gone: never a symlink's target, never a
 * file linked from elsewhere, nor the live index. 1: locked with it;
 * 0: no spare to use (a new lock is made); -1: the lock is held (errno).
 */
static int take_spare(struct rs_index_file *f)
{
	struct stat st;
	int fd;

	if (link(f->spare_path, f->lock_path) != 0)
		return errno == EEXIST ? -1 : 0;
	fd = open(f->lock_path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	unlink(f->spare_path);
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1) {
		f->lock_fd = fd;
		f->lock_reused = 1;
		return 1;
	}
	if (fd >= 0)
		close(fd);
	unlink(f->lock_path); /* ours: the link made it */
	return 0;
}

static int take_lock(struct rs_index_file *f)
{
	int spare = take_spare(f);

	if (spare > 0)
		return 0;
	f->lock_reused = 0;
	f->lock_fd = spare < 0 ? -1
			       : open(f->lock_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (f->lock_fd >= 0)
		return 0;
	if (spare < 0 || errno == EEXIST)
		return rs_error_set(RS_ERETRY, "cannot write the index: '%s' exists (another git "
				    "command is running in this repository, or one was killed; "
				    "when none is running, remove that file)", f->lock_path);
	return rs_error_errno(RS_EGENERIC, "cannot create '%s'", f->lock_path);
}

static int map_index(struct rs_index_file *f)
{
	struct stat st;
	void *m;
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT)
			return 0; /* no index yet: an empty one */
		return rs_error_errno(RS_EGENERIC, "cannot open '%s'", f->path);
	}
	if (fstat(fd, &st) != 0) {
		close(fd);
		return rs_error_errno(RS_EGENERIC, "cannot read '%s'", f->path);
	}
	if (st.st_size < HEADER_SIZE + TRAILER_SIZE || (uint64_t)st.st_size > INDEX_MAX) {
		close(fd);
		return rs_error_set(st.st_size < HEADER_SIZE + TRAILER_SIZE ? RS_ECORRUPT
								: RS_ETOOBIG,
				    "'%s' has a size (%lld bytes) no index has", f->path,
				    (long long)st.st_size);
	}
#ifdef MAP_POPULATE
	/* every page is read: one call maps them all instead of a fault each */
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
#else
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
#endif
	close(fd);
	if (m == MAP_FAILED)
		return rs_error_errno(RS_EGENERIC, "cannot read '%s'", f->path);
	f->map = m;
	f->size = (size_t)st.st_size;
	f->stamp = st;
	return 0;
}

static int cone_load(struct rs_index_file *f);

/* Map and check the file (absent: empty). */
static int load(struct rs_index_file *f)
{
	int err = map_index(f);

	if (err || !f->map)
		return err;
	if (memcmp(f->map, "DIRC", 4) != 0)
		return rs_error_set(RS_ECORRUPT, "'%s' is not a git index", f->path);
	f->version = get_be32(f->map + 4);
	f->count = get_be32(f->map + 8);
	if (f->version < 2 || f->version > 4)
		return rs_error_set(RS_EFORMAT, "'%s' is an index of version %u", f->path,
				    (unsigned)f->version);
	err = parse_entries(f);
	if (err == 0)
		err = parse_extensions(f);
	if (err == 0 && f->sparse)
		err = cone_load(f);
	return err;
}

static void cone_release(struct cone *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->dirs[i]);
	free(c->dirs);
	free(c->how);
	memset(c, 0, sizeof(*c));
}

/* Folder `name` (`len` bytes) in the cone, with the bits `how`. */
static int cone_add(struct cone *c, const char *name, size_t len, unsigned char how)
{
	int err;

	for (size_t i = 0; i < c->n; i++)
		if (strlen(c->dirs[i]) == len && memcmp(c->dirs[i], name, len) == 0) {
			c->how[i] |= how;
			return 0;
		}
	err = rs_array_grow(&c->dirs, &c->alloc, c->n + 1, sizeof(*c->dirs), 8);
	if (err == 0)
		err = rs_array_grow(&c->how, &c->halloc, c->n + 1, sizeof(*c->how), 8);
	if (err)
		return err;
	c->dirs[c->n] = strndup(name, len);
	if (!c->dirs[c->n])
		return rs_error_set(RS_EGENERIC, "out of memory");
	c->how[c->n++] = how;
	return 0;
}

/* A folder wholly in the cone, and its ancestors as parents (as git adds them). */
static int cone_add_whole(struct cone *c, const char *name, size_t len)
{
	int err = cone_add(c, name, len, CONE_WHOLE);

	for (size_t i = 1; i < len && !err; i++)
		if (name[i] == '/')
			err = cone_add(c, name, i, CONE_PARENT);
	return err;
}

/* A folder name as cone mode writes it: no pattern characters, no empty part. */
static int cone_name_ok(const char *p, size_t len)
{
	if (!len || p[0] == '/' || p[len - 1] == '/')
		return 0;
	for (size_t i = 0; i < len; i++)
		if (p[i] == '*' || p[i] == '?' || p[i] == '[' || p[i] == '\\' ||
		    (p[i] == '/' && p[i + 1] == '/'))
			return 0;
	return 1;
}

/*
 * One line of the patterns, as git's cone mode writes them: the root's
 * two lines (slash star, and its negation with a trailing slash), a
 * folder ("/A/B/", wholly in the cone) and its negated subfolders
 * ("!/A/B/" then star and slash: A/B only a parent). *ok 0: a line of
 * no cone.
 */
static int cone_line(struct cone *c, const char *p, size_t len, int *ok)
{
	*ok = 1;
	if (len == 0 || p[0] == '#' || (len == 2 && memcmp(p, "/*", 2) == 0) ||
	    (len == 4 && memcmp(p, "!/*/", 4) == 0))
		return 0;
	if (len > 5 && memcmp(p, "!/", 2) == 0 && memcmp(p + len - 3, "/*/", 3) == 0 &&
	    cone_name_ok(p + 2, len - 5))
		return cone_add(c, p + 2, len - 5, CONE_NOT_BELOW);
	if (len > 2 && p[0] == '/' && p[len - 1] == '/' && cone_name_ok(p + 1, len - 2))
		return cone_add_whole(c, p + 1, len - 2);
	*ok = 0;
	return 0;
}

/*
 * The cone, from the sparse-checkout file beside the index (the
 * repository's, or a linked worktree's own): c->ok 0 when it is missing
 * or not cone mode.
 */
static int cone_load(struct rs_index_file *f)
{
	struct rs_buf path = RS_BUF_INIT, text = RS_BUF_INIT;
	const char *slash = strrchr(f->path, '/');
	size_t pos = 0;
	int err, ok = 1;

	f->cone.read = 1;
	err = rs_buf_printf(&path, "%.*sinfo/sparse-checkout",
			    slash ? (int)(slash - f->path + 1) : 0, f->path);
	if (err)
		goto out;
	err = rs_fs_read_file(&text, path.ptr, CONE_FILE_MAX);
	if (err) {
		rs_error_clear(); /* no cone to read: c->ok stays 0 */
		err = 0;
		goto out;
	}
	while (pos < text.len && ok && !err) {
		const char *line = text.ptr + pos;
		const char *nl = memchr(line, '\n', text.len - pos);
		size_t len = nl ? (size_t)(nl - line) : text.len - pos;

		pos += len + 1;
		while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
			len--;
		err = cone_line(&f->cone, line, len, &ok);
	}
	f->cone.ok = ok && !err && memchr(text.ptr ? text.ptr : "", '\0', text.len) == NULL;
out:
	rs_buf_release(&path);
	rs_buf_release(&text);
	return err;
}

/* -1: `dir` (len bytes) is not in the cone; 0: a parent; 1: wholly in it. */
static int cone_has(const struct cone *c, const char *dir, size_t len)
{
	for (size_t i = 0; i < c->n; i++)
		if (strlen(c->dirs[i]) == len && memcmp(c->dirs[i], dir, len) == 0)
			return (c->how[i] & CONE_WHOLE) && !(c->how[i] & CONE_NOT_BELOW);
	return -1;
}

static void unload(struct rs_index_file *f)
{
	if (f->map)
		munmap((void *)f->map, f->size);
	free(f->offsets);
	free(f->names);
	free(f->name_at);
	free(f->name_len);
	f->map = NULL;
	f->offsets = NULL;
	f->names = NULL;
	f->name_at = f->name_len = NULL;
	f->names_len = f->names_cap = 0;
	f->size = 0;
	f->version = 2;
	f->count = 0;
	f->entries_end = 0;
	f->tree_off = f->tree_len = f->reuc_off = f->reuc_len = 0;
	f->conflicts = 0;
	f->sparse = 0;
	f->dirs = 0;
	cone_release(&f->cone);
	memset(&f->stamp, 0, sizeof(f->stamp));
}

int rs_index_file_open(struct rs_index_file **out, const char *index_path, int lock)
{
	struct rs_index_file *f = calloc(1, sizeof(*f));
	struct rs_buf lp = RS_BUF_INIT;
	int err;

	*out = NULL;
	if (!f)
		return rs_error_set(RS_EGENERIC, "out of memory");
	f->lock_fd = -1;
	f->version = 2;
	f->path = strdup(index_path);
	err = f->path ? rs_buf_printf(&lp, "%s.lock", index_path)
		      : rs_error_set(RS_EGENERIC, "out of memory");
	if (err)
		goto out;
	f->lock_path = rs_buf_detach(&lp, NULL);
	err = rs_buf_printf(&lp, "%s.results-spare", index_path);
	if (err)
		goto out;
	f->spare_path = rs_buf_detach(&lp, NULL);
	if (lock) {
		err = take_lock(f);
		if (err)
			goto out;
	}
	err = load(f);
out:
	rs_buf_release(&lp);
	if (err) {
		rs_index_file_free(f);
		return err;
	}
	*out = f;
	return 0;
}

/* The same file as the one mapped (a rename makes a new inode)? */
static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

int rs_index_file_lock(struct rs_index_file *f)
{
	struct stat st;
	int err, present;

	if (f->lock_fd >= 0)
		return 0;
	err = take_lock(f);
	if (err)
		return err;
	present = stat(f->path, &st) == 0;
	if (!present && errno != ENOENT)
		return rs_error_errno(RS_EGENERIC, "cannot read '%s'", f->path);
	if (present ? f->map && same_file(&st, &f->stamp) : !f->map)
		return 0; /* unchanged since it was read */
	unload(f);
	return load(f);
}

void rs_index_file_free(struct rs_index_file *f)
{
	if (!f)
		return;
	if (f->lock_fd >= 0) {
		close(f->lock_fd);
		unlink(f->lock_path);
	}
	unload(f);
	free(f->path);
	free(f->lock_path);
	free(f->spare_path);
	free(f);
}

size_t rs_index_file_count(const struct rs_index_file *f)
{
	return f->count;
}

int rs_index_file_has_conflicts(const struct rs_index_file *f)
{
	return f->conflicts;
}

/* The first entry not before (path, stage 0). */
static size_t lower_bound(const struct rs_index_file *f, const char *path, size_t plen)
{
	size_t lo = 0, hi = f->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2, len;
		const char *name = entry_name(f, mid, &len);

		if (name_cmp(name, len, entry_stage(f, mid), path, plen, 0) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Entry i is `path` (any stage)? */
static int entry_is(const struct rs_index_file *f, size_t i, const char *path, size_t plen)
{
	size_t len;
	const char *name;

	if (i >= f->count)
		return 0;
	name = entry_name(f, i, &len);
	return len == plen && memcmp(name, path, plen) == 0;
}

int rs_index_file_find(const struct rs_index_file *f, const char *path, git_oid *id,
		       uint32_t *mode)
{
	size_t plen = strlen(path), i = lower_bound(f, path, plen);
	const unsigned char *e;

	if (!entry_is(f, i, path, plen) || entry_stage(f, i) != 0)
		return 0;
	e = f->map + f->offsets[i];
	if (id)
		git_oid_fromraw(id, e + 40);
	if (mode)
		*mode = get_be32(e + 24);
	return 1;
}

int rs_index_file_is_sparse(const struct rs_index_file *f)
{
	return f->sparse;
}

/* The sparse directory entry holding `path`, if any: the entry before its place. */
static int covering_dir(const struct rs_index_file *f, const char *path, size_t plen,
			size_t *at)
{
	size_t i = lower_bound(f, path, plen), len;
	const char *name;

	if (i == 0 || !entry_is_dir(f, i - 1))
		return 0;
	name = entry_name(f, i - 1, &len);
	if (len >= plen || memcmp(name, path, len) != 0)
		return 0;
	*at = i - 1;
	return 1;
}

/* Does any entry start with the `len` bytes of `prefix`? */
static int has_under(const struct rs_index_file *f, const char *prefix, size_t len)
{
	size_t i = lower_bound(f, prefix, len), nlen;
	const char *name;

	if (i >= f->count)
		return 0;
	name = entry_name(f, i, &nlen);
	return nlen >= len && memcmp(name, prefix, len) == 0;
}

/*
 * Where the index keeps `path` (see indexfile.h): *dir_len 0 for an
 * entry of its own, else the folder's length, *at the folder's entry or
 * (size_t)-1 when it is to be made.
 */
static int where(const struct rs_index_file *f, const char *path, size_t plen,
		 size_t *dir_len, size_t *at)
{
	size_t i, start = 0;

	*dir_len = 0;
	*at = (size_t)-1;
	if (!f->sparse)
		return 0;
	if (covering_dir(f, path, plen, &i)) {
		entry_name(f, i, dir_len);
		*at = i;
		return 0;
	}
	i = lower_bound(f, path, plen);
	if (entry_is(f, i, path, plen))
		return 0; /* an entry of its own (inside the cone, or expanded) */
	if (!f->cone.ok)
		return rs_error_set(RS_EFORMAT, "'%s' is a sparse index but the sparse-checkout "
				    "patterns beside it are not git's cone mode", f->path);
	/* the folders on the way: the first one outside the cone holds it */
	for (;;) {
		const char *slash = memchr(path + start, '/', plen - start);
		size_t dlen;
		int in;

		if (!slash)
			return 0; /* a file of a parent folder: in the cone */
		dlen = (size_t)(slash - path);
		in = cone_has(&f->cone, path, dlen);
		if (in > 0)
			return 0;
		start = dlen + 1;
		if (in == 0)
			continue;
		/* outside; a folder git has partly expanded is not collapsed here, only below */
		while (has_under(f, path, start)) {
			slash = memchr(path + start, '/', plen - start);
			if (!slash)
				return rs_error_set(RS_EFORMAT, "'%s': a file outside the sparse "
						    "checkout's cone in a folder git has "
						    "expanded", f->path);
			start = (size_t)(slash - path) + 1;
		}
		*dir_len = start;
		return 0;
	}
}

int rs_index_file_where(const struct rs_index_file *f, const char *path, size_t *dir_len,
			git_oid *dir_id)
{
	size_t at;
	int err = where(f, path, strlen(path), dir_len, &at);

	if (err)
		return err;
	if (dir_id) {
		memset(dir_id, 0, sizeof(*dir_id));
		if (at != (size_t)-1)
			git_oid_fromraw(dir_id, f->map + f->offsets[at] + 40);
	}
	return 0;
}

/* ---- writing ------------------------------------------------------------ */

/*
 * The new index as a list of pieces, written and hashed once it is
 * complete: runs of the old file, referenced where the map holds them
 * (nearly all of it: they are neither copied nor held twice), and the
 * few bytes made here (the header, new entries, the cache tree's
 * invalidated nodes) in `made`. A piece that continues the one before
 * (the next bytes of the map, or of `made`) lengthens it.
 */
struct piece {
	const unsigned char *at;  /* in the map; NULL: made.ptr + off */
	size_t off, len;
};

struct out {
	struct piece *pieces;
	size_t n, alloc;
	size_t total;             /* bytes in all pieces */
	struct rs_buf made;
	const char *path;
	int v4;                   /* version 4: paths against the one before */
	const char *prev;         /* the path written last (version 4) */
	size_t prev_len;
};

/* Where the list stood, to drop what came after (a cache tree given up). */
struct out_mark {
	size_t n, total, made_len, last_len;
};

static void out_mark(const struct out *o, struct out_mark *m)
{
	m->n = o->n;
	m->total = o->total;
	m->made_len = o->made.len;
	m->last_len = o->n ? o->pieces[o->n - 1].len : 0;
}

static void out_rewind(struct out *o, const struct out_mark *m)
{
	o->n = m->n;
	o->total = m->total;
	o->made.len = m->made_len;
	if (o->n)
		o->pieces[o->n - 1].len = m->last_len;
}

static int out_piece(struct out *o, const unsigned char *at, size_t off, size_t len)
{
	struct piece *last = o->n ? &o->pieces[o->n - 1] : NULL;
	int err;

	if (!len)
		return 0;
	o->total += len;
	if (last && (at ? last->at && last->at + last->len == at
			: !last->at && last->off + last->len == off)) {
		last->len += len;
		return 0;
	}
	err = rs_array_grow(&o->pieces, &o->alloc, o->n + 1, sizeof(*o->pieces), 64);
	if (err)
		return err;
	o->pieces[o->n++] = (struct piece){ at, off, len };
	return 0;
}

/* `n` bytes made here, copied. */
static int out_put(struct out *o, const void *p, size_t n)
{
	size_t off = o->made.len;

	if (rs_buf_put(&o->made, p, n))
		return rs_error_set(RS_EGENERIC, "out of memory");
	return out_piece(o, NULL, off, n);
}

/* `n` bytes of the mapped old file, referenced. */
static int out_ref(struct out *o, const unsigned char *p, size_t n)
{
	return out_piece(o, p, 0, n);
}

static const unsigned char *piece_bytes(const struct out *o, const struct piece *x)
{
	return x->at ? x->at : (const unsigned char *)o->made.ptr + x->off;
}

/*
 * Every piece to `fd`, then their SHA-1, each slice hashed right after it
 * is written, while it is still in the cache: hashing 40 MB straight from
 * memory ran at a third of SHA-1's speed (55 against 23 ms on this
 * project's VMs, docs/benchmarks.md), so a hash on a thread of its own
 * beside the writes took longer than both in turn, and twice the CPU.
 */
#define OUT_SLICE (256u * 1024)

static int out_write(const struct out *o, int fd)
{
	unsigned char sum[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha1(), NULL) == 1, err = 0;

	for (size_t i = 0; i < o->n && ok && !err; i++) {
		const unsigned char *p = piece_bytes(o, &o->pieces[i]);

		for (size_t at = 0, left = o->pieces[i].len; left && ok && !err;) {
			size_t k = left < OUT_SLICE ? left : OUT_SLICE;

			err = rs_fs_write_all(fd, p + at, k);
			if (!err)
				ok = EVP_DigestUpdate(ctx, p + at, k) == 1;
			at += k;
			left -= k;
		}
	}
	ok = ok && (err || (EVP_DigestFinal_ex(ctx, sum, &len) == 1 && len == TRAILER_SIZE));
	EVP_MD_CTX_free(ctx);
	if (err)
		return err;
	if (!ok)
		return rs_error_set(RS_EGENERIC, "cannot hash '%s'", o->path);
	return rs_fs_write_all(fd, sum, len);
}

/* A spare written over: what is left of its old bytes cut off. */
static int out_end(const struct out *o, int fd, int reused)
{
	if (reused && ftruncate(fd, (off_t)(o->total + TRAILER_SIZE)) != 0)
		return rs_error_errno(RS_EGENERIC, "cannot write '%s'", o->path);
	return 0;
}

static int edit_cmp(const void *a, const void *b)
{
	return strcmp(((const struct rs_index_edit *)a)->path,
		      ((const struct rs_index_edit *)b)->path);
}

/*
 * What changes in the file: an entry (a file's, from an edit) or, in a
 * sparse index, a sparse directory entry set to the tree `id` of its
 * folder in the target tree (the first `len` bytes of the edit's path,
 * "runs/"), or removed when the folder is gone.
 */
struct op {
	const char *path;
	size_t len;
	int remove;
	const struct rs_index_edit *file;  /* NULL: a folder */
	git_oid id;
};

static int op_cmp(const void *a, const void *b)
{
	const struct op *x = a, *y = b;

	return name_cmp(x->path, x->len, 0, y->path, y->len, 0);
}

/* One entry of version 2 or 3 with no extended flags: stage 0, checked out. */
/*
 * An entry's path after its `fixed` bytes: in versions 2 and 3 the path
 * and 1 to 8 NUL bytes to a multiple of 8; in version 4 how many bytes
 * of the previous path to drop, the rest of the path and one NUL. `name`
 * must stay valid until the next entry is written.
 */
static int put_name(struct out *o, size_t fixed, const char *name, size_t len)
{
	static const unsigned char pad[8] = { 0 };
	unsigned char v[16];
	size_t common = 0;
	int err;

	if (!o->v4) {
		err = out_put(o, name, len);
		if (err == 0)
			err = out_put(o, pad, ((fixed + len + 8) & ~(size_t)7) - fixed - len);
		return err;
	}
	while (common < len && common < o->prev_len && name[common] == o->prev[common])
		common++;
	err = out_put(o, v, put_varint(o->prev_len - common, v));
	if (err == 0)
		err = out_put(o, name + common, len - common);
	if (err == 0)
		err = out_put(o, pad, 1);
	o->prev = name;
	o->prev_len = len;
	return err;
}

/* One entry with no extended flags: stage 0, checked out. */
static int put_entry(struct out *o, const struct rs_index_edit *e)
{
	unsigned char fixed[ENTRY_FIXED];
	size_t len = strlen(e->path);
	uint32_t stat32[10] = {
		(uint32_t)e->st.st_ctim.tv_sec, (uint32_t)e->st.st_ctim.tv_nsec,
		(uint32_t)e->st.st_mtim.tv_sec, (uint32_t)e->st.st_mtim.tv_nsec,
		(uint32_t)e->st.st_dev, (uint32_t)e->st.st_ino, e->mode,
		(uint32_t)e->st.st_uid, (uint32_t)e->st.st_gid, (uint32_t)e->st.st_size,
	};
	unsigned flags = len < NAME_MASK ? (unsigned)len : NAME_MASK;
	int err;

	for (int i = 0; i < 10; i++)
		put_be32(fixed + 4 * i, stat32[i]);
	memcpy(fixed + 40, e->id.id, 20);
	fixed[60] = (unsigned char)(flags >> 8);
	fixed[61] = (unsigned char)flags;
	err = out_put(o, fixed, sizeof(fixed));
	if (err == 0)
		err = put_name(o, sizeof(fixed), e->path, len);
	return err;
}

/*
 * A sparse directory entry as git writes it: no stat data, mode 040000,
 * the tree's id, extended flags with skip-worktree (version 3 or 4).
 */
static int put_dir_entry(struct out *o, const struct op *d)
{
	unsigned char fixed[ENTRY_FIXED + 2];
	unsigned flags = FLAG_EXTENDED | (d->len < NAME_MASK ? (unsigned)d->len : NAME_MASK);
	int err;

	memset(fixed, 0, sizeof(fixed));
	put_be32(fixed + 24, MODE_SPARSE_DIR);
	memcpy(fixed + 40, d->id.id, 20);
	fixed[60] = (unsigned char)(flags >> 8);
	fixed[61] = (unsigned char)flags;
	fixed[62] = XFLAG_SKIP_WORKTREE >> 8;
	err = out_put(o, fixed, sizeof(fixed));
	if (err == 0)
		err = put_name(o, sizeof(fixed), d->path, d->len);
	return err;
}

/*
 * Old entries [from, to) as they are. In version 4 the first one's path
 * is written again against the path written before it (which the splice
 * may have changed); the others follow the same paths as before.
 */
static int copy_entries(struct out *o, const struct rs_index_file *f, size_t from, size_t to)
{
	size_t start, end = to < f->count ? f->offsets[to] : f->entries_end, len;
	const unsigned char *e;
	const char *name;
	int err;

	if (from >= to)
		return 0;
	if (!o->v4)
		return out_ref(o, f->map + f->offsets[from], end - f->offsets[from]);
	e = f->map + f->offsets[from];
	start = ENTRY_FIXED + ((((unsigned)e[60] << 8) & FLAG_EXTENDED) ? 2 : 0);
	name = entry_name(f, from, &len);
	err = out_ref(o, e, start);
	if (err == 0)
		err = put_name(o, start, name, len);
	if (err == 0 && from + 1 < to)
		err = out_ref(o, f->map + f->offsets[from + 1], end - f->offsets[from + 1]);
	o->prev = entry_name(f, to - 1, &o->prev_len);
	return err;
}

/*
 * The cache tree rewritten: a node whose folder holds a changed path is
 * written invalid (entry count -1, no id), the others are copied; the
 * node of a sparse folder set to a tree is that tree (git's own leaf:
 * one entry, no subtrees).
 */
struct tree_ctx {
	const unsigned char *p;
	size_t end;
	const struct op *ops;
	size_t n;
	struct out *out;
};

/*
 * Does folder `dir` ("" the root, else ending in '/') hold a changed
 * path (or lie in a changed sparse folder)? *leaf: the op that is that
 * very sparse folder, set to a tree.
 */
static int holds_edit(const struct tree_ctx *c, const char *dir, size_t dlen,
		      const struct op **leaf)
{
	*leaf = NULL;
	for (size_t i = 0; i < c->n; i++) {
		const struct op *x = &c->ops[i];

		if (!x->file && x->len == dlen && memcmp(x->path, dir, dlen) == 0) {
			*leaf = x->remove ? NULL : x;
			return 1;
		}
		if ((x->len >= dlen && memcmp(x->path, dir, dlen) == 0) ||
		    (!x->file && dlen > x->len && memcmp(dir, x->path, x->len) == 0))
			return 1;
	}
	return 0;
}

/* A decimal number (with '-' when `sign`) ending at `stop`. */
static int tree_number(const struct tree_ctx *c, size_t *pos, char stop, int sign, long *out)
{
	long v = 0;
	int neg = 0, digits = 0;

	if (sign && *pos < c->end && c->p[*pos] == '-') {
		neg = 1;
		(*pos)++;
	}
	while (*pos < c->end && c->p[*pos] >= '0' && c->p[*pos] <= '9' && digits < 10) {
		v = v * 10 + (c->p[*pos] - '0');
		(*pos)++;
		digits++;
	}
	if (!digits || *pos >= c->end || c->p[*pos] != stop)
		return -1;
	(*pos)++;
	*out = neg ? -v : v;
	return 0;
}

/*
 * A node's header at *pos: its name (a path component, "" for the root,
 * `*name_len` bytes and a NUL), the count of index entries it covers (-1:
 * invalid), of its subtrees, and its id when valid. -1: not a cache tree.
 */
static int tree_header(const struct tree_ctx *c, size_t *pos, const char **name,
		       size_t *name_len, long *subtrees)
{
	const unsigned char *nul = memchr(c->p + *pos, '\0', c->end - *pos);
	long entries;

	if (!nul)
		return -1;
	*name = (const char *)c->p + *pos;
	*name_len = (size_t)(nul - (c->p + *pos));
	*pos += *name_len + 1;
	if (tree_number(c, pos, ' ', 1, &entries))
		return -1;
	if (tree_number(c, pos, '\n', 0, subtrees))
		return -1;
	if (entries >= 0) {
		if (c->end - *pos < 20)
			return -1;
		*pos += 20;
	}
	return 0;
}

/* Past `n` nodes and everything below them: a count of nodes left, no recursion. */
static int tree_skip(const struct tree_ctx *c, size_t *pos, long n)
{
	while (n > 0) {
		const char *name;
		size_t len;
		long subtrees;

		if (tree_header(c, pos, &name, &len, &subtrees))
			return -1;
		/* every node takes 5 bytes at least: more than that many left is a lie */
		if (subtrees > (long)(c->end - *pos))
			return -1;
		n += subtrees - 1;
	}
	return 0;
}

/*
 * The node at *pos, in folder `dir` of its parent ("" for the root). A
 * node whose folder holds a changed path is appended invalidated (its
 * subtrees after it, each either invalidated the same way or copied), or
 * as the new tree of a sparse folder, and 1 returned; else nothing is
 * appended, *pos is past it and all below it, and 0 returned (the caller
 * copies those bytes). -1: not a cache tree; -2: out of memory.
 */
static int tree_node(struct tree_ctx *c, size_t *pos, const char *dir, int depth)
{
	struct rs_buf sub = RS_BUF_INIT;
	const struct op *leaf;
	const char *name;
	size_t name_len;
	long subtrees;
	int rc = 1;

	if (depth > TREE_DEPTH_MAX)
		return -1;
	if (tree_header(c, pos, &name, &name_len, &subtrees))
		return -1;
	/* the root's name is empty; a folder's is one path component */
	if (depth == 0 ? name_len != 0 : name_len == 0)
		return -1;
	if (rs_buf_puts(&sub, dir))
		return -2;
	if (name_len && rs_buf_printf(&sub, "%s/", name)) {
		rs_buf_release(&sub);
		return -2;
	}
	if (!holds_edit(c, sub.ptr ? sub.ptr : "", sub.len, &leaf)) {
		rs_buf_release(&sub);
		return tree_skip(c, pos, subtrees);
	}
	if (out_ref(c->out, (const unsigned char *)name, name_len + 1))
		rc = -2;
	else if (leaf && (out_put(c->out, "1 0\n", 4) || out_put(c->out, leaf->id.id, 20)))
		rc = -2;
	else if (leaf)
		rc = tree_skip(c, pos, subtrees) ? -1 : 1; /* git's leaf has none */
	else {
		char counts[32];
		int k = snprintf(counts, sizeof(counts), "-1 %ld\n", subtrees);

		if (out_put(c->out, counts, (size_t)k))
			rc = -2;
	}
	for (long i = 0; i < subtrees && rc > 0 && !leaf; i++) {
		size_t start = *pos;
		int r = tree_node(c, pos, sub.ptr ? sub.ptr : "", depth + 1);

		if (r < 0)
			rc = r;
		else if (r == 0 && out_ref(c->out, c->p + start, *pos - start))
			rc = -2;
	}
	rs_buf_release(&sub);
	return rc;
}

/*
 * The new TREE extension (signature, size, data) appended to `o`, or
 * nothing when the old one does not parse (an index without it is valid:
 * git rebuilds the cache tree when it commits).
 */
static int new_tree_ext(const struct rs_index_file *f, const struct op *ops, size_t n,
			struct out *o)
{
	struct tree_ctx c = { f->map, f->tree_off + f->tree_len, ops, n, o };
	static const unsigned char hdr[8] = { 'T', 'R', 'E', 'E', 0, 0, 0, 0 };
	struct out_mark start;
	size_t pos = f->tree_off, size_at;
	int rc;

	if (!f->tree_len)
		return 0;
	out_mark(o, &start);
	size_at = o->made.len + 4;
	if (out_put(o, hdr, sizeof(hdr)))
		return RS_EGENERIC;
	rc = tree_node(&c, &pos, "", 0);
	if (rc == 0)
		rc = out_ref(o, f->map + f->tree_off, f->tree_len) ? -2 : 0;
	if (rc == -2)
		return rs_error_set(RS_EGENERIC, "out of memory");
	if (rc < 0 || pos != c.end) {
		out_rewind(o, &start); /* not a cache tree git wrote: dropped */
		return 0;
	}
	put_be32((unsigned char *)o->made.ptr + size_at,
		 (uint32_t)(o->total - start.total - sizeof(hdr)));
	return 0;
}

/*
 * The tree id of folder `dir` ("runs/", `len` bytes) in `tree`: 1, or 0
 * when the tree has no such folder.
 */
static int folder_id(git_tree *tree, const char *dir, size_t len, git_oid *id)
{
	git_tree_entry *e = NULL;
	char *name = strndup(dir, len - 1);
	int found = 0;

	if (!name)
		return rs_error_set(RS_EGENERIC, "out of memory");
	if (git_tree_entry_bypath(&e, tree, name) == 0) {
		if (git_tree_entry_type(e) == GIT_OBJECT_TREE) {
			git_oid_cpy(id, git_tree_entry_id(e));
			found = 1;
		}
		git_tree_entry_free(e);
	}
	git_error_clear(); /* absent: the folder is gone */
	free(name);
	return found;
}

/*
 * The ops of `edits` (sorted): one per file kept in an entry of its own,
 * one per sparse folder that holds edited paths, its id from `tree`.
 */
static int make_ops(const struct rs_index_file *f, const struct rs_index_edit *edits, size_t n,
		    git_tree *tree, struct op *ops, size_t *nops)
{
	size_t k = 0;
	int err;

	for (size_t i = 0; i < n; i++) {
		size_t plen = strlen(edits[i].path), dlen, at;
		struct op *x = &ops[k];
		int found;

		if (i && strcmp(edits[i - 1].path, edits[i].path) == 0)
			return rs_error_set(RS_EUSAGE, "'%s' given twice", edits[i].path);
		err = where(f, edits[i].path, plen, &dlen, &at);
		if (err)
			return err;
		x->path = edits[i].path;
		if (!dlen) {
			x->len = plen;
			x->remove = edits[i].remove;
			x->file = &edits[i];
			k++;
			continue;
		}
		if (k && !ops[k - 1].file && ops[k - 1].len == dlen &&
		    memcmp(ops[k - 1].path, x->path, dlen) == 0)
			continue; /* that folder's op is made */
		if (!tree)
			return rs_error_set(RS_EUSAGE, "'%s' is in a sparse folder of the index, "
					    "and no tree was given for it", edits[i].path);
		x->len = dlen;
		x->file = NULL;
		found = folder_id(tree, x->path, dlen, &x->id);
		if (found < 0)
			return found;
		x->remove = !found;
		k++;
	}
	qsort(ops, k, sizeof(*ops), op_cmp);
	for (size_t i = 1; i < k; i++)
		if (name_cmp(ops[i - 1].path, ops[i - 1].len, 0, ops[i].path, ops[i].len, 0) == 0 ||
		    (!ops[i - 1].file && ops[i].len > ops[i - 1].len &&
		     memcmp(ops[i - 1].path, ops[i].path, ops[i - 1].len) == 0))
			return rs_error_set(RS_EFORMAT, "'%.*s' is both a sparse folder and in "
					    "one", (int)ops[i].len, ops[i].path);
	*nops = k;
	return 0;
}

/* Entries after the ops, and refuse a path that has other stages. */
static int count_after(const struct rs_index_file *f, const struct op *ops, size_t n,
		       uint32_t *count)
{
	uint64_t c = f->count;

	for (size_t k = 0; k < n; k++) {
		size_t i = lower_bound(f, ops[k].path, ops[k].len);
		int here = entry_is(f, i, ops[k].path, ops[k].len) && entry_stage(f, i) == 0;

		if (entry_is(f, i + here, ops[k].path, ops[k].len))
			return rs_error_set(RS_EFORMAT, "'%.*s' has unmerged entries in the index",
					    (int)ops[k].len, ops[k].path);
		if (ops[k].remove)
			c -= here;
		else
			c += !here;
	}
	if (c > INDEX_MAX / (ENTRY_FIXED + 2))
		return rs_error_set(RS_ETOOBIG, "the index would hold too many entries");
	*count = (uint32_t)c;
	return 0;
}

/* Header, entries, extensions and trailer into the lock. */
static int write_index(struct rs_index_file *f, const struct op *ops, size_t n,
		       uint32_t count, struct out *o)
{
	static const unsigned char sdir[8] = { 's', 'd', 'i', 'r', 0, 0, 0, 0 };
	unsigned char hdr[HEADER_SIZE];
	uint32_t version = f->version;
	size_t cur = 0;
	int err;

	for (size_t k = 0; k < n; k++)
		if (!ops[k].file && !ops[k].remove && version < 3)
			version = 3; /* a folder entry's extended flags */
	memcpy(hdr, "DIRC", 4);
	put_be32(hdr + 4, version);
	put_be32(hdr + 8, count);
	err = out_put(o, hdr, sizeof(hdr));
	o->v4 = version == 4;
	for (size_t k = 0; k < n && !err; k++) {
		size_t i = lower_bound(f, ops[k].path, ops[k].len);

		err = copy_entries(o, f, cur, i);
		cur = i + entry_is(f, i, ops[k].path, ops[k].len); /* the old entry is replaced */
		if (!err && !ops[k].remove)
			err = ops[k].file ? put_entry(o, ops[k].file) : put_dir_entry(o, &ops[k]);
	}
	if (!err)
		err = copy_entries(o, f, cur, f->count);
	if (!err)
		err = new_tree_ext(f, ops, n, o);
	if (!err && f->reuc_len)
		err = out_ref(o, f->map + f->reuc_off - 8, f->reuc_len + 8);
	if (!err && f->sparse)
		err = out_put(o, sdir, sizeof(sdir));
	if (!err && o->total > INDEX_MAX - TRAILER_SIZE)
		err = rs_error_set(RS_ETOOBIG, "the index would be larger than git allows");
	if (!err)
		err = out_write(o, f->lock_fd);
	if (!err)
		err = out_end(o, f->lock_fd, f->lock_reused);
	return err;
}

int rs_index_file_commit(struct rs_index_file *f, struct rs_index_edit *edits, size_t n,
			 git_tree *tree)
{
	struct out o = { .path = f->lock_path };
	struct op *ops = NULL;
	size_t nops = 0;
	uint32_t count = 0;
	int err, spare;

	if (f->lock_fd < 0)
		return rs_error_set(RS_EUSAGE, "the index was not locked for writing");
	qsort(edits, n, sizeof(*edits), edit_cmp);
	ops = calloc(n ? n : 1, sizeof(*ops));
	if (!ops) {
		err = rs_error_set(RS_EGENERIC, "out of memory");
		goto out;
	}
	err = make_ops(f, edits, n, tree, ops, &nops);
	if (err == 0)
		err = count_after(f, ops, nops, &count);
	if (err == 0)
		err = write_index(f, ops, nops, count, &o);
	if (err)
		goto out;
	if (close(f->lock_fd) != 0) {
		f->lock_fd = -1;
		unlink(f->lock_path);
		err = rs_error_errno(RS_EGENERIC, "cannot write '%s'", f->lock_path);
		goto out;
	}
	f->lock_fd = -1;
	/* the index replaced lives on as the next spare: its pages and blocks
	   are written over next time instead of freed now and taken anew */
	spare = f->map && link(f->path, f->spare_path) == 0;
	if (rename(f->lock_path, f->path) != 0) {
		err = rs_error_errno(RS_EGENERIC, "cannot write '%s'", f->path);
		unlink(f->lock_path);
		if (spare)
			unlink(f->spare_path); /* not a second name of the live index */
	}
out:
	free(o.pieces);
	rs_buf_release(&o.made);
	free(ops);
	return err;
}

int rs_index_file_verify(const struct rs_index_file *f)
{
	unsigned char sum[EVP_MAX_MD_SIZE];
	unsigned int len = 0;

	if (!f->map)
		return 0;
	if (EVP_Digest(f->map, f->size - TRAILER_SIZE, sum, &len, EVP_sha1(), NULL) != 1)
		return rs_error_set(RS_EGENERIC, "cannot hash '%s'", f->path);
	if (len != TRAILER_SIZE || memcmp(sum, f->map + f->size - TRAILER_SIZE, TRAILER_SIZE) != 0)
		return rs_error_set(RS_ECORRUPT, "'%s' does not match its checksum", f->path);
	return 0;
}
