/*
 * gen-session: a fast, seeded, streaming generator of pyinstrument session
 * JSON (`.pyisession`), used by the end-to-end tests and the benchmarks.
 *
 * Why a model and not random stacks: the store chunks, deduplicates and
 * compresses these files, and the summaries aggregate them, so what matters
 * is that the byte stream has the statistics of a real session: ~18 frames
 * per stack, consecutive stacks sharing about half of their frames, a
 * vocabulary of a few thousand frame strings, line numbers that move within
 * a function, times that look like differences of a monotonic clock.  Those
 * all fall out of *executing* a synthetic program and sampling its call stack
 * every millisecond, which is what pyinstrument does to a real one.
 *
 * The synthetic program (built from --model-seed, fixed by default so that
 * different --seed values are different runs of the same code):
 *   - scripts/run_profile.py -> core.Simulation: register modules (pandas
 *     read_csv, importlib), initialise the population, then simulate months;
 *   - each simulated day fires events (monthly polling events per module,
 *     a daily health-system scheduler, Poisson streams of individual events);
 *     an event's apply() calls module helpers, shared services (linear
 *     models, health system, symptoms, demography, logging) and pandas;
 *   - ~1000 library functions (pandas, numpy, stdlib) in a layered call
 *     graph with hub functions, polymorphic `self` classes and decorator
 *     wrappers, ending in built-ins.
 * Every function has a body: a list of statements on increasing lines, each
 * either own time (a cost in ns) or a call (maybe conditional, maybe looped).
 * The engine walks the bodies, advancing a simulated clock; whenever the
 * clock crosses a 1 ms tick the current stack is written as one record.
 *
 * Output is produced in two passes for the 5.x layout (the header holds
 * sample_count and duration, which are known only at the end): pass one runs
 * the same deterministic execution into a byte counter, pass two writes.
 * Memory is bounded by the model (a few MB) whatever the output size.
 *
 * Randomness: xoshiro256** seeded through splitmix64, one independent stream
 * per purpose (model structure, execution, clock jitter, noise) so that e.g.
 * --variant next can change labels and timings without changing the order
 * of samples.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ math */

/*
 * The few transcendental functions the model needs, written with IEEE basic
 * operations only: libm's log/exp may differ in the last bit between C
 * libraries, and one differing bit can change a branch and therefore every
 * byte after it.  These make the output identical on every machine.
 */
static double g_log(double x) /* x > 0 */
{
	uint64_t b;
	memcpy(&b, &x, sizeof b);
	int e = (int)((b >> 52) & 0x7ff) - 1023;
	b = (b & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
	double mant;
	memcpy(&mant, &b, sizeof mant);
	if (e == -1023) /* subnormal: not reached with our inputs */
		return -745.0;
	if (mant > 1.4142135623730951) {
		mant *= 0.5;
		e++;
	}
	double s = (mant - 1.0) / (mant + 1.0), s2 = s * s, term = s, sum = 0;
	for (int k = 1; k <= 23; k += 2) {
		sum += term / k;
		term *= s2;
	}
	return 2.0 * sum + e * 0.6931471805599453;
}

static double g_exp(double x)
{
	if (x < -700)
		return 0;
	if (x > 700)
		x = 700;
	double kf = x / 0.6931471805599453;
	int k = (int)(kf < 0 ? kf - 0.5 : kf + 0.5);
	double r = x - k * 0.6931471805599453, term = 1, sum = 1;
	for (int i = 1; i <= 16; i++) {
		term *= r / i;
		sum += term;
	}
	uint64_t b = (uint64_t)(k + 1023) << 52;
	double scale;
	memcpy(&scale, &b, sizeof scale);
	return sum * scale;
}

static double g_sqrt(double x)
{
	if (x <= 0)
		return 0;
	double y = x > 1 ? x : 1;
	for (int i = 0; i < 64; i++) {
		double ny = 0.5 * (y + x / y);
		if (ny == y)
			break;
		y = ny;
	}
	return y;
}

static double g_pow(double x, double y)
{
	return x <= 0 ? 0 : g_exp(y * g_log(x));
}

/* ------------------------------------------------------------------ PRNG */

struct rng {
	uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1342543de82ef95ULL);
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

static inline double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

static inline uint32_t rng_below(struct rng *r, uint32_t n)
{
	return (uint32_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

static inline int rng_range(struct rng *r, int lo, int hi) /* inclusive */
{
	return lo + (int)rng_below(r, (uint32_t)(hi - lo + 1));
}

static double rng_exp(struct rng *r, double mean)
{
	return -g_log(1.0 - rng_unit(r)) * mean;
}

/* Marsaglia's polar method: needs no cosine. */
static double rng_normal(struct rng *r)
{
	for (;;) {
		double u = 2.0 * rng_unit(r) - 1.0, v = 2.0 * rng_unit(r) - 1.0;
		double s = u * u + v * v;
		if (s > 0 && s < 1)
			return u * g_sqrt(-2.0 * g_log(s) / s);
	}
}

static int rng_poisson(struct rng *r, double lambda)
{
	if (lambda <= 0)
		return 0;
	if (lambda > 40) {
		double x = lambda + g_sqrt(lambda) * rng_normal(r) + 0.5;
		return x < 0 ? 0 : (int)x;
	}
	double l = g_exp(-lambda), p = 1.0;
	int k = 0;
	do {
		k++;
		p *= rng_unit(r);
	} while (p > l);
	return k - 1;
}

/* Index into [0, n) biased toward small indexes, so that a few library
 * functions become hubs that many call sites reach (like is_list_like or
 * BlockManager.copy in pandas). */
static uint32_t rng_zipf_index(struct rng *r, uint32_t n, double skew)
{
	double u = rng_unit(r);
	uint32_t i = (uint32_t)(g_pow(u, skew) * n);
	return i >= n ? n - 1 : i;
}

/* ------------------------------------------------------ Python float repr */

/*
 * Python writes floats with repr(): the shortest digit string that reads back
 * to the same double, in fixed notation when the decimal exponent is in
 * [-4, 16), else as d.ddde+XX.  We find the shortest precision by formatting
 * with %.*e downwards from 17 digits until the string stops round-tripping.
 */
static size_t py_float_repr(double x, char *out)
{
	char tmp[48], digits[24];
	int best = 17, p, exp10, nd = 0;
	size_t n = 0;

	if (x == 0) {
		memcpy(out, "0.0", 4);
		return 3;
	}
	for (p = 16; p >= 1; p--) {
		snprintf(tmp, sizeof tmp, "%.*e", p - 1, x);
		if (strtod(tmp, NULL) != x)
			break;
		best = p;
	}
	snprintf(tmp, sizeof tmp, "%.*e", best - 1, x);
	const char *c = tmp;
	if (*c == '-') {
		out[n++] = '-';
		c++;
	}
	for (; *c && *c != 'e'; c++)
		if (*c != '.')
			digits[nd++] = *c;
	exp10 = atoi(c + 1);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	if (exp10 >= -4 && exp10 < 16) {
		if (exp10 >= 0) {
			for (int i = 0; i <= exp10; i++)
				out[n++] = i < nd ? digits[i] : '0';
			out[n++] = '.';
			if (nd > exp10 + 1)
				for (int i = exp10 + 1; i < nd; i++)
					out[n++] = digits[i];
			else
				out[n++] = '0';
		} else {
			out[n++] = '0';
			out[n++] = '.';
			for (int i = 0; i < -exp10 - 1; i++)
				out[n++] = '0';
			for (int i = 0; i < nd; i++)
				out[n++] = digits[i];
		}
	} else {
		out[n++] = digits[0];
		if (nd > 1) {
			out[n++] = '.';
			for (int i = 1; i < nd; i++)
				out[n++] = digits[i];
		}
		n += (size_t)sprintf(out + n, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
	}
	out[n] = '\0';
	return n;
}

/* ---------------------------------------------------------------- output */

struct out {
	FILE *f;
	char *buf;
	size_t len, cap;
	uint64_t total; /* bytes produced, written or not */
	int discard;    /* pass one: count only */
	int err;
};

static void out_flush(struct out *o)
{
	if (!o->discard && o->len && !o->err && fwrite(o->buf, 1, o->len, o->f) != o->len)
		o->err = errno ? errno : EIO;
	o->len = 0;
}

static inline void out_bytes(struct out *o, const char *p, size_t n)
{
	if (o->len + n > o->cap)
		out_flush(o);
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	o->total += n;
}

#define OUT_LIT(o, s) out_bytes((o), (s), sizeof(s) - 1)

static inline void out_uint(struct out *o, uint64_t v)
{
	char tmp[24];
	int i = 24;
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	out_bytes(o, tmp + i, (size_t)(24 - i));
}

static void out_float(struct out *o, double v)
{
	char tmp[48];
	out_bytes(o, tmp, py_float_repr(v, tmp));
}

/* ----------------------------------------------------------------- model */

enum kind { K_SCRIPT, K_MODEL, K_PANDAS, K_NUMPY, K_STDLIB, K_BUILTIN, K_THREAD };
enum stmt_kind { S_SELF, S_CALL };

#define CLS_NONE (-1)    /* callee is a plain function */
#define CLS_INHERIT (-2) /* self.method(): keep the caller's class if the callee has it */

struct gfile {
	char *path;
	int kind;
	int ncls;
	int cls[6];
	int cursor; /* next free line during layout */
};

struct gstmt {
	int32_t off;    /* line offset from the def line */
	uint8_t kind;
	uint8_t prob;   /* 255: always; else chance/255 that the statement runs */
	uint8_t isolated; /* added by a modifier: its draws come from a stream of
	                     their own, so the simulated events stay the same */
	uint16_t reps;  /* loop: runs 1..reps times */
	int32_t target; /* callee for S_CALL */
	int32_t cls;    /* class given to the callee, or CLS_* */
	uint32_t cost;  /* mean own time in ns for S_SELF */
};

struct gfn {
	char *name;
	int file;
	int first_line;
	int level; /* calls go only to higher levels: the graph is a DAG */
	int ncls;  /* classes a method can run with; 0 for functions */
	int cls[4];
	int alias;   /* >= 0: same frame identity as that function (wrappers) */
	int wraps;   /* decorator wrapper alias: the entry point it calls */
	int inline_parent, inline_stmt; /* <listcomp>: lives on a caller's line */
	int stmt0, nstmt;
	int span;    /* lines the def occupies */
	double self_factor;
	double ecost; /* expected total cost of one call, ns */
	double ecalls;
	int touched; /* --variant next: lines shifted */
	char *prefix; /* JSON text "name\u0000path\u0000first" without quotes */
	uint32_t prefix_len;
};

struct gclass {
	char *name;
	char *attr; /* \u0001c<name> as JSON text */
	uint32_t attr_len;
};

struct event_class {
	int cls;
	int fire_fn; /* fire_single_event alias whose body runs this event */
	int module;
	int kind;    /* 0 polling (monthly), 1 daily, 2 individual */
	double weight;
	double rate; /* per day at population 1000 */
};

/* The library's shape: the knobs below (library_narrow, library_wide). */
struct library_shape {
	int fns_per_unit;
	double callee_zipf, branch_noise;
	double self_time;
	int call_span; /* a library call statement is on one of 1..call_span lines */
};

struct model {
	const struct library_shape *lib;
	struct gfile *files;
	int nfiles, capfiles;
	struct gfn *fns;
	int nfns, capfns;
	struct gstmt *stmts;
	int nstmts, capstmts;
	struct gclass *classes;
	int nclasses, capclasses;
	struct event_class *events;
	int nevents, capevents;

	int unicode_names; /* --names unicode */

	/* fixed frames of the driver */
	int fn_module, fn_main, fn_run, fn_build, fn_init_pop, fn_simulate, fn_finalise;
	int fn_heappop;
	int cls_sim;
	int simulate_fire_off, simulate_pop_off, simulate_log_off, fn_month_log;
	int main_start_off, main_run_off, mod_main_off;
	int run_build_off, run_init_off, run_sim_off, run_fin_off;

	/* level ranges */
	int lib_api0, lib_api1;    /* pandas/numpy/stdlib entry points */
	int builtin0, builtin1;
	int rand_builtin0, rand_builtin1;
	double startup_cost, month_fixed_cost;
};

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		fprintf(stderr, "gen-session: out of memory\n");
		exit(2);
	}
	return q;
}

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xrealloc(NULL, n), s, n);
}

static char *xfmt(const char *fmt, ...)
{
	va_list ap;
	char tmp[512];
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	return xstrdup(tmp);
}

#define GROW(arr, n, cap)                                                  \
	do {                                                               \
		if ((n) == (cap)) {                                        \
			(cap) = (cap) ? (cap) * 2 : 64;                    \
			(arr) = xrealloc((arr), (size_t)(cap) * sizeof(*(arr))); \
		}                                                          \
	} while (0)

static int add_class(struct model *m, const char *name)
{
	for (int i = 0; i < m->nclasses; i++)
		if (!strcmp(m->classes[i].name, name))
			return i;
	GROW(m->classes, m->nclasses, m->capclasses);
	struct gclass *c = &m->classes[m->nclasses];
	c->name = xstrdup(name);
	c->attr = xfmt("\\u0001c%s", name);
	c->attr_len = (uint32_t)strlen(c->attr);
	return m->nclasses++;
}

static int add_file(struct model *m, const char *path, int kind, const char *classes)
{
	GROW(m->files, m->nfiles, m->capfiles);
	struct gfile *f = &m->files[m->nfiles];
	memset(f, 0, sizeof *f);
	f->path = xstrdup(path);
	f->kind = kind;
	f->cursor = 1;
	if (classes) {
		char tmp[256];
		snprintf(tmp, sizeof tmp, "%s", classes);
		for (char *save = NULL, *t = strtok_r(tmp, ",", &save); t && f->ncls < 6;
		     t = strtok_r(NULL, ",", &save))
			f->cls[f->ncls++] = add_class(m, t);
	}
	return m->nfiles++;
}

static int add_fn(struct model *m, const char *name, int file, int level)
{
	GROW(m->fns, m->nfns, m->capfns);
	struct gfn *g = &m->fns[m->nfns];
	memset(g, 0, sizeof *g);
	g->name = xstrdup(name);
	g->file = file;
	g->level = level;
	g->alias = -1;
	g->wraps = -1;
	g->inline_parent = -1;
	g->stmt0 = -1;
	g->self_factor = m->lib->self_time; /* --slow and --load multiply it later */
	return m->nfns++;
}

static void fn_set_class(struct model *m, int fn, int cls)
{
	struct gfn *g = &m->fns[fn];
	if (g->ncls < 4)
		g->cls[g->ncls++] = cls;
}

/* Statements of a function must be added contiguously, before another
 * function gets statements. */
static struct gstmt *add_stmt(struct model *m, int fn, int kind)
{
	struct gfn *g = &m->fns[fn];
	GROW(m->stmts, m->nstmts, m->capstmts);
	if (g->stmt0 < 0)
		g->stmt0 = m->nstmts;
	if (g->stmt0 + g->nstmt != m->nstmts) {
		fprintf(stderr, "gen-session: internal error: statements of '%s' not contiguous\n", g->name);
		exit(2);
	}
	struct gstmt *s = &m->stmts[m->nstmts++];
	memset(s, 0, sizeof *s);
	s->kind = (uint8_t)kind;
	s->prob = 255;
	s->reps = 1;
	s->target = -1;
	s->cls = CLS_NONE;
	g->nstmt++;
	return s;
}

static int last_off(struct model *m, int fn)
{
	struct gfn *g = &m->fns[fn];
	return g->nstmt ? m->stmts[g->stmt0 + g->nstmt - 1].off : 0;
}

static void st_self(struct model *m, int fn, int off, double cost_us)
{
	struct gstmt *s = add_stmt(m, fn, S_SELF);
	s->off = off;
	s->cost = (uint32_t)(cost_us * 1000.0);
}

static struct gstmt *st_call(struct model *m, int fn, int off, int target, int cls)
{
	struct gstmt *s = add_stmt(m, fn, S_CALL);
	s->off = off;
	s->target = target;
	s->cls = cls;
	return s;
}

/* The class a call site gives its callee, decided when the graph is built:
 * a method called on `self` keeps the caller's class (resolved at run time),
 * one called on another object gets one of the callee's classes. */
static int pick_call_cls(struct model *m, struct rng *r, int callee)
{
	struct gfn *g = &m->fns[callee];
	if (!g->ncls)
		return CLS_NONE;
	if (rng_unit(r) < 0.6)
		return CLS_INHERIT;
	return g->cls[rng_below(r, (uint32_t)g->ncls)];
}

/* ------------------------------------------------------------ vocabulary */

static const char *const LIB_VERBS[] = {
	"get", "set", "make", "maybe", "ensure", "validate", "convert", "reindex", "take",
	"apply", "reduce", "align", "check", "infer", "cast", "coerce", "construct", "box",
	"wrap", "compute", "update", "from", "to", "is", "has", "iget", "iset", "fast",
	"slice", "insert", "delete", "replace", "fill", "where", "putmask", "combine",
	"concat", "merge", "join", "sort", "factorize", "unique", "map", "transform",
	"aggregate", "evaluate", "visit", "parse", "resolve", "lookup", "find", "clear",
	"copy", "view", "consolidate", "interleave", "reshape", "shift", "round", "clip",
	"mask", "isin", "reset", "init", "setitem", "getitem", "wrap_result", "dispatch",
	"extract", "sanitize", "normalize", "prep", "unpack", "pack", "split", "group",
};
static const char *const LIB_NOUNS[] = {
	"indexer", "value", "values", "item", "items", "block", "blocks", "mgr", "axis",
	"axes", "column", "columns", "index", "labels", "dtype", "dtypes", "array",
	"arrays", "mask", "result", "key", "keys", "level", "levels", "codes",
	"categories", "frame", "series", "slice", "loc", "cache", "names", "name", "shape",
	"data", "fill_value", "other", "na", "scalar", "tuple", "listlike", "bool",
	"integer", "float", "datetime", "object", "engine", "getter", "setter", "op",
	"expr", "term", "node", "scope", "resolvers", "chunk", "buffer", "handle",
	"with_indexer", "single_block", "split_path", "multi_index", "like", "ndim",
	"placement", "fastpath", "kwargs", "args", "method", "func", "obj",
};
static const char *const DUNDERS[] = {
	"__getitem__", "__setitem__", "__init__", "__getattr__", "__setattr__",
	"__len__", "__iter__", "__contains__", "__array__", "__finalize__", "__and__",
	"__or__", "__eq__", "__ne__", "__lt__", "__gt__", "__add__", "__mul__",
	"__invert__", "__array_ufunc__", "__new__", "__call__", "__hash__", "__bool__",
};
static const char *const BUILTINS[] = {
	"len", "isinstance", "getattr", "hasattr", "issubclass", "hash", "iter", "next",
	"min", "max", "sorted", "any", "all", "dict.get", "list.append", "tuple.__new__",
	"object.__new__", "str.join", "str.format", "str.startswith", "Pattern.match",
	"Pattern.sub", "Match.span", "ufunc.reduce", "ndarray.copy", "ndarray.astype",
	"ndarray.take", "ndarray.nonzero", "ndarray.sum", "ndarray.all", "ndarray.any",
	"ndarray.view", "ndarray.reshape", "asarray", "empty", "concatenate", "zeros",
	"arange", "implement_array_function", "Int64Engine.get_loc",
	"ObjectEngine.get_loc", "ObjectEngine.get_indexer", "Int64HashTable.factorize",
	"StringHashTable.unique", "Int64HashTable.unique", "is_list_like", "is_scalar",
	"is_integer", "is_float", "is_bool", "is_iterator", "checknull", "isnaobj",
	"maybe_convert_objects", "infer_dtype", "infer_datetimelike_array",
	"take_1d_int64_int64", "take_1d_int8_int8", "take_2d_axis1_int64_int64",
	"take_2d_axis0_float64_float64", "group_sum", "group_mean", "item_from_zerodim",
	"MultiIndexUIntEngine.get_loc", "BlockPlacement.__init__", "datetime64.view",
	"Timestamp.__new__", "array_equivalent_object", "vec_compare", "scalar_compare",
	"TextIOWrapper.write", "TextIOWrapper.flush", "StringIO.readline", "compile",
	"_abc_instancecheck", "dict.fromkeys", "list.remove", "str.isidentifier",
	"perf_counter", "time", "encode_basestring_ascii", "c_make_encoder",
	"lock.acquire", "get_terminal_size", "or_", "and_", "eq", "ndarray.__reduce__",
};
static const char *const RAND_BUILTINS[] = {
	"RandomState.random_sample", "RandomState.rand", "RandomState.choice",
	"RandomState.binomial", "RandomState.poisson", "RandomState.exponential",
	"RandomState.beta", "RandomState.randint", "SeedSequence.generate_state",
};

static const char *const MODULES[] = {
	"tb", "hiv", "malaria", "measles", "diarrhoea", "alri", "depression", "stunting",
	"wasting", "schisto", "epilepsy", "diabetes", "hypertension", "breast_cancer",
	"bladder_cancer", "oesophageal_cancer", "prostate_cancer", "copd",
	"road_traffic_injuries", "labour", "pregnancy_supervisor", "newborn_outcomes",
	"contraception", "lifestyle", "chronic_syndrome", "other_adult_cancers",
};
static const char *const MODEL_VERBS[] = {
	"update", "do", "schedule", "get", "compute", "check", "record", "refresh",
	"select", "draw", "assign", "progress", "resolve", "report", "apply", "evaluate",
	"determine", "initialise", "set", "calculate", "find", "make", "reset", "log",
	"sample", "process", "screen", "treat", "diagnose", "refer", "count",
};
static const char *const MODEL_NOUNS[] = {
	"symptoms", "treatment", "status", "risk", "incidence", "deaths", "births",
	"cases", "appointments", "facilities", "properties", "population", "cohort",
	"diagnosis", "progression", "referral", "outcomes", "coverage", "prevalence",
	"eligibility", "onset", "recovery", "severity", "testing", "adherence",
	"infections", "stage", "cure", "relapse", "complications", "care_seeking",
	"consumables", "beds", "hsi_event", "parameters", "lookup_tables", "counters",
	"summary", "tracker", "death_date", "newly_infected", "on_treatment",
};

/* Names unique within a file, looking like real pandas/model identifiers. */
static char *make_name(struct model *m, struct rng *r, int file, int lib)
{
	char tmp[96];
	for (int attempt = 0; attempt < 64; attempt++) {
		double u = rng_unit(r);
		if (lib) {
			const char *v = LIB_VERBS[rng_below(r, sizeof LIB_VERBS / sizeof *LIB_VERBS)];
			const char *n = LIB_NOUNS[rng_below(r, sizeof LIB_NOUNS / sizeof *LIB_NOUNS)];
			const char *n2 = LIB_NOUNS[rng_below(r, sizeof LIB_NOUNS / sizeof *LIB_NOUNS)];
			if (u < 0.10)
				snprintf(tmp, sizeof tmp, "%s", DUNDERS[rng_below(r, sizeof DUNDERS / sizeof *DUNDERS)]);
			else if (u < 0.45)
				snprintf(tmp, sizeof tmp, "_%s_%s", v, n);
			else if (u < 0.75)
				snprintf(tmp, sizeof tmp, "%s_%s", v, n);
			else if (u < 0.85)
				snprintf(tmp, sizeof tmp, "_%s", v);
			else if (u < 0.92)
				snprintf(tmp, sizeof tmp, "%s", v);
			else
				snprintf(tmp, sizeof tmp, "_%s_%s_%s", v, n, n2);
		} else {
			const char *v = MODEL_VERBS[rng_below(r, sizeof MODEL_VERBS / sizeof *MODEL_VERBS)];
			const char *n = MODEL_NOUNS[rng_below(r, sizeof MODEL_NOUNS / sizeof *MODEL_NOUNS)];
			if (u < 0.2)
				snprintf(tmp, sizeof tmp, "_%s_%s", v, n);
			else
				snprintf(tmp, sizeof tmp, "%s_%s", v, n);
		}
		int clash = 0;
		for (int i = 0; i < m->nfns && !clash; i++)
			clash = m->fns[i].file == file && m->fns[i].alias < 0 && !strcmp(m->fns[i].name, tmp);
		if (!clash || attempt == 63)
			return xstrdup(tmp);
	}
	return xstrdup("f");
}

static void camel(const char *mod, char *out, size_t cap)
{
	size_t n = 0;
	int up = 1;
	for (const char *c = mod; *c && n + 1 < cap; c++) {
		if (*c == '_') {
			up = 1;
			continue;
		}
		out[n++] = up ? (char)(*c - 'a' + 'A') : *c;
		up = 0;
	}
	out[n] = '\0';
}

/* ------------------------------------------------------- library graph */

struct libfile_spec {
	const char *path;
	int kind;
	int weight; /* relative number of functions */
	int api;    /* holds entry points called from model code */
	const char *classes;
};

#define DP "/usr/lib/python3/dist-packages/"
#define PY "/usr/lib/python3.11/"

static const struct libfile_spec LIBFILES[] = {
	{DP "pandas/core/frame.py", K_PANDAS, 8, 1, "DataFrame"},
	{DP "pandas/core/series.py", K_PANDAS, 7, 1, "Series"},
	{DP "pandas/core/generic.py", K_PANDAS, 9, 1, "Series,DataFrame"},
	{DP "pandas/core/indexing.py", K_PANDAS, 7, 1, "_LocIndexer,_iLocIndexer,_AtIndexer"},
	{DP "pandas/core/indexes/base.py", K_PANDAS, 7, 0, "Index,RangeIndex,CategoricalIndex,DatetimeIndex"},
	{DP "pandas/core/indexes/multi.py", K_PANDAS, 3, 0, "MultiIndex"},
	{DP "pandas/core/indexes/range.py", K_PANDAS, 2, 0, "RangeIndex"},
	{DP "pandas/core/indexes/category.py", K_PANDAS, 1, 0, "CategoricalIndex"},
	{DP "pandas/core/indexes/datetimelike.py", K_PANDAS, 1, 0, "DatetimeIndex"},
	{DP "pandas/core/internals/managers.py", K_PANDAS, 6, 0, "BlockManager,SingleBlockManager"},
	{DP "pandas/core/internals/blocks.py", K_PANDAS, 5, 0, "NumpyBlock,ObjectBlock,CategoricalBlock,DatetimeLikeBlock"},
	{DP "pandas/core/internals/base.py", K_PANDAS, 1, 0, "BlockManager,SingleBlockManager"},
	{DP "pandas/core/internals/construction.py", K_PANDAS, 2, 0, NULL},
	{DP "pandas/core/internals/concat.py", K_PANDAS, 1, 0, NULL},
	{DP "pandas/core/arrays/categorical.py", K_PANDAS, 3, 0, "Categorical"},
	{DP "pandas/core/arrays/_mixins.py", K_PANDAS, 2, 0, "Categorical,DatetimeArray"},
	{DP "pandas/core/arrays/datetimelike.py", K_PANDAS, 2, 0, "DatetimeArray"},
	{DP "pandas/core/arrays/masked.py", K_PANDAS, 1, 0, "BooleanArray,IntegerArray"},
	{DP "pandas/core/dtypes/common.py", K_PANDAS, 3, 0, NULL},
	{DP "pandas/core/dtypes/cast.py", K_PANDAS, 3, 0, NULL},
	{DP "pandas/core/dtypes/missing.py", K_PANDAS, 2, 0, NULL},
	{DP "pandas/core/dtypes/dtypes.py", K_PANDAS, 2, 0, "CategoricalDtype,DatetimeTZDtype"},
	{DP "pandas/core/dtypes/inference.py", K_PANDAS, 1, 0, NULL},
	{DP "pandas/core/dtypes/generic.py", K_PANDAS, 1, 0, NULL},
	{DP "pandas/core/ops/common.py", K_PANDAS, 1, 0, NULL},
	{DP "pandas/core/ops/array_ops.py", K_PANDAS, 2, 0, NULL},
	{DP "pandas/core/arraylike.py", K_PANDAS, 2, 1, "Series,DataFrame"},
	{DP "pandas/core/construction.py", K_PANDAS, 2, 0, NULL},
	{DP "pandas/core/common.py", K_PANDAS, 2, 0, NULL},
	{DP "pandas/core/algorithms.py", K_PANDAS, 2, 0, NULL},
	{DP "pandas/core/array_algos/take.py", K_PANDAS, 1, 0, NULL},
	{DP "pandas/core/groupby/groupby.py", K_PANDAS, 3, 1, "DataFrameGroupBy,SeriesGroupBy"},
	{DP "pandas/core/groupby/ops.py", K_PANDAS, 2, 0, "BaseGrouper,WrappedCythonOp"},
	{DP "pandas/core/groupby/grouper.py", K_PANDAS, 1, 0, "Grouping"},
	{DP "pandas/core/reshape/concat.py", K_PANDAS, 1, 1, "_Concatenator"},
	{DP "pandas/core/reshape/merge.py", K_PANDAS, 2, 1, "_MergeOperation"},
	{DP "pandas/core/computation/eval.py", K_PANDAS, 1, 1, NULL},
	{DP "pandas/core/computation/expr.py", K_PANDAS, 3, 0, "PandasExprVisitor,Expr"},
	{DP "pandas/core/computation/parsing.py", K_PANDAS, 1, 0, NULL},
	{DP "pandas/core/computation/ops.py", K_PANDAS, 2, 0, "BinOp,Term,UnaryOp"},
	{DP "pandas/core/computation/scope.py", K_PANDAS, 1, 0, "Scope"},
	{DP "pandas/core/nanops.py", K_PANDAS, 2, 0, NULL},
	{DP "pandas/core/apply.py", K_PANDAS, 1, 0, "FrameApply,SeriesApply"},
	{DP "pandas/core/sorting.py", K_PANDAS, 1, 0, NULL},
	{DP "pandas/core/strings/accessor.py", K_PANDAS, 1, 1, "StringMethods"},
	{DP "pandas/core/tools/datetimes.py", K_PANDAS, 1, 1, NULL},
	{DP "pandas/_config/config.py", K_PANDAS, 1, 0, "CallableDynamicDoc"},
	{DP "pandas/io/formats/format.py", K_PANDAS, 1, 0, "DataFrameFormatter"},
	{DP "pandas/io/parsers/readers.py", K_PANDAS, 1, 0, "TextFileReader"},
	{DP "pandas/io/common.py", K_PANDAS, 1, 0, NULL},
	{DP "numpy/core/fromnumeric.py", K_NUMPY, 2, 1, NULL},
	{DP "numpy/core/_methods.py", K_NUMPY, 1, 0, NULL},
	{DP "numpy/core/numeric.py", K_NUMPY, 1, 1, NULL},
	{DP "numpy/lib/function_base.py", K_NUMPY, 1, 1, NULL},
	{DP "numpy/lib/arraysetops.py", K_NUMPY, 1, 0, NULL},
	{PY "logging/__init__.py", K_STDLIB, 3, 1, "Logger,LogRecord,StreamHandler"},
	{PY "json/__init__.py", K_STDLIB, 1, 1, NULL},
	{PY "json/encoder.py", K_STDLIB, 1, 0, "JSONEncoder"},
	{PY "copy.py", K_STDLIB, 1, 1, NULL},
	{PY "re/__init__.py", K_STDLIB, 2, 1, NULL},
	{PY "tokenize.py", K_STDLIB, 2, 1, NULL},
	{PY "functools.py", K_STDLIB, 1, 0, NULL},
	{PY "typing.py", K_STDLIB, 1, 0, "_GenericAlias"},
	{PY "enum.py", K_STDLIB, 1, 0, "EnumType"},
	{PY "contextlib.py", K_STDLIB, 1, 0, "_GeneratorContextManager"},
	{"<frozen abc>", K_STDLIB, 1, 0, NULL},
	{"<frozen posixpath>", K_STDLIB, 1, 0, NULL},
	{"<__array_function__ internals>", K_NUMPY, 1, 0, NULL},
};
#define NLIBFILES ((int)(sizeof LIBFILES / sizeof *LIBFILES))

/* Knobs of the synthetic program.  Tuned (see tests/gen/README.md) so that
 * depth, sharing, vocabulary and compressibility match real sessions. */
#define LIB_LEVELS 12        /* internal levels below the entry points */
/*
 * The library's shape: functions per unit of file weight, how strongly a
 * library call prefers the popular callees of its level (Zipf exponent),
 * how often a library branch is re-drawn (exec_fn), a factor on the own
 * time of every function (the library's and the model's: how long a call
 * runs against the 1 ms between samples), and on how many lines a library
 * call statement may be (exec_fn). `--library narrow` (the default, 10,
 * 2.2, 0.08, 1, 1) is what the regression tests are calibrated on
 * (seed-to-seed spread, --new-function shares); under container version 6
 * the session codec saw its call tree 31% and its sample references 14%
 * cheaper to code than the real 78 MB run's. `--library wide` (16, 1.8,
 * 0.3, 0.5, 2) is tuned on the real runs' bits per sample
 * (tests/e2e/test_gen_codec_bits.sh), and the codec's benchmarks use it.
 * Its own times are half of narrow's: with whole ones its events ran too
 * long against the 1 ms between samples, and its sample references came
 * out 9-15% cheaper than real. Its calls are on one or two lines:
 * version 7 codes the stacks with one model whose candidates at a level
 * are the frames last taken at the node and after the parent frame, and
 * with every call on one line the generated library had too few distinct
 * call-site frames (a function's frame at a line) and too few children
 * per frame: the model gained 30% on generated stacks against 21-22% on
 * real ones, and generated stacks came out 9% (78 MB) and 17% (4 MB)
 * cheaper than real. With half the call statements on one of two lines
 * (the branch of an if/else, a hash of the call path like the other
 * library branches) they are +4.5% and -2.8%; the branches re-drawn 30%
 * of the time instead of 40% keep the 78 MB run from overshooting (40%:
 * +5.3% and -3.5%). The measurements and the reasons:
 * tests/gen/README.md, "What the session codec sees". Its runs of 6
 * months at population 100 spread 10-19% from seed to seed (measured with
 * whole own times and calls on one line).
 */
static const struct library_shape library_narrow = { 10, 2.2, 0.08, 1.0, 1 };
static const struct library_shape library_wide = { 16, 1.8, 0.3, 0.5, 2 };
#define LIB_FNS_PER_UNIT (m->lib->fns_per_unit)
#define LIB_CALLEE_ZIPF (m->lib->callee_zipf)
#define LIB_API_SHARE 0.22   /* of the functions of an api file */
#define MODEL_HELPERS_MIN 5
#define MODEL_HELPERS_MAX 11
#define MONTH_MS 2000.0      /* simulated work per month at population 1000 */

/* levels */
#define LV_APPLY 10
#define LV_HELPER 11
#define LV_SERVICE 14
#define LV_LIB 20
#define LV_BUILTIN 40

static void lib_body(struct model *m, struct rng *r, int fn, int **bylevel, int *nbylevel,
		     int builtin0, int nbuiltins)
{
	struct gfn *g = &m->fns[fn];
	int lvl = g->level - LV_LIB; /* 0 = api */
	int nst = 1 + rng_below(r, 3) + (rng_unit(r) < 0.2 ? (int)rng_below(r, 3) : 0);
	int off = 1 + (rng_unit(r) < 0.5 ? rng_range(r, 2, 60) : rng_range(r, 0, 6));
	double pself = 0.08 + 0.045 * lvl;
	if (pself > 0.7)
		pself = 0.7;
	int has_self = 0;
	for (int i = 0; i < nst; i++) {
		double u = rng_unit(r);
		int last_level = lvl >= LIB_LEVELS;
		if (u < pself || (last_level && u < 0.75)) {
			/* pure-Python stdlib code (tokenize, logging, json) is
			 * slow per line compared with pandas' C-backed work */
			double k = m->files[g->file].kind == K_STDLIB ? 4.0 : 1.0;
			st_self(m, fn, off, k * (1.5 + rng_exp(r, 6.0)));
			has_self = 1;
		} else if (u < pself + 0.12 || last_level) {
			int b = builtin0 + (int)rng_zipf_index(r, (uint32_t)nbuiltins, 1.6);
			struct gstmt *s = st_call(m, fn, off, b, CLS_NONE);
			if (rng_unit(r) < 0.3)
				s->prob = (uint8_t)rng_range(r, 60, 220);
		} else {
			int dl = 1;
			double v = rng_unit(r);
			if (v > 0.80)
				dl = 2;
			if (v > 0.95)
				dl = 3;
			int tl = lvl + dl;
			if (tl > LIB_LEVELS)
				tl = LIB_LEVELS;
			int *cands = bylevel[tl];
			int nc = nbylevel[tl];
			int t = cands[rng_zipf_index(r, (uint32_t)nc, LIB_CALLEE_ZIPF)];
			/* prefer staying in the same package, as real call graphs do */
			for (int k = 0; k < 3 && m->files[m->fns[t].file].kind != m->files[g->file].kind; k++)
				t = cands[rng_zipf_index(r, (uint32_t)nc, 2.2)];
			struct gstmt *s = st_call(m, fn, off, t, pick_call_cls(m, r, t));
			if (s->cls == CLS_INHERIT && !g->ncls)
				s->cls = m->fns[t].cls[rng_below(r, (uint32_t)m->fns[t].ncls)];
			if (rng_unit(r) < 0.35)
				s->prob = (uint8_t)rng_range(r, 40, 230);
			if (rng_unit(r) < 0.06)
				s->reps = (uint16_t)rng_range(r, 2, 6);
		}
		off += 1 + (rng_unit(r) < 0.4 ? rng_range(r, 1, 25) : 0);
	}
	if (!has_self)
		st_self(m, fn, off, 1.0 + rng_exp(r, 3.0));
}

static void build_library(struct model *m, struct rng *r)
{
	int *files = xrealloc(NULL, sizeof(int) * NLIBFILES);
	int nlevels = LIB_LEVELS + 1;
	int **bylevel = xrealloc(NULL, sizeof(int *) * (size_t)nlevels);
	int *nby = calloc((size_t)nlevels, sizeof(int));
	int *capby = calloc((size_t)nlevels, sizeof(int));
	for (int l = 0; l < nlevels; l++)
		bylevel[l] = NULL;

	for (int i = 0; i < NLIBFILES; i++)
		files[i] = add_file(m, LIBFILES[i].path, LIBFILES[i].kind, LIBFILES[i].classes);

	/* builtins first: they are the leaves every level may call */
	int bfile = add_file(m, "<built-in>", K_BUILTIN, NULL);
	m->builtin0 = m->nfns;
	for (size_t i = 0; i < sizeof BUILTINS / sizeof *BUILTINS; i++) {
		int b = add_fn(m, BUILTINS[i], bfile, LV_BUILTIN);
		st_self(m, b, 0, 2.0 + rng_exp(r, 8.0));
	}
	m->builtin1 = m->nfns;
	m->rand_builtin0 = m->nfns;
	for (size_t i = 0; i < sizeof RAND_BUILTINS / sizeof *RAND_BUILTINS; i++) {
		int b = add_fn(m, RAND_BUILTINS[i], bfile, LV_BUILTIN);
		st_self(m, b, 0, 8.0 + rng_exp(r, 20.0));
	}
	m->rand_builtin1 = m->nfns;
	m->fn_heappop = add_fn(m, "heappop", bfile, LV_BUILTIN);
	st_self(m, m->fn_heappop, 0, 4.0);

	/* create functions: api ones at level 0, the rest spread over levels */
	int fn0 = m->nfns;
	for (int i = 0; i < NLIBFILES; i++) {
		int n = LIBFILES[i].weight * LIB_FNS_PER_UNIT + rng_range(r, 0, 4);
		struct gfile *f = &m->files[files[i]];
		for (int k = 0; k < n; k++) {
			int level;
			if (LIBFILES[i].api && rng_unit(r) < LIB_API_SHARE)
				level = 0;
			else
				level = 1 + (int)rng_zipf_index(r, LIB_LEVELS, 1.25);
			char *name = make_name(m, r, files[i], 1);
			int fn = add_fn(m, name, files[i], LV_LIB + level);
			free(name);
			f = &m->files[files[i]];
			if (f->ncls && rng_unit(r) < 0.8) {
				/* polymorphic base-class methods run with several classes */
				int first = (int)rng_below(r, (uint32_t)f->ncls);
				fn_set_class(m, fn, f->cls[first]);
				for (int c = 0; c < f->ncls; c++)
					if (c != first && rng_unit(r) < 0.5)
						fn_set_class(m, fn, f->cls[c]);
			}
			GROW(bylevel[level], nby[level], capby[level]);
			bylevel[level][nby[level]++] = fn;
		}
	}
	for (int l = 0; l < nlevels; l++)
		if (!nby[l]) { /* never empty: borrow one function */
			GROW(bylevel[l], nby[l], capby[l]);
			bylevel[l][nby[l]++] = fn0 + l;
		}
	int fn1 = m->nfns;
	/* Shuffle each level so that hubs (low zipf indexes) are spread over
	 * files rather than all in frame.py. */
	for (int l = 0; l < nlevels; l++)
		for (int i = nby[l] - 1; i > 0; i--) {
			int j = (int)rng_below(r, (uint32_t)i + 1), t = bylevel[l][i];
			bylevel[l][i] = bylevel[l][j];
			bylevel[l][j] = t;
		}
	for (int fn = fn0; fn < fn1; fn++)
		lib_body(m, r, fn, bylevel, nby, m->builtin0, m->builtin1 - m->builtin0);

	/* Entry points: the level-0 functions, in shuffled (hub-first) order. */
	m->lib_api0 = m->nfns;
	for (int i = 0; i < nby[0]; i++) {
		/* an api list as a contiguous range of alias functions keeps the
		 * model side simple: model code calls lib_api0 + k */
		int t = bylevel[0][i];
		int a = add_fn(m, m->fns[t].name, m->fns[t].file, LV_LIB - 1);
		m->fns[a].alias = t;
		for (int c = 0; c < m->fns[t].ncls; c++)
			fn_set_class(m, a, m->fns[t].cls[c]);
		/* the alias runs the real body: copy its statements */
		struct gfn *src = &m->fns[t];
		for (int s = 0; s < src->nstmt; s++) {
			struct gstmt copy = m->stmts[src->stmt0 + s];
			struct gstmt *d = add_stmt(m, a, copy.kind);
			*d = copy;
			src = &m->fns[t];
		}
	}
	m->lib_api1 = m->nfns;

	/* Decorator wrappers: many entry points are reached through
	 * pandas/util/_decorators.py "wrapper" frames (a third of real stacks
	 * show one).  Each wrapped entry gets its own alias of the wrapper whose
	 * body calls it. */
	int dfile = add_file(m, DP "pandas/util/_decorators.py", K_PANDAS, NULL);
	int wrappers[3];
	for (int w = 0; w < 3; w++) {
		wrappers[w] = add_fn(m, "wrapper", dfile, LV_LIB - 3);
		st_self(m, wrappers[w], 8 + w * 3, 1.0);
	}
	int ocfile = add_file(m, DP "pandas/core/ops/common.py", K_PANDAS, NULL);
	int new_method = add_fn(m, "new_method", ocfile, LV_LIB - 3);
	st_self(m, new_method, 15, 1.0);
	int napi = m->lib_api1 - m->lib_api0;
	for (int i = 0; i < napi; i++) {
		struct gfn *api = &m->fns[m->lib_api0 + i];
		if (rng_unit(r) > 0.35)
			continue;
		int base = api->name[0] == '_' && api->name[1] == '_' ? new_method : wrappers[rng_below(r, 3)];
		int w = add_fn(m, m->fns[base].name, m->fns[base].file, LV_LIB - 2);
		m->fns[w].alias = base;
		st_self(m, w, m->stmts[m->fns[base].stmt0].off - 2, 0.8);
		st_call(m, w, m->stmts[m->fns[base].stmt0].off, m->lib_api0 + i, CLS_INHERIT);
		/* the model calls the wrapper in place of the entry point */
		m->fns[w].wraps = m->lib_api0 + i;
	}
	for (int l = 0; l < nlevels; l++)
		free(bylevel[l]);
	free(bylevel);
	free(nby);
	free(capby);
	free(files);
}

/* ---------------------------------------------------------- model graph */

struct modspec {
	int file;
	int cls; /* module class */
	int helpers0, helpers1;
	int read_params, init_pop;
};

/* Model-side call to a library entry point: through its decorator wrapper
 * when it has one. */
static int *api_entry; /* api index -> function to call */

static int lib_entry(struct model *m, struct rng *r, double skew)
{
	int napi = m->lib_api1 - m->lib_api0;
	int k = (int)rng_zipf_index(r, (uint32_t)napi, skew);
	return api_entry[k];
}

/* An entry point of one library file (path containing `part`), through its
 * wrapper if it has one; a random one when the file has none. */
static int file_entry(struct model *m, struct rng *r, const char *part)
{
	int napi = m->lib_api1 - m->lib_api0, n = 0, pick = -1;
	for (int k = 0; k < napi; k++)
		if (strstr(m->files[m->fns[m->lib_api0 + k].file].path, part) && rng_below(r, (uint32_t)++n) == 0)
			pick = k;
	return pick < 0 ? lib_entry(m, r, 1.9) : api_entry[pick];
}

static void call_lib_at(struct model *m, struct rng *r, int fn, int off, int t)
{
	int cls = CLS_NONE;
	struct gfn *tg = &m->fns[t];
	if (tg->ncls)
		cls = tg->cls[rng_below(r, (uint32_t)tg->ncls)];
	else if (tg->wraps >= 0) { /* wrapper: pick the target's class */
		struct gfn *inner = &m->fns[tg->wraps];
		if (inner->ncls)
			cls = inner->cls[rng_below(r, (uint32_t)inner->ncls)];
	}
	struct gstmt *s = st_call(m, fn, off, t, cls);
	if (rng_unit(r) < 0.25)
		s->prob = (uint8_t)rng_range(r, 80, 230);
}

static void call_lib(struct model *m, struct rng *r, int fn, int off)
{
	call_lib_at(m, r, fn, off, lib_entry(m, r, 1.9));
}

/* services shared by all modules: (fn, class) to call */
struct service {
	int fn;
	int cls;
};

static void model_body(struct model *m, struct rng *r, int fn, int nst, const struct service *svc,
		       int nsvc, int h0, int h1, int mcls, double loop_chance)
{
	struct gfn *g = &m->fns[fn];
	int off = 1 + rng_range(r, 0, 4);
	int has_self = 0;
	for (int i = 0; i < nst; i++) {
		double u = rng_unit(r);
		int nh = 0;
		for (int h = h0; h < h1; h++)
			nh += m->fns[h].level > g->level;
		if (u < 0.28) {
			st_self(m, fn, off, 8.0 + rng_exp(r, 40.0));
			has_self = 1;
		} else if (u < 0.45 && nh) {
			int h;
			do
				h = h0 + (int)rng_below(r, (uint32_t)(h1 - h0));
			while (m->fns[h].level <= g->level);
			int cls = m->fns[h].ncls ? m->fns[h].cls[0] : CLS_NONE;
			if (cls >= 0 && cls != mcls && g->ncls)
				cls = CLS_INHERIT;
			struct gstmt *s = st_call(m, fn, off, h, cls);
			if (rng_unit(r) < 0.3)
				s->prob = (uint8_t)rng_range(r, 60, 220);
			if (rng_unit(r) < loop_chance)
				s->reps = (uint16_t)rng_range(r, 2, 8);
		} else if (u < 0.65 && nsvc) {
			const struct service *sv = &svc[rng_zipf_index(r, (uint32_t)nsvc, 1.4)];
			if (m->fns[sv->fn].level <= g->level) {
				call_lib(m, r, fn, off);
			} else {
				struct gstmt *s = st_call(m, fn, off, sv->fn, sv->cls);
				if (rng_unit(r) < 0.3)
					s->prob = (uint8_t)rng_range(r, 60, 220);
				if (rng_unit(r) < loop_chance)
					s->reps = (uint16_t)rng_range(r, 2, 5);
			}
		} else if (u < 0.70) {
			int b = m->rand_builtin0 + (int)rng_below(r, (uint32_t)(m->rand_builtin1 - m->rand_builtin0));
			st_call(m, fn, off, b, CLS_NONE);
		} else {
			call_lib(m, r, fn, off);
			if (rng_unit(r) < loop_chance)
				m->stmts[m->nstmts - 1].reps = (uint16_t)rng_range(r, 2, 6);
		}
		off += 1 + (rng_unit(r) < 0.3 ? rng_range(r, 1, 6) : 0);
	}
	if (!has_self)
		st_self(m, fn, off, 2.0 + rng_exp(r, 5.0));
}

static int add_method(struct model *m, struct rng *r, const char *name, int file, int level, int cls)
{
	char *n = name ? xstrdup(name) : make_name(m, r, file, 0);
	int fn = add_fn(m, n, file, level);
	free(n);
	if (cls >= 0)
		fn_set_class(m, fn, cls);
	return fn;
}

static int add_event(struct model *m, int cls, int module, int kind, double weight)
{
	GROW(m->events, m->nevents, m->capevents);
	struct event_class *e = &m->events[m->nevents];
	memset(e, 0, sizeof *e);
	e->cls = cls;
	e->module = module;
	e->kind = kind;
	e->weight = weight;
	e->fire_fn = -1;
	return m->nevents++;
}

static void build_model(struct model *m, struct rng *r)
{
	const char *root = "/tmp/model";
	char path[256];

	build_library(m, r);

	/* Entry points reached through wrappers replace the plain entry for a
	 * share of call sites: api_entry maps an api index to what model code
	 * calls. */
	int napi = m->lib_api1 - m->lib_api0;
	api_entry = xrealloc(NULL, sizeof(int) * (size_t)napi);
	for (int i = 0; i < napi; i++)
		api_entry[i] = m->lib_api0 + i;
	for (int fn = m->lib_api1; fn < m->nfns; fn++)
		if (m->fns[fn].wraps >= 0)
			api_entry[m->fns[fn].wraps - m->lib_api0] = fn;

	/* ---- files and fixed frames */
	snprintf(path, sizeof path, "%s/scripts/run_profile.py", root);
	int script = add_file(m, path, K_SCRIPT, NULL);
	snprintf(path, sizeof path, "%s/src/popsimulation/core.py", root);
	int core = add_file(m, path, K_MODEL, NULL);
	snprintf(path, sizeof path, "%s/src/popsimulation/lm.py", root);
	int lm = add_file(m, path, K_MODEL, NULL);
	snprintf(path, sizeof path, "%s/src/popsimulation/logging.py", root);
	int logf = add_file(m, path, K_MODEL, NULL);
	snprintf(path, sizeof path, "%s/src/popsimulation/util.py", root);
	int utilf = add_file(m, path, K_MODEL, NULL);
	const char *svc_mods[] = {"healthsystem", "symptommanager", "demography", "healthseekingbehaviour", "enhanced_lifestyle"};
	const char *svc_cls[] = {"HealthSystem", "SymptomManager", "Demography", "HealthSeekingBehaviour", "Lifestyle"};
	int svc_files[5];
	for (int i = 0; i < 5; i++) {
		snprintf(path, sizeof path, "%s/src/popsimulation/methods/%s.py", root, svc_mods[i]);
		svc_files[i] = add_file(m, path, K_MODEL, NULL);
	}

	int cls_sim = m->cls_sim = add_class(m, "Simulation");
	int cls_logger = add_class(m, "StructuredLogger");
	int cls_lm = add_class(m, "LinearModel");
	int cls_pred = add_class(m, "Predictor");
	int cls_queue = add_class(m, "EventQueue");

	/* run_profile.py: the script's functions, in file order */
	int fn_build = m->fn_build = add_fn(m, "build_simulation", script, 1);
	int fn_run = m->fn_run = add_fn(m, "run", script, 1);
	int fn_main = m->fn_main = add_fn(m, "main", script, 1);
	int fn_module = m->fn_module = add_fn(m, "<module>", script, 0);

	/* core.py */
	int fn_log_info = add_method(m, r, "info", core, LV_SERVICE + 3, cls_logger);
	int fn_log_fmt = add_method(m, r, "_format_row", core, LV_SERVICE + 4, cls_logger);
	int fn_event_run = add_method(m, r, "run", core, 2, -1); /* aliased per event class */
	int fn_sched = add_method(m, r, "schedule_event", core, LV_SERVICE + 1, cls_sim);
	int fn_push = add_method(m, r, "push", core, LV_SERVICE + 2, cls_queue);
	int fn_register = add_method(m, r, "register", core, 2, cls_sim);
	int fn_init_pop = m->fn_init_pop = add_method(m, r, "make_initial_population", core, 2, cls_sim);
	int fn_simulate = m->fn_simulate = add_method(m, r, "simulate", core, 2, cls_sim);
	int fn_fire = add_method(m, r, "fire_single_event", core, 3, cls_sim);
	int fn_finalise = m->fn_finalise = add_method(m, r, "finalise", core, 2, cls_sim);
	m->fn_month_log = add_method(m, r, "log_monthly_summary", core, 3, cls_sim);

	/* lm.py: LinearModel.predict -> Predictor.predict -> _evaluate_condition -> pandas */
	int fn_lm_predict = add_method(m, r, "predict", lm, LV_SERVICE, cls_lm);
	int fn_pred_predict = add_method(m, r, "predict", lm, LV_SERVICE + 1, cls_pred);
	int fn_eval_cond = add_method(m, r, "_evaluate_condition", lm, LV_SERVICE + 2, cls_pred);
	int fn_lm_multi = add_method(m, r, "multiplicative", lm, LV_SERVICE, cls_lm);

	int fn_util[4];
	for (int i = 0; i < 4; i++)
		fn_util[i] = add_method(m, r, NULL, utilf, LV_SERVICE + 2, -1);
	int fn_logf = add_method(m, r, "log_event", logf, LV_SERVICE + 2, -1);

	/* shared services: a few methods per service module */
	struct service svc[64];
	int nsvc = 0;
	svc[nsvc++] = (struct service){fn_lm_predict, cls_lm};
	svc[nsvc++] = (struct service){fn_sched, cls_sim};
	svc[nsvc++] = (struct service){fn_log_info, cls_logger};
	int svc_fns0 = m->nfns;
	for (int i = 0; i < 5; i++) {
		int c = add_class(m, svc_cls[i]);
		int n = rng_range(r, 4, 8);
		for (int k = 0; k < n; k++) {
			int lvl = LV_SERVICE + (k < n / 2 ? 0 : 1);
			int fn = add_method(m, r, NULL, svc_files[i], lvl, c);
			if (k < n / 2 && nsvc < 64)
				svc[nsvc++] = (struct service){fn, c};
		}
	}
	int svc_fns1 = m->nfns;
	svc[nsvc++] = (struct service){fn_lm_multi, cls_lm};
	/* shuffle so that hot services are not all from the same module */
	for (int i = nsvc - 1; i > 3; i--) {
		int j = 3 + (int)rng_below(r, (uint32_t)(i - 2));
		struct service t = svc[i];
		svc[i] = svc[j];
		svc[j] = t;
	}

	/* disease modules */
	int nmods = (int)(sizeof MODULES / sizeof *MODULES);
	struct modspec *mods = xrealloc(NULL, sizeof *mods * (size_t)(nmods + 5));
	for (int i = 0; i < nmods; i++) {
		char cname[96], ename[128];
		snprintf(path, sizeof path, "%s/src/popsimulation/methods/%s.py", root, MODULES[i]);
		int f = add_file(m, path, K_MODEL, NULL);
		camel(MODULES[i], cname, sizeof cname);
		int mc = add_class(m, cname);
		mods[i].file = f;
		mods[i].cls = mc;
		mods[i].read_params = add_method(m, r, "read_parameters", f, 3, mc);
		mods[i].init_pop = add_method(m, r, "initialise_population", f, 3, mc);
		add_method(m, r, "on_birth", f, LV_HELPER, mc);
		mods[i].helpers0 = m->nfns - 1;
		int nh = rng_range(r, MODEL_HELPERS_MIN, MODEL_HELPERS_MAX);
		for (int k = 0; k < nh; k++)
			add_method(m, r, NULL, f, LV_HELPER + (k % 4 == 3), rng_unit(r) < 0.85 ? mc : -1);
		mods[i].helpers1 = m->nfns;

		/* event classes of the module, with their apply() methods */
		snprintf(ename, sizeof ename, "%sPollingEvent", cname);
		add_event(m, add_class(m, ename), i, 0, 1.0);
		snprintf(ename, sizeof ename, "%sLoggingEvent", cname);
		add_event(m, add_class(m, ename), i, 0, 0.3);
		const char *kinds[] = {"OnsetEvent", "DeathEvent", "ProgressionEvent", "RecoveryEvent", "CureEvent"};
		int nind = rng_range(r, 1, 3);
		for (int k = 0; k < nind; k++) {
			snprintf(ename, sizeof ename, "%s%s", cname, kinds[(k + i) % 5]);
			add_event(m, add_class(m, ename), i, 2, 0.2 + rng_exp(r, 1.0));
		}
		const char *hsi[] = {"Treatment", "Screening", "Investigation", "FollowUp"};
		int nhsi = rng_range(r, 0, 2);
		for (int k = 0; k < nhsi; k++) {
			snprintf(ename, sizeof ename, "HSI_%s_%s", cname, hsi[(k + i) % 4]);
			add_event(m, add_class(m, ename), i, 2, 0.2 + rng_exp(r, 0.8));
		}
	}
	/* the daily scheduler of the health system */
	int hs_mod = nmods;
	mods[hs_mod].file = svc_files[0];
	mods[hs_mod].cls = add_class(m, "HealthSystem");
	mods[hs_mod].helpers0 = svc_fns0;
	mods[hs_mod].helpers1 = svc_fns0; /* none of its own beyond the services */
	mods[hs_mod].read_params = mods[hs_mod].init_pop = -1;
	add_event(m, add_class(m, "HealthSystemScheduler"), hs_mod, 1, 1.0);
	int gfa = add_class(m, "HSI_GenericFirstApptAtFacilityLevel0");
	add_event(m, gfa, hs_mod, 2, 2.0);

	/* apply() of each event class lives in its module's file */
	int apply0 = m->nfns;
	for (int e = 0; e < m->nevents; e++) {
		struct event_class *ev = &m->events[e];
		add_method(m, r, "apply", mods[ev->module].file, LV_APPLY, ev->cls);
	}

	/* ---- bodies, now that every function exists */

	/* services: call each other downward, pandas, logging */
	for (int fn = svc_fns0; fn < svc_fns1; fn++)
		model_body(m, r, fn, rng_range(r, 2, 5), svc, nsvc, svc_fns0, svc_fns1, m->fns[fn].cls[0], 0.1);
	/* lm: predictors evaluated one after another, each a pandas eval/query */
	st_self(m, fn_lm_predict, 2, 4.0);
	struct gstmt *s = st_call(m, fn_lm_predict, 3, fn_pred_predict, cls_pred);
	s->reps = 6;
	st_self(m, fn_lm_predict, 5, 3.0);
	st_self(m, fn_lm_multi, 2, 4.0);
	s = st_call(m, fn_lm_multi, 4, fn_pred_predict, cls_pred);
	s->reps = 4;
	st_self(m, fn_pred_predict, 3, 2.0);
	s = st_call(m, fn_pred_predict, 5, fn_eval_cond, cls_pred);
	s->prob = 200;
	for (int k = 0; k < 4; k++)
		call_lib(m, r, fn_pred_predict, 7 + k * 2);
	st_self(m, fn_eval_cond, 1, 6.0);
	call_lib_at(m, r, fn_eval_cond, 2, file_entry(m, r, "computation/eval.py"));
	call_lib_at(m, r, fn_eval_cond, 3, file_entry(m, r, "tokenize.py"));
	m->stmts[m->nstmts - 1].reps = 4;
	call_lib(m, r, fn_eval_cond, 4);
	/* logging: formatted as JSON, written through the logging module */
	st_self(m, fn_log_info, 3, 8.0);
	st_call(m, fn_log_info, 6, fn_log_fmt, CLS_INHERIT);
	call_lib_at(m, r, fn_log_info, 9, file_entry(m, r, "logging/__init__.py"));
	call_lib_at(m, r, fn_log_info, 10, file_entry(m, r, "logging/__init__.py"));
	st_self(m, fn_log_fmt, 2, 6.0);
	call_lib_at(m, r, fn_log_fmt, 4, file_entry(m, r, "json/__init__.py"));
	call_lib_at(m, r, fn_log_fmt, 5, file_entry(m, r, "re/__init__.py"));
	/* schedule_event: push on the heap */
	st_self(m, fn_sched, 2, 3.0);
	st_call(m, fn_sched, 5, fn_push, cls_queue);
	st_self(m, fn_push, 1, 2.0);
	st_call(m, fn_push, 2, m->builtin0 + 1, CLS_NONE);
	for (int i = 0; i < 4; i++)
		model_body(m, r, fn_util[i], rng_range(r, 2, 4), NULL, 0, 0, 0, -1, 0.0);
	model_body(m, r, fn_logf, 3, NULL, 0, 0, 0, -1, 0.0);

	/* modules: helpers and applies.  Module helpers can also use the util
	 * and logging functions. */
	struct service svc2[72];
	memcpy(svc2, svc, sizeof(struct service) * (size_t)nsvc);
	int nsvc2 = nsvc;
	for (int i = 0; i < 4; i++)
		svc2[nsvc2++] = (struct service){fn_util[i], CLS_NONE};
	svc2[nsvc2++] = (struct service){fn_logf, CLS_NONE};
	for (int i = 0; i < nmods; i++) {
		for (int fn = mods[i].helpers0; fn < mods[i].helpers1; fn++)
			model_body(m, r, fn, rng_range(r, 2, 6), svc2, nsvc2, mods[i].helpers0,
				   mods[i].helpers1, mods[i].cls, 0.3);
		/* start-up: read parameters (pandas read_csv) and initialise */
		model_body(m, r, mods[i].read_params, rng_range(r, 2, 4), NULL, 0, 0, 0, mods[i].cls, 0.0);
		model_body(m, r, mods[i].init_pop, rng_range(r, 4, 9), svc2, 3, mods[i].helpers0,
			   mods[i].helpers1, mods[i].cls, 0.2);
	}
	for (int e = 0; e < m->nevents; e++) {
		struct event_class *ev = &m->events[e];
		struct modspec *md = &mods[ev->module];
		int nst = ev->kind == 0 ? rng_range(r, 5, 9) : ev->kind == 1 ? rng_range(r, 8, 12) : rng_range(r, 3, 5);
		double loops = ev->kind == 2 ? 0.1 : 0.35;
		model_body(m, r, apply0 + e, nst, svc2, nsvc2, md->helpers0, md->helpers1, ev->cls, loops);
	}

	/* Event.run per event class (one frame string, body calls that apply) */
	for (int e = 0; e < m->nevents; e++) {
		int a = add_fn(m, "run", core, 4);
		m->fns[a].alias = fn_event_run;
		fn_set_class(m, a, m->events[e].cls);
		st_call(m, a, 1, apply0 + e, CLS_INHERIT);
		st_self(m, a, 2, 2.0);
		int f = add_fn(m, "fire_single_event", core, 3);
		m->fns[f].alias = fn_fire;
		fn_set_class(m, f, cls_sim);
		st_self(m, f, 1, 2.0);
		st_call(m, f, 2, a, m->events[e].cls);
		st_self(m, f, 4, 1.0);
		m->events[e].fire_fn = f;
	}
	st_self(m, fn_event_run, 1, 1.0);
	st_self(m, fn_fire, 1, 1.0);

	/* core driver functions: offsets are what the C driver sets as lines */
	st_self(m, fn_register, 2, 3.0);
	for (int i = 0; i < nmods; i++)
		st_call(m, fn_register, 6, mods[i].read_params, mods[i].cls);
	st_self(m, fn_init_pop, 2, 5.0);
	for (int i = 0; i < nmods; i++)
		st_call(m, fn_init_pop, 3, mods[i].init_pop, mods[i].cls);
	st_self(m, fn_simulate, 4, 1.0);  /* pop from the queue */
	st_self(m, fn_simulate, 6, 1.0);  /* fire */
	st_self(m, fn_simulate, 8, 1.0);  /* month summary */
	m->simulate_pop_off = 4;
	m->simulate_fire_off = 6;
	m->simulate_log_off = 8;
	model_body(m, r, m->fn_month_log, 4, svc, 3, 0, 0, cls_sim, 0.0);
	model_body(m, r, fn_finalise, 3, svc, 3, 0, 0, cls_sim, 0.0);

	/* run_profile.py */
	st_self(m, fn_build, 1, 10.0);
	st_call(m, fn_build, 2, fn_register, cls_sim);
	st_self(m, fn_run, 1, 1.0);
	st_self(m, fn_run, 2, 1.0);
	st_self(m, fn_run, 3, 1.0);
	st_self(m, fn_run, 4, 1.0);
	m->run_build_off = 1;
	m->run_init_off = 2;
	m->run_sim_off = 3;
	m->run_fin_off = 4;
	st_self(m, fn_main, 18, 1.0);
	st_self(m, fn_main, 19, 1.0);
	m->main_start_off = 18;
	m->main_run_off = 19;
	st_self(m, fn_module, 73, 1.0);
	m->mod_main_off = 73;

	/* event rates: relative weights, scaled after costs are known */
	for (int e = 0; e < m->nevents; e++)
		m->events[e].rate = m->events[e].weight;
	free(mods);
}

/* Assign def lines: functions follow each other in their file with gaps
 * (blank lines, docstrings; long ones in the libraries). */
static void layout(struct model *m, struct rng *r)
{
	for (int fn = 0; fn < m->nfns; fn++) {
		struct gfn *g = &m->fns[fn];
		if (g->alias >= 0)
			continue;
		struct gfile *f = &m->files[g->file];
		if (f->kind == K_BUILTIN || f->kind == K_THREAD) {
			g->first_line = 0;
			continue;
		}
		int lib = f->kind == K_PANDAS || f->kind == K_NUMPY || f->kind == K_STDLIB;
		int span = last_off(m, fn) + 2;
		if (fn == m->fn_module) {
			g->first_line = 1;
			continue;
		}
		if (f->kind == K_SCRIPT && f->cursor < 22)
			f->cursor = 22;
		if (f->cursor == 1)
			f->cursor = lib ? rng_range(r, 20, 300) : rng_range(r, 10, 40);
		g->first_line = f->cursor;
		g->span = span;
		f->cursor += span + (lib ? rng_range(r, 3, 120) : rng_range(r, 2, 12));
	}
	for (int fn = 0; fn < m->nfns; fn++) {
		struct gfn *g = &m->fns[fn];
		if (g->alias >= 0)
			g->first_line = m->fns[g->alias].first_line;
	}
}

/*
 * JSON text of a UTF-8 string as Python's json.dump writes it with
 * ensure_ascii: `"` and `\` escaped, \n \r \t \b \f short, other controls
 * and every non-ASCII character as \uXXXX in lower-case hex, characters
 * beyond U+FFFF as a surrogate pair. The caller frees the result.
 */
static char *json_ascii(const char *utf8)
{
	size_t n = strlen(utf8), k = 0;
	char *out = malloc(n * 12 + 1);
	const unsigned char *p = (const unsigned char *)utf8;

	if (!out)
		abort();
	while (*p) {
		uint32_t c = *p++;
		int more = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;

		if (more) {
			c &= 0x3fu >> more;
			while (more-- && (*p & 0xc0) == 0x80)
				c = c << 6 | (*p++ & 0x3f);
		}
		if (c == '"' || c == '\\') {
			out[k++] = '\\';
			out[k++] = (char)c;
		} else if (c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f') {
			out[k++] = '\\';
			out[k++] = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : c == '\b' ? 'b' : 'f';
		} else if (c >= 0x20 && c < 0x7f) {
			out[k++] = (char)c;
		} else if (c > 0xffff) {
			c -= 0x10000;
			k += (size_t)sprintf(out + k, "\\u%04x\\u%04x", 0xd800 + (c >> 10), 0xdc00 + (c & 0x3ff));
		} else {
			k += (size_t)sprintf(out + k, "\\u%04x", c);
		}
	}
	out[k] = '\0';
	return out;
}

/*
 * --names unicode: some functions and files get names real code has too
 * (accents, CJK, an emoji, a quote and a backslash in a path), written
 * with the escapes json.dump uses, so that nothing downstream can assume
 * frame strings are plain identifiers.
 */
static const char *const unicode_fn_suffix[] = { "_donn\xc3\xa9" "es", "_\xe8\xae\xa1\xe7\xae\x97", "_\xf0\x9f\x98\x80", "_\xce\xb1\xce\xb2" };
static const char *const unicode_dir[] = { "r\xc3\xa9sultats", "odd\"name\\dir", "\xe6\xa8\xa1\xe5\x9e\x8b" };

static void render_prefixes(struct model *m)
{
	for (int fn = 0; fn < m->nfns; fn++) {
		struct gfn *g = &m->fns[fn];
		free(g->prefix);
		if (m->unicode_names && (fn % 7 == 3 || g->file % 5 == 2)) {
			const char *path = m->files[g->file].path, *slash = strrchr(path, '/');
			char *raw_name = xfmt("%s%s", g->name, fn % 7 == 3 ? unicode_fn_suffix[fn / 7 % 4] : "");
			char *raw_path = g->file % 5 == 2 && slash
				? xfmt("%.*s/%s%s", (int)(slash - path), path, unicode_dir[g->file / 5 % 3], slash)
				: xfmt("%s", path);
			char *jn = json_ascii(raw_name), *jp = json_ascii(raw_path);

			g->prefix = xfmt("%s\\u0000%s\\u0000%d", jn, jp, g->first_line);
			free(raw_name);
			free(raw_path);
			free(jn);
			free(jp);
		} else {
			g->prefix = xfmt("%s\\u0000%s\\u0000%d", g->name, m->files[g->file].path, g->first_line);
		}
		g->prefix_len = (uint32_t)strlen(g->prefix);
	}
}

/* Expected cost of one call (ns), bottom-up over the DAG (levels only grow
 * along calls, so sorting by level descending is a topological order). */
static double fn_ecost(struct model *m, int fn, char *state)
{
	struct gfn *g = &m->fns[fn];
	if (state[fn] == 2)
		return g->ecost;
	if (state[fn] == 1) {
		fprintf(stderr, "gen-session: internal error: call cycle at '%s'\n", g->name);
		exit(2);
	}
	state[fn] = 1;
	double c = 0;
	for (int i = 0; i < g->nstmt; i++) {
		struct gstmt *s = &m->stmts[g->stmt0 + i];
		double reps = (1.0 + s->reps) / 2.0;
		double p = s->prob / 255.0;
		if (s->kind == S_SELF)
			c += p * reps * s->cost * g->self_factor;
		else
			c += p * reps * fn_ecost(m, s->target, state);
	}
	state[fn] = 2;
	g->ecost = c;
	return c;
}

static void compute_costs(struct model *m)
{
	char *state = calloc((size_t)(unsigned)m->nfns, 1);
	for (int fn = 0; fn < m->nfns; fn++)
		fn_ecost(m, fn, state);
	free(state);
}

/* ---------------------------------------------------------------- engine */

struct options {
	uint64_t seed, model_seed;
	uint64_t run; /* repeat of the same simulated run: new timings only */
	uint64_t size, samples;
	int have_size, have_samples, have_months;
	int months;
	int population;
	int layout; /* 5, 4 (4.4+: attributes), 43 (4.3: none) */
	int variant_next;
	double noise;
	double load;       /* --load: wall time per unit of the program's CPU time (>= 1) */
	double wall_noise; /* --wall-noise: a per-run draw of light contention, percent */
	const char *output;
	const char *stats;
	char *slow_fn[8];
	double slow_factor[8];
	int nslow;
	char *new_fn;
	double new_share;
	char *newlib_fn;    /* --new-lib-function */
	double newlib_share;
	char *newcaller_fn; /* --new-caller */
	double newcaller_share;
	char *slowlib_fn[4];  /* --slow-lib */
	double slowlib_frac[4];
	int nslowlib;
	char *rename_old[8], *rename_new[8];
	int nrename;
	int list;
	int unicode_names;
	int wide_library;   /* --library wide */
};

#define MAXDEPTH 96

struct xframe {
	int32_t fn;
	int32_t cls;
	int32_t line;
};

struct engine {
	struct model *m;
	const struct options *opt;
	struct out *o;
	struct rng exec, jitter, jitter2;
	double load;        /* the run's wall/CPU factor (--load, --wall-noise) */
	struct rng added;   /* the draws of code a modifier added */
	struct rng *draw;   /* exec, or added while such code runs */
	int64_t now, next_tick, tick;
	int64_t sim_start; /* simulated time when simulate() began */
	double months_done; /* simulated months completed, by whole days */
	struct xframe st[MAXDEPTH];
	int depth;
	uint64_t samples, stop_samples, stop_bytes;
	int done;
	/* clock */
	int64_t clock_ns;
	double last_t, sum_dt;
	int64_t clock_debt; /* ns owed back to the base run's clock */
	char *thread_frame;
	uint32_t thread_len;
	int attrs; /* write \u0001 attributes */
	int touched_file;
};

/* Does the frame of `fn` carry the changed lines of --variant next? */
static void write_frame(struct engine *e, const struct xframe *x)
{
	struct model *m = e->m;
	struct gfn *g = &m->fns[x->fn];
	struct out *o = e->o;
	char tmp[16];
	int i = 16;
	OUT_LIT(o, "\"");
	out_bytes(o, g->prefix, g->prefix_len);
	if (e->attrs && m->files[g->file].kind != K_BUILTIN) {
		/* a class travels through plain functions (decorator wrappers)
		 * without being shown on them */
		if (x->cls >= 0 && g->ncls)
			out_bytes(o, m->classes[x->cls].attr, m->classes[x->cls].attr_len);
		int32_t line = x->line;
		do {
			tmp[--i] = (char)('0' + line % 10);
			line /= 10;
		} while (line);
		OUT_LIT(o, "\\u0001l");
		out_bytes(o, tmp + i, (size_t)(16 - i));
	}
	OUT_LIT(o, "\"");
}

/* One inter-sample time: a 1 ms timer with small scheduling jitter and a
 * rare long gap, read from a monotonic clock as a double (ns / 1e9), so the
 * written difference has the rounding digits real ones have. */
static double next_delta(struct engine *e, int touched)
{
	struct rng *r = &e->jitter;
	double u = rng_unit(r);
	double j = 200.0 + 430.0 * rng_normal(r);
	if (j < -2000.0) /* never backwards, whatever the variant adds */
		j = -2000.0;
	if (u < 0.2)
		j += rng_exp(r, 4500.0);
	if (u > 0.9925)
		j += rng_exp(r, 150000.0);
	if (u > 0.9987)
		j += rng_exp(r, 3000000.0);
	/* --variant next: the changed code runs a little differently; the next
	 * untouched sample gives the difference back, so the clock and with it
	 * the rounding digits of every later interval stay as in the base run */
	int64_t ns = e->tick + (int64_t)j;
	/* a loaded machine: the program gets the core for 1 ms of CPU time
	 * per sample, the wall clock moves `load` times as far */
	if (e->load > 1.0)
		ns = (int64_t)((double)ns * e->load);
	if (touched) {
		int64_t p = (int64_t)(rng_normal(&e->jitter2) * 2000.0);
		ns += p;
		e->clock_debt -= p;
	} else if (e->clock_debt) {
		ns += e->clock_debt;
		e->clock_debt = 0;
	}
	e->clock_ns += ns;
	double t = (double)e->clock_ns / 1e9;
	double d = t - e->last_t;
	e->last_t = t;
	e->sum_dt += d;
	return d;
}

static inline uint32_t digits10(int32_t v)
{
	uint32_t n = 1;
	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* Pass one only needs the byte count: add up the frame lengths instead of
 * writing them (about half the cost of a pass). */
static uint64_t frame_bytes(const struct engine *e, const struct xframe *x)
{
	const struct model *m = e->m;
	const struct gfn *g = &m->fns[x->fn];
	uint64_t n = 2 + g->prefix_len;
	if (e->attrs && m->files[g->file].kind != K_BUILTIN) {
		if (x->cls >= 0 && g->ncls)
			n += m->classes[x->cls].attr_len;
		n += 7 + digits10(x->line);
	}
	return n;
}

static void emit_sample(struct engine *e)
{
	struct out *o = e->o;
	int touched = 0;
	if (o->discard) {
		uint64_t n = (e->samples ? 2 : 0) + 2 + e->thread_len + 3 + 1;
		for (int i = 0; i < e->depth; i++) {
			n += 2 + frame_bytes(e, &e->st[i]);
			touched |= e->m->fns[e->st[i].fn].touched;
		}
		char tmp[48];
		o->total += n + py_float_repr(next_delta(e, touched), tmp);
		goto count;
	}
	if (e->samples)
		OUT_LIT(o, ", ");
	OUT_LIT(o, "[[");
	out_bytes(o, e->thread_frame, e->thread_len);
	for (int i = 0; i < e->depth; i++) {
		OUT_LIT(o, ", ");
		write_frame(e, &e->st[i]);
		touched |= e->m->fns[e->st[i].fn].touched;
	}
	OUT_LIT(o, "], ");
	out_float(o, next_delta(e, touched));
	OUT_LIT(o, "]");
count:
	e->samples++;
	if ((e->stop_samples && e->samples >= e->stop_samples) || (e->stop_bytes && o->total >= e->stop_bytes))
		e->done = 1;
}

static inline void spend(struct engine *e, int64_t ns)
{
	e->now += ns;
	while (e->now >= e->next_tick && !e->done) {
		emit_sample(e);
		e->next_tick += e->tick;
	}
}

static inline int fn_has_cls(const struct gfn *g, int cls)
{
	for (int i = 0; i < g->ncls; i++)
		if (g->cls[i] == cls)
			return 1;
	return 0;
}

static void push(struct engine *e, int fn, int cls, int line)
{
	if (e->depth >= MAXDEPTH) {
		fprintf(stderr, "gen-session: internal error: stack too deep\n");
		exit(2);
	}
	e->st[e->depth++] = (struct xframe){fn, cls, line};
}

static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * Run one call of `fn` with `self` of class `cls`.  `ctx` identifies the
 * call path.  Library code called from the same place with the same kind of
 * arguments takes the same branches nearly every time, so inside the
 * library a branch or loop count is a hash of the call path, re-drawn at
 * random only LIB_BRANCH_NOISE of the time; model code (which depends on
 * the simulated individuals) draws every time.  This is what makes real
 * sessions settle at about one distinct stack per three samples instead of
 * exploring every path of the call graph. With `--library wide`
 * (call_span 2) half of the library's call statements are on one of two
 * lines, also a hash of the call path: real pandas reaches a callee from
 * several lines of a function (an if/else on the argument's type), and
 * each is a call-site frame of its own.
 */
#define LIB_BRANCH_NOISE (m->lib->branch_noise)
static void exec_fn(struct engine *e, int fn, int cls, uint64_t ctx)
{
	struct model *m = e->m;
	struct gfn *g = &m->fns[fn];
	int lib = m->files[g->file].kind >= K_PANDAS;
	push(e, fn, cls, g->first_line);
	struct xframe *top = &e->st[e->depth - 1];
	for (int i = 0; i < g->nstmt && !e->done; i++) {
		const struct gstmt *s = &m->stmts[g->stmt0 + i];
		if (s->kind == S_SELF && s->prob == 255 && s->reps <= 1) { /* the common case */
			top->line = g->first_line + s->off + (g->touched > 0 && s->off >= g->touched ? 1 : 0);
			if (m->files[g->file].kind == K_BUILTIN)
				top->line = 0;
			spend(e, (int64_t)(s->cost * g->self_factor * (0.3 + 1.4 * rng_unit(e->draw))));
			continue;
		}
		uint64_t h = mix64(ctx + 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1));
		struct rng *dr = s->isolated ? &e->added : e->draw;
		int drawn = !lib || ((s->prob != 255 || s->reps > 1) && rng_unit(dr) < LIB_BRANCH_NOISE);
		if (s->prob != 255 && (drawn ? rng_below(dr, 255) : (uint32_t)(h % 255)) >= s->prob)
			continue;
		/* loop counts: mean (1 + reps) / 2 as compute_costs assumes; the
		 * drawn ones triangular, which keeps month-to-month work steady */
		int reps = 1;
		if (s->reps > 1)
			reps = drawn ? 1 + (int)((rng_below(dr, s->reps) + rng_below(dr, s->reps) +
						  rng_below(dr, 2)) / 2)
				     : 1 + (int)((h >> 16) % s->reps);
		top->line = g->first_line + s->off + (g->touched > 0 && s->off >= g->touched ? 1 : 0);
		if (m->files[g->file].kind == K_BUILTIN)
			top->line = 0;
		int line0 = top->line;
		for (int k = 0; k < reps && !e->done; k++) {
			if (s->kind == S_SELF) {
				double c = s->cost * g->self_factor * (0.3 + 1.4 * rng_unit(e->draw));
				spend(e, (int64_t)c);
			} else {
				struct gfn *t = &m->fns[s->target];
				int c2 = s->cls;
				if (c2 == CLS_INHERIT)
					c2 = fn_has_cls(t, cls) ? cls : (t->ncls ? t->cls[0] : CLS_NONE);
				/* entering the library: the branches taken depend on
				 * the call site, not on how the model got there */
				uint64_t cctx = lib ? h ^ (uint64_t)k
						    : mix64(((uint64_t)fn << 20) + (uint64_t)i * 0x9e37 + (uint64_t)k);
				struct rng *was = e->draw;
				if (s->isolated)
					e->draw = &e->added;
				/* a library call on one of span lines (the branch that
				 * reaches it): a hash of the call path, not re-drawn */
				if (lib && m->lib->call_span > 1) {
					uint64_t span = 1 + mix64((uint64_t)fn << 20 ^ (uint64_t)i ^ 0xca11ULL) %
								(uint64_t)m->lib->call_span;
					top->line = line0 + (int)((h >> 40) % span);
				}
				exec_fn(e, s->target, c2, cctx);
				e->draw = was;
			}
		}
	}
	e->depth--;
}

/* Set the line of the frame on top to one of its function's statements. */
static void at(struct engine *e, int off)
{
	struct xframe *x = &e->st[e->depth - 1];
	x->line = e->m->fns[x->fn].first_line + off;
}

static void run_simulation(struct engine *e)
{
	struct model *m = e->m;
	const struct options *opt = e->opt;
	struct rng *r = &e->exec;
	int *queue = NULL, nq = 0, capq = 0;
	double scale = opt->population / 1000.0;

	push(e, m->fn_module, CLS_NONE, 0);
	at(e, m->mod_main_off);
	push(e, m->fn_main, CLS_NONE, 0);
	at(e, m->main_run_off);
	push(e, m->fn_run, CLS_NONE, 0);
	at(e, m->run_build_off);
	exec_fn(e, m->fn_build, CLS_NONE, 1);
	at(e, m->run_init_off);
	for (int k = 0; k < (int)(scale + 0.999) && !e->done; k++)
		exec_fn(e, m->fn_init_pop, m->cls_sim, 2);
	at(e, m->run_sim_off);
	push(e, m->fn_simulate, m->cls_sim, 0);
	e->sim_start = e->now;
	for (int month = 0; !e->done && (!opt->have_months || month < opt->months); month++) {
		for (int day = 0; day < 30 && !e->done; day++) {
			nq = 0;
			for (int k = 0; k < m->nevents; k++) {
				struct event_class *ev = &m->events[k];
				int n = ev->kind == 0 ? (day == 0) : ev->kind == 1 ? 1 : rng_poisson(r, ev->rate * scale);
				for (int j = 0; j < n; j++) {
					GROW(queue, nq, capq);
					queue[nq++] = k;
				}
			}
			/* individual events arrive in date order, i.e. mixed */
			for (int i = nq - 1; i > 0; i--) {
				int j = (int)rng_below(r, (uint32_t)i + 1), t = queue[i];
				queue[i] = queue[j];
				queue[j] = t;
			}
			for (int i = 0; i < nq && !e->done; i++) {
				at(e, m->simulate_pop_off);
				exec_fn(e, m->fn_heappop, CLS_NONE, 3);
				at(e, m->simulate_fire_off);
				exec_fn(e, m->events[queue[i]].fire_fn, m->cls_sim, 4);
			}
			if (!e->done)
				e->months_done = month + (day + 1) / 30.0;
		}
		if (!e->done) {
			at(e, m->simulate_log_off);
			exec_fn(e, m->fn_month_log, m->cls_sim, 5);
		}
	}
	e->depth--;
	if (!e->done) {
		at(e, m->run_fin_off);
		exec_fn(e, m->fn_finalise, m->cls_sim, 6);
	}
	free(queue);
}

/* ---------------------------------------------------------------- header */

struct run_facts {
	double start_time, duration, cpu_time;
	uint64_t samples;
};

static void write_strlist(struct out *o, const char *const *v, int n)
{
	OUT_LIT(o, "[");
	for (int i = 0; i < n; i++) {
		if (i)
			OUT_LIT(o, ", ");
		OUT_LIT(o, "\"");
		out_bytes(o, v[i], strlen(v[i]));
		OUT_LIT(o, "\"");
	}
	OUT_LIT(o, "]");
}

static void write_start_stack(struct engine *e)
{
	struct model *m = e->m;
	struct out *o = e->o;
	struct xframe a = {m->fn_module, CLS_NONE, 1 + m->mod_main_off};
	struct xframe b = {m->fn_main, CLS_NONE, m->fns[m->fn_main].first_line + m->main_start_off};
	OUT_LIT(o, "\"start_call_stack\": [");
	out_bytes(o, e->thread_frame, e->thread_len);
	OUT_LIT(o, ", ");
	write_frame(e, &a);
	OUT_LIT(o, ", ");
	write_frame(e, &b);
	OUT_LIT(o, "]");
}

/* start_time, duration, `between` (written as it is), sample_count and
 * the start stack: what the header of 5.x and the trailer of 4.x share. */
static void write_times(struct engine *e, const struct run_facts *f, const char *between)
{
	struct out *o = e->o;
	OUT_LIT(o, "\"start_time\": ");
	out_float(o, f->start_time);
	OUT_LIT(o, ", \"duration\": ");
	out_float(o, f->duration);
	out_bytes(o, between, strlen(between));
	OUT_LIT(o, ", \"sample_count\": ");
	out_uint(o, f->samples);
	OUT_LIT(o, ", ");
	write_start_stack(e);
}

static void write_header5(struct engine *e, const struct run_facts *f)
{
	static const char *const sys_path[] = {
		"/tmp/model/scripts", "/tmp/model/src", "/usr/lib/python311.zip", "/usr/lib/python3.11",
		"/usr/lib/python3.11/lib-dynload", "/usr/local/lib/python3.11/dist-packages",
		"/usr/lib/python3/dist-packages", "/usr/lib/python3.11/dist-packages",
	};
	static const char *const prefixes[] = {"/usr", "/usr", "/usr", "/usr"};
	struct out *o = e->o;
	struct model *m = e->m;
	OUT_LIT(o, "{");
	write_times(e, f, ", \"min_interval\": 0.001, \"max_interval\": 0.001");
	OUT_LIT(o, ", \"target_description\": \"Profile at ");
	out_bytes(o, m->files[m->fns[m->fn_main].file].path, strlen(m->files[m->fns[m->fn_main].file].path));
	OUT_LIT(o, ":");
	out_uint(o, (uint64_t)(m->fns[m->fn_main].first_line + m->main_start_off));
	OUT_LIT(o, "\", \"cpu_time\": ");
	out_float(o, f->cpu_time);
	OUT_LIT(o, ", \"sys_path\": ");
	write_strlist(o, sys_path, 8);
	OUT_LIT(o, ", \"sys_prefixes\": ");
	write_strlist(o, prefixes, 4);
	OUT_LIT(o, ", \"frame_records\": [");
}

static void write_trailer4(struct engine *e, const struct run_facts *f)
{
	struct out *o = e->o;
	OUT_LIT(o, "], ");
	write_times(e, f, "");
	OUT_LIT(o, ", \"program\": \"run_profile.py --output session.pyisession\", \"cpu_time\": ");
	out_float(o, f->cpu_time);
	OUT_LIT(o, "}");
}

/* The seed of what differs between repeats of one run (--run): clock
 * jitter, noise, start time, thread id.  The execution stream stays on
 * --seed, so repeats simulate the same events. */
static uint64_t run_seed(const struct options *opt)
{
	uint64_t x = opt->seed ^ (opt->run * 0xa0761d6478bd642fULL);
	return opt->run ? splitmix64(&x) : opt->seed;
}

/*
 * How much longer wall time runs than the program's CPU time: --load, times
 * a draw of light contention (--wall-noise PCT: 1 + |N(0, PCT%)|, from the
 * run seed, so every rerun gets its own), as on a shared CI runner. Real
 * reruns on a quiet machine differ by ~2% in wall time with wall = CPU
 * (tests/data/README.md); a busy neighbour on the same core doubles wall
 * time and leaves CPU time within a few percent.
 */
static double run_load(const struct options *opt)
{
	struct rng r;
	double load = opt->load >= 1.0 ? opt->load : 1.0;

	if (opt->wall_noise > 0) {
		double g;

		rng_seed(&r, run_seed(opt), 9);
		g = rng_normal(&r);
		load *= 1.0 + (g < 0 ? -g : g) * opt->wall_noise / 100.0;
	}
	return load;
}

/* Wall-clock facts of the run, from the sum of the sample intervals: the
 * start is time.time() (a double near 1.79e9, so differences of two of them
 * have its rounding), CPU time slightly below the duration, in whole ns. */
static void run_facts(const struct options *opt, double sum_dt, uint64_t samples, struct run_facts *f)
{
	struct rng r;
	rng_seed(&r, run_seed(opt), 7);
	double start = 1796000000.0 + (double)rng_below(&r, 20000000) + rng_unit(&r);
	if (opt->variant_next)
		start += 86400.0 + 3600.0 * rng_unit(&r);
	start = (double)(int64_t)(start * 1e7) / 1e7;
	double overhead = 0.0002 + 0.0004 * rng_unit(&r);
	double end = start + sum_dt + overhead;
	f->start_time = start;
	f->duration = end - start;
	/* CPU time is what the program used: on a loaded machine the wall
	 * clock ran `load` times as fast */
	double cpu = (sum_dt / run_load(opt) + overhead) * (0.9955 + 0.004 * rng_unit(&r));
	f->cpu_time = (double)(int64_t)(cpu * 1e9) / 1e9;
	f->samples = samples;
}

/* ------------------------------------------------------------ modifiers */

static int fn_matches(struct model *m, int fn, const char *spec)
{
	struct gfn *g = &m->fns[fn];
	const char *dot = strrchr(spec, '.');
	if (!dot)
		return !strcmp(g->name, spec);
	/* Class.method: one of the classes the method runs with */
	size_t cl = (size_t)(dot - spec);
	for (int i = 0; i < g->ncls; i++)
		if (g->cls[i] >= 0 && !strcmp(g->name, dot + 1) && strlen(m->classes[g->cls[i]].name) == cl &&
		    !strncmp(m->classes[g->cls[i]].name, spec, cl))
			return 1;
	/* module.func: module is the file's stem */
	const char *path = m->files[g->file].path;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t ml = (size_t)(dot - spec);
	return !strcmp(g->name, dot + 1) && !strncmp(base, spec, ml) && !strcmp(base + ml, ".py");
}

static int is_model_fn(struct model *m, int fn)
{
	int k = m->files[m->fns[fn].file].kind;
	return k == K_MODEL || k == K_SCRIPT;
}

/* An engine at time 0 that samples every ms, its random streams seeded
 * from the options' --seed (execution) and run seed (jitter). */
static void engine_start(struct engine *e, struct model *m, const struct options *opt, struct out *o)
{
	memset(e, 0, sizeof *e);
	e->m = m;
	e->opt = opt;
	e->o = o;
	e->tick = 1000000;
	e->next_tick = e->tick;
	rng_seed(&e->exec, opt->seed, 2);
	rng_seed(&e->added, opt->seed, 8);
	e->draw = &e->exec;
	rng_seed(&e->jitter, run_seed(opt), 4);
	rng_seed(&e->jitter2, run_seed(opt), 6);
	e->load = run_load(opt);
}

/* Run the model as it stands for `months` months into a byte counter and
 * return the simulated ns spent before simulate() and per month.  The
 * expected costs of compute_costs are only an estimate (library branches
 * are fixed per call site, so a model's real cost differs from the mean by
 * some percent); where a figure must be right, measure it. */
static void measure_run(struct model *m, const struct options *opt, int months, double *startup, double *per_month)
{
	struct options o2 = *opt;
	struct out o = {.f = NULL, .cap = 1 << 16, .discard = 1};
	struct engine e;
	o.buf = xrealloc(NULL, o.cap);
	o2.have_months = 1;
	o2.months = months;
	engine_start(&e, m, &o2, &o);
	e.attrs = 1;
	e.thread_frame = "\"t\"";
	e.thread_len = 3;
	run_simulation(&e);
	*startup = (double)e.sim_start;
	*per_month = (double)(e.now - e.sim_start) / months;
	free(o.buf);
}

/* The function the daily scheduler event's apply() calls last: where
 * --new-function and --new-lib-function call their new function (exactly
 * 30 calls a month, so its share is steady from run to run); -1 if the
 * model has no such event. */
static int daily_apply_fn(struct model *m)
{
	for (int e = 0; e < m->nevents; e++)
		if (m->events[e].kind == 1) {
			struct gfn *fire = &m->fns[m->events[e].fire_fn];
			struct gfn *run = &m->fns[m->stmts[fire->stmt0 + 1].target];
			return m->stmts[run->stmt0].target;
		}
	return -1;
}

/* The ns one call of a new function called 30 times a month must take to
 * be `share` of all samples: the share is of the whole run for a fixed
 * number of months, of the steady state (per month) for runs cut by
 * --size or --samples. */
static double new_fn_per_call(struct model *m, const struct options *opt, double share)
{
	double startup, per_month;
	int months = opt->months ? opt->months : 3;
	measure_run(m, opt, months < 3 ? months : 3, &startup, &per_month);
	double total = opt->months ? startup + per_month * opt->months : per_month;
	double calls = 30.0 * (opt->months ? opt->months : 1);
	double want = share / (1.0 - share) * total; /* ns over the run */
	return want / calls;
}

/* A new function `name` in `file`, after the file's last function:
 * nothing else moves. */
static int add_fn_at_end(struct model *m, const char *name, int file)
{
	int fn = add_fn(m, name, file, LV_HELPER + 2);
	int last = 0;
	for (int i = 0; i < m->nfns - 1; i++)
		if (m->fns[i].file == file && m->fns[i].alias < 0 && m->fns[i].first_line + m->fns[i].span > last)
			last = m->fns[i].first_line + m->fns[i].span;
	m->fns[fn].first_line = last + 3;
	return fn;
}

/* The call of `fn`, appended to the body of `caller_fn` (its statements
 * must stay contiguous, so copy them to the end of the statement array). */
/* Move the body of `fn` to the end of the statement array, so that a
 * statement can be added to it (a function's statements are contiguous);
 * returns the line offset after its last statement. */
static int body_to_end(struct model *m, int fn)
{
	int old0 = m->fns[fn].stmt0, n = m->fns[fn].nstmt;
	for (int i = 0; i < n; i++) {
		GROW(m->stmts, m->nstmts, m->capstmts);
		m->stmts[m->nstmts++] = m->stmts[old0 + i];
	}
	m->fns[fn].stmt0 = m->nstmts - n;
	return m->stmts[m->nstmts - 1].off + 1;
}

static void append_call(struct model *m, int caller_fn, int fn)
{
	int off = body_to_end(m, caller_fn);
	struct gfn *caller = &m->fns[caller_fn];
	GROW(m->stmts, m->nstmts, m->capstmts);
	struct gstmt *c = &m->stmts[m->nstmts++];
	memset(c, 0, sizeof *c);
	c->kind = S_CALL;
	c->prob = 255;
	c->reps = 1;
	c->off = off;
	c->target = fn;
	c->cls = CLS_NONE;
	caller->nstmt++;
}

/* --new-function: a new function in the health system's file, called at
 * the end of the daily scheduler event's apply().  Its cost per call (own
 * time plus a looped pandas call) is calibrated to take `share` of all
 * samples. */
static int add_new_function(struct model *m, struct rng *r, const struct options *opt)
{
	int best = daily_apply_fn(m);
	if (best < 0)
		return -1;
	double per_call = new_fn_per_call(m, opt, opt->new_share);
	int fn = add_fn_at_end(m, opt->new_fn, m->fns[best].file);
	int lib = lib_entry(m, r, 1.2);
	for (int k = 0; k < 50 && m->fns[lib].ecost * 3.0 > per_call * 0.6; k++)
		lib = lib_entry(m, r, 1.2);
	double lib_cost = m->fns[lib].ecost * 3.0; /* called 1..5 times, 3 on average */
	if (lib_cost > per_call * 0.6)
		lib_cost = 0;
	double self = per_call - lib_cost;
	st_self(m, fn, 1, self * 0.6 / 1000.0);
	if (lib_cost > 0) {
		struct gstmt *s = st_call(m, fn, 3, lib, m->fns[lib].ncls ? m->fns[lib].cls[0] : CLS_NONE);
		s->reps = 5;
	}
	st_self(m, fn, 5, self * 0.4 / 1000.0);
	m->fns[fn].span = 7;
	append_call(m, best, fn);
	return fn;
}

/* --new-lib-function FUNC:SHARE: like --new-function (same caller, same
 * placement, `share` of the samples), but the new function's time is
 * almost all in the pandas/numpy calls it makes -- its own time is 1% of
 * it -- and those library functions are the popular ones the rest of the
 * model calls too.  The case that own-time attribution cannot see: 13 ms
 * of own time, seconds of total time spread over shared library code. */
static int add_new_lib_function(struct model *m, struct rng *r, const struct options *opt)
{
	int best = daily_apply_fn(m);
	if (best < 0)
		return -1;
	double per_call = new_fn_per_call(m, opt, opt->newlib_share);
	int fn = add_fn_at_end(m, opt->newlib_fn, m->fns[best].file);
	st_self(m, fn, 1, per_call * 0.01 / 1000.0);
	double lib_part = per_call * 0.99 / 3.0;
	for (int k = 0; k < 3; k++) {
		int lib = -1;
		double reps = 0;
		for (int t = 0; t < 200; t++) {
			int c = lib_entry(m, r, 1.2);
			double ec = m->fns[c].ecost;
			if (!(ec > 0))
				continue;
			reps = 2.0 * lib_part / ec - 1.5; /* drawn loops: mean (reps + 1.5) / 2 */
			if (reps >= 2 && reps <= 60000) {
				lib = c;
				break;
			}
		}
		if (lib < 0)
			continue;
		struct gstmt *s = st_call(m, fn, 2 + k, lib, m->fns[lib].ncls ? m->fns[lib].cls[0] : CLS_NONE);
		s->reps = (uint16_t)reps;
	}
	m->fns[fn].span = 7;
	append_call(m, best, fn);
	return fn;
}

/* A popular library entry point one call of which costs at most `cost`
 * ns, and how many loop repetitions (drawn: mean (reps + 1.5) / 2) make
 * `cost` of it; -1 when none fits in 200 draws. */
static int lib_call_for(struct model *m, struct rng *r, double cost, double *reps)
{
	for (int t = 0; t < 200; t++) {
		int c = lib_entry(m, r, 1.2);
		double ec = m->fns[c].ecost;
		if (!(ec > 0))
			continue;
		*reps = 2.0 * cost / ec - 1.5;
		if (*reps >= 2 && *reps <= 60000)
			return c;
	}
	return -1;
}

/* The model's shared linear-model helper, LinearModel.predict. */
static int lm_predict_fn(struct model *m)
{
	for (int fn = 0; fn < m->nfns; fn++)
		if (m->fns[fn].alias < 0 && fn_matches(m, fn, "LinearModel.predict"))
			return fn;
	return -1;
}

/* --new-caller FUNC:SHARE: a new method FUNC (same caller and place as
 * --new-function) whose time, `share` of the samples, is almost all in
 * calls of the model's shared helper LinearModel.predict -- the helper
 * every module already calls. Of the helper's growth nearly all lies
 * under the new caller; under its old callers nothing changed. */
static int add_new_caller(struct model *m, struct rng *r, const struct options *opt)
{
	int best = daily_apply_fn(m), lm = lm_predict_fn(m);
	(void)r;
	if (best < 0 || lm < 0 || !(m->fns[lm].ecost > 0))
		return -1;
	double per_call = new_fn_per_call(m, opt, opt->newcaller_share);
	int fn = add_fn_at_end(m, opt->newcaller_fn, m->fns[best].file);
	st_self(m, fn, 1, per_call * 0.003 / 1000.0);
	/* one call of the helper is several ms: a loop when the share asks
	 * for two or more a call, else calls that run with a chance */
	double calls = per_call * 0.997 / m->fns[lm].ecost;
	if (calls >= 2) {
		struct gstmt *s = st_call(m, fn, 2, lm, m->fns[lm].cls[0]);
		s->reps = (uint16_t)(calls * 2.0 - 1.5 < 60000 ? calls * 2.0 - 1.5 : 60000);
		s->isolated = 1;
	} else {
		for (int k = 0; k < 2 && calls > 0; k++, calls -= 1.0) {
			struct gstmt *s = st_call(m, fn, 2 + k, lm, m->fns[lm].cls[0]);
			s->isolated = 1;
			if (calls < 1)
				s->prob = (uint8_t)(calls * 255.0 > 1 ? calls * 255.0 : 1);
		}
	}
	m->fns[fn].span = 5;
	append_call(m, best, fn);
	m->stmts[m->nstmts - 1].isolated = 1;
	return fn;
}

/* --slow-lib FUNC:FRACTION: FUNC's body gains a looped call of a popular
 * pandas/numpy entry point costing FRACTION of what one call of FUNC cost
 * ("it now copies its input"): every call of FUNC, from wherever, is that
 * much slower, in the library code it calls, not in its own lines. */
static int add_slow_lib(struct model *m, struct rng *r, const char *spec, double frac)
{
	int fn = -1;
	for (int i = 0; i < m->nfns && fn < 0; i++)
		if (m->fns[i].alias < 0 && m->fns[i].nstmt > 0 && fn_matches(m, i, spec))
			fn = i;
	if (fn < 0 || !(m->fns[fn].ecost > 0))
		return -1;
	double reps;
	int lib = lib_call_for(m, r, frac * m->fns[fn].ecost, &reps);
	if (lib < 0)
		return -1;
	int off = body_to_end(m, fn);
	struct gstmt *s = st_call(m, fn, off, lib, m->fns[lib].ncls ? m->fns[lib].cls[0] : CLS_NONE);
	s->reps = (uint16_t)reps;
	s->isolated = 1;
	return fn;
}

/* Apply --new-function or --new-lib-function (`add`) with its own random
 * stream (`stream` of the model seed); -1, said on stderr, if the model
 * has no caller for it. */
static int add_fn_option(struct model *m, const struct options *opt,
			 int (*add)(struct model *, struct rng *, const struct options *),
			 int stream, const char *flag)
{
	struct rng r;
	rng_seed(&r, opt->model_seed, stream);
	render_prefixes(m);
	if (add(m, &r, opt) < 0) {
		fprintf(stderr, "gen-session: %s: no caller found\n", flag);
		return -1;
	}
	return 0;
}

static void topo_visit(struct model *m, int fn, char *seen, int *order, int *n)
{
	if (seen[fn])
		return;
	seen[fn] = 1;
	struct gfn *g = &m->fns[fn];
	for (int i = 0; i < g->nstmt; i++)
		if (m->stmts[g->stmt0 + i].kind == S_CALL)
			topo_visit(m, m->stmts[g->stmt0 + i].target, seen, order, n);
	order[(*n)++] = fn; /* post-order: callees first */
}

/* Expected number of calls of each function over a run of `months`,
 * pushed from callers to callees in topological order. */
static void compute_calls(struct model *m, double months, double scale)
{
	char *seen = calloc((size_t)(unsigned)m->nfns, 1);
	int *order = xrealloc(NULL, sizeof(int) * (size_t)(unsigned)m->nfns);
	int norder = 0;
	for (int fn = 0; fn < m->nfns; fn++)
		topo_visit(m, fn, seen, order, &norder);
	for (int fn = 0; fn < m->nfns; fn++)
		m->fns[fn].ecalls = 0;
	for (int e = 0; e < m->nevents; e++) {
		struct event_class *ev = &m->events[e];
		double per_month = ev->kind == 0 ? 1 : ev->kind == 1 ? 30 : 30 * ev->rate * scale;
		m->fns[ev->fire_fn].ecalls += per_month * months;
	}
	m->fns[m->fn_build].ecalls = 1;
	m->fns[m->fn_init_pop].ecalls = (int)(scale + 0.999);
	m->fns[m->fn_month_log].ecalls = months;
	for (int k = norder - 1; k >= 0; k--) {
		struct gfn *g = &m->fns[order[k]];
		if (g->ecalls == 0)
			continue;
		for (int i = 0; i < g->nstmt; i++) {
			struct gstmt *s = &m->stmts[g->stmt0 + i];
			if (s->kind == S_CALL)
				m->fns[s->target].ecalls += g->ecalls * (s->prob / 255.0) * ((1.0 + s->reps) / 2.0);
		}
	}
	free(seen);
	free(order);
}

/* --variant next: a line inserted in the middle of one mid-frequency module
 * helper: its later lines and every later function of the file move by one. */
static void apply_variant_next(struct model *m, struct rng *r)
{
	int cands[4096], nc = 0;
	for (int fn = 0; fn < m->nfns && nc < 4096; fn++) {
		struct gfn *g = &m->fns[fn];
		if (g->alias < 0 && g->level >= LV_HELPER && g->level < LV_SERVICE && is_model_fn(m, fn) && g->nstmt >= 3 &&
		    g->ecalls > 0)
			cands[nc++] = fn;
	}
	if (!nc)
		return;
	/* sort by expected time, take one from the middle third */
	for (int i = 1; i < nc; i++)
		for (int j = i; j > 0 && m->fns[cands[j]].ecalls * m->fns[cands[j]].ecost <
					     m->fns[cands[j - 1]].ecalls * m->fns[cands[j - 1]].ecost; j--) {
			int t = cands[j];
			cands[j] = cands[j - 1];
			cands[j - 1] = t;
		}
	int fn = cands[nc / 3 + (int)rng_below(r, (uint32_t)(nc / 3 + 1))];
	struct gfn *g = &m->fns[fn];
	int at_off = m->stmts[g->stmt0 + g->nstmt / 2].off;
	g->touched = at_off;
	for (int i = 0; i < m->nfns; i++) {
		struct gfn *h = &m->fns[i];
		if (h->file == g->file && i != fn && h->first_line > g->first_line) {
			h->first_line += 1;
			h->touched = -1; /* whole function moved */
		}
	}
}

/* ------------------------------------------------------------------- cli */

static void usage(FILE *f)
{
	fputs("usage: gen-session [options] [-o FILE]\n"
	      "\n"
	      "Writes a pyinstrument session (.pyisession JSON) sampled from a synthetic\n"
	      "pandas-based population simulation.  Same options and seed, same bytes.\n"
	      "\n"
	      "  --seed N              run seed: execution choices, timings (default 1)\n"
	      "  --model-seed N        the program's code and call graph (default 1);\n"
	      "                        different --seed, same model = runs of the same code\n"
	      "  --run N               a repeat of the same run (same --seed: same simulated\n"
	      "                        events) with its own clock jitter and --noise draw\n"
	      "  --size BYTES          stop at the record that crosses BYTES (suffixes k, M, G\n"
	      "                        are powers of 1000)\n"
	      "  --samples N           stop after N samples\n"
	      "  --months N            simulated months; without --size/--samples the run\n"
	      "                        ends after them (default 1), with them it stops early\n"
	      "  --population N        simulated individuals (work per month; default 1000,\n"
	      "                        about 2,100 samples or 3.6 MB per month)\n"
	      "  --layout 5|4|4.3      pyinstrument 5.x (default), 4.4-4.6, or 4.3 layout\n"
	      "  --names ascii|unicode unicode: some function and file names with accents,\n"
	      "                        CJK, an emoji, a quote and a backslash (escaped as\n"
	      "                        json.dump escapes them)\n"
	      "  --library narrow|wide wide: a library call graph (own times halved) tuned on\n"
	      "                        real runs' session-codec statistics (the codec\n"
	      "                        benchmarks);\n"
	      "                        narrow (default): what the regression tests use\n"
	      "  --variant base|next   next: the next commit of the same code: one line\n"
	      "                        inserted in one function (lines below it shift), same\n"
	      "                        samples, slightly different timings where it runs\n"
	      "  --slow FUNC:FACTOR    FUNC's own time grows by FACTOR (FUNC or module.FUNC)\n"
	      "  --new-function FUNC:SHARE\n"
	      "                        add FUNC, taking SHARE (e.g. 0.10) of the samples\n"
	      "  --new-lib-function FUNC:SHARE\n"
	      "                        like --new-function, but FUNC's time is in the\n"
	      "                        library calls it makes (own time 1% of it)\n"
	      "  --new-caller FUNC:SHARE\n"
	      "                        add FUNC (like --new-function), its time, SHARE of\n"
	      "                        the samples, in calls of the shared helper\n"
	      "                        LinearModel.predict\n"
	      "  --slow-lib FUNC:FRACTION\n"
	      "                        every call of FUNC (FUNC, module.FUNC or Class.FUNC)\n"
	      "                        also makes library calls costing FRACTION of it\n"
	      "  --rename OLD:NEW      rename function OLD (same file, same first line)\n"
	      "  --noise PCT           per-run random timing noise of PCT percent, drawn\n"
	      "                        from --seed (machine speed and per-function)\n"
	      "  --load F              a loaded machine: wall time F times the program's\n"
	      "                        CPU time, every sample longer, shares unchanged\n"
	      "                        (CPU time +5% per unit of F-1: contention)\n"
	      "  --wall-noise PCT      light contention drawn per run (--run): wall time\n"
	      "                        1 + |N(0, PCT%)| times CPU time\n"
	      "  --list-functions      print the model's functions by expected own time\n"
	      "  --stats FILE          also write the run's workload as JSON (simulated\n"
	      "                        months, population, samples, duration, cpu_time)\n"
	      "  -o FILE               output file (default: stdout)\n"
	      "  -h, --help            this help\n",
	      f);
}

static int parse_u64(const char *s, uint64_t *out, int suffixes)
{
	char *end;
	errno = 0;
	double mult = 1;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	if (suffixes && *end) {
		switch (*end) {
		case 'k': case 'K': mult = 1e3; break;
		case 'M': case 'm': mult = 1e6; break;
		case 'G': case 'g': mult = 1e9; break;
		default: return -1;
		}
		end++;
		if (*end == 'B' || *end == 'b')
			end++;
	}
	if (*end)
		return -1;
	*out = (uint64_t)((double)v * mult);
	return 0;
}

static int split_pair(const char *arg, char **a, char **b)
{
	const char *c = strrchr(arg, ':');
	if (!c || c == arg || !c[1])
		return -1;
	*a = xstrdup(arg);
	(*a)[c - arg] = '\0';
	*b = xstrdup(c + 1);
	return 0;
}

static int valid_ident(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

/* FUNC:SHARE of --new-function and --new-lib-function, given once, SHARE
 * in (0, 0.9); nonzero if it is not. */
static int parse_fn_share(const char *v, char **fn, double *share)
{
	char *x, *y;
	if (*fn || split_pair(v, &x, &y))
		return -1;
	*fn = x;
	*share = strtod(y, NULL);
	free(y);
	return !valid_ident(x) || !(*share > 0 && *share < 0.9);
}

static int parse_args(int argc, char **argv, struct options *o)
{
	memset(o, 0, sizeof *o);
	o->seed = 1;
	o->model_seed = 1;
	o->layout = 5;
	o->population = 1000;
	o->months = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t u;
		char *x, *y;
#define NEED()                                                                   \
	do {                                                                     \
		if (!v) {                                                        \
			fprintf(stderr, "gen-session: '%s' needs a value\n", a); \
			return -1;                                               \
		}                                                                \
		i++;                                                             \
	} while (0)
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(a, "--seed")) {
			NEED();
			if (parse_u64(v, &o->seed, 0))
				goto bad;
		} else if (!strcmp(a, "--run")) {
			NEED();
			if (parse_u64(v, &o->run, 0))
				goto bad;
		} else if (!strcmp(a, "--model-seed")) {
			NEED();
			if (parse_u64(v, &o->model_seed, 0))
				goto bad;
		} else if (!strcmp(a, "--size")) {
			NEED();
			if (parse_u64(v, &o->size, 1) || !o->size)
				goto bad;
			o->have_size = 1;
		} else if (!strcmp(a, "--samples")) {
			NEED();
			if (parse_u64(v, &o->samples, 0))
				goto bad;
			o->have_samples = 1;
		} else if (!strcmp(a, "--months")) {
			NEED();
			if (parse_u64(v, &u, 0) || !u || u > 100000)
				goto bad;
			o->months = (int)u;
			o->have_months = 1;
		} else if (!strcmp(a, "--population")) {
			NEED();
			if (parse_u64(v, &u, 0) || u < 10 || u > 10000000)
				goto bad;
			o->population = (int)u;
		} else if (!strcmp(a, "--layout")) {
			NEED();
			if (!strcmp(v, "5"))
				o->layout = 5;
			else if (!strcmp(v, "4") || !strcmp(v, "4.6"))
				o->layout = 4;
			else if (!strcmp(v, "4.3"))
				o->layout = 43;
			else
				goto bad;
		} else if (!strcmp(a, "--names")) {
			NEED();
			if (!strcmp(v, "unicode"))
				o->unicode_names = 1;
			else if (strcmp(v, "ascii"))
				goto bad;
		} else if (!strcmp(a, "--library")) {
			NEED();
			if (!strcmp(v, "wide"))
				o->wide_library = 1;
			else if (strcmp(v, "narrow"))
				goto bad;
		} else if (!strcmp(a, "--variant")) {
			NEED();
			if (!strcmp(v, "next"))
				o->variant_next = 1;
			else if (strcmp(v, "base"))
				goto bad;
		} else if (!strcmp(a, "--slow")) {
			NEED();
			if (o->nslow >= 8 || split_pair(v, &x, &y))
				goto bad;
			o->slow_fn[o->nslow] = x;
			o->slow_factor[o->nslow] = strtod(y, NULL);
			free(y);
			if (!(o->slow_factor[o->nslow] > 0))
				goto bad;
			o->nslow++;
		} else if (!strcmp(a, "--new-function")) {
			NEED();
			if (parse_fn_share(v, &o->new_fn, &o->new_share))
				goto bad;
		} else if (!strcmp(a, "--new-lib-function")) {
			NEED();
			if (parse_fn_share(v, &o->newlib_fn, &o->newlib_share))
				goto bad;
		} else if (!strcmp(a, "--new-caller")) {
			NEED();
			if (parse_fn_share(v, &o->newcaller_fn, &o->newcaller_share))
				goto bad;
		} else if (!strcmp(a, "--slow-lib")) {
			NEED();
			if (o->nslowlib >= 4 || split_pair(v, &x, &y))
				goto bad;
			o->slowlib_fn[o->nslowlib] = x;
			o->slowlib_frac[o->nslowlib] = strtod(y, NULL);
			if (!(o->slowlib_frac[o->nslowlib] > 0 && o->slowlib_frac[o->nslowlib] <= 100))
				goto bad;
			o->nslowlib++;
		} else if (!strcmp(a, "--rename")) {
			NEED();
			if (o->nrename >= 8 || split_pair(v, &x, &y) || !valid_ident(y))
				goto bad;
			o->rename_old[o->nrename] = x;
			o->rename_new[o->nrename++] = y;
		} else if (!strcmp(a, "--noise")) {
			NEED();
			o->noise = strtod(v, NULL);
			if (!(o->noise >= 0 && o->noise <= 100))
				goto bad;
		} else if (!strcmp(a, "--load")) {
			NEED();
			o->load = strtod(v, NULL);
			if (!(o->load >= 1.0 && o->load <= 100))
				goto bad;
		} else if (!strcmp(a, "--wall-noise")) {
			NEED();
			o->wall_noise = strtod(v, NULL);
			if (!(o->wall_noise >= 0 && o->wall_noise <= 100))
				goto bad;
		} else if (!strcmp(a, "--list-functions")) {
			o->list = 1;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			NEED();
			o->output = v;
		} else if (!strcmp(a, "--stats")) {
			NEED();
			o->stats = v;
		} else {
			fprintf(stderr, "gen-session: unknown option '%s' (see --help)\n", a);
			return -1;
		}
		continue;
	bad:
		fprintf(stderr, "gen-session: bad value '%s' for '%s'\n", v, a);
		return -1;
	}
	if (o->have_size || o->have_samples) {
		if (!o->have_months)
			o->months = 0; /* unbounded */
	} else {
		o->have_months = 1; /* the natural end: after --months (default 1) */
	}
	return 0;
}

/* ------------------------------------------------------------------ main */

static void model_release(struct model *m)
{
	for (int i = 0; i < m->nfns; i++) {
		free(m->fns[i].name);
		free(m->fns[i].prefix);
	}
	for (int i = 0; i < m->nfiles; i++)
		free(m->files[i].path);
	for (int i = 0; i < m->nclasses; i++) {
		free(m->classes[i].name);
		free(m->classes[i].attr);
	}
	free(m->fns);
	free(m->files);
	free(m->classes);
	free(m->stmts);
	free(m->events);
	free(api_entry);
	api_entry = NULL;
}

static void options_release(struct options *o)
{
	for (int i = 0; i < o->nslow; i++)
		free(o->slow_fn[i]);
	for (int i = 0; i < o->nrename; i++) {
		free(o->rename_old[i]);
		free(o->rename_new[i]);
	}
	for (int i = 0; i < o->nslowlib; i++)
		free(o->slowlib_fn[i]);
	free(o->new_fn);
	free(o->newlib_fn);
	free(o->newcaller_fn);
}

/* The workload of the run, as a profiling script would record it next to
 * the session (what issue 5's per-month normalisation needs). */
static int write_stats(const struct options *opt, const struct run_facts *f, double months)
{
	FILE *s = fopen(opt->stats, "w");
	if (!s)
		return -1;
	char d[48], c[48];
	py_float_repr(f->duration, d);
	py_float_repr(f->cpu_time, c);
	fprintf(s,
		"{\"simulated_months\": %.4f, \"population\": %d, \"samples\": %" PRIu64 ", \"duration\": %s, "
		"\"cpu_time\": %s, \"seed\": %" PRIu64 ", \"run\": %" PRIu64 ", \"model_seed\": %" PRIu64
		", \"variant\": \"%s\"}\n",
		months, opt->population, f->samples, d, c, opt->seed, opt->run, opt->model_seed,
		opt->variant_next ? "next" : "base");
	return fclose(s) ? -1 : 0;
}

static int cmp_own(const void *a, const void *b, void *ctx)
{
	const double *own = ctx;
	double x = own[*(const int *)a], y = own[*(const int *)b];
	return x < y ? 1 : x > y ? -1 : 0;
}

static void list_functions(struct model *m, double total)
{
	double *own = calloc((size_t)(unsigned)m->nfns, sizeof(double));
	int *idx = xrealloc(NULL, sizeof(int) * (size_t)(unsigned)m->nfns);
	for (int fn = 0; fn < m->nfns; fn++) {
		struct gfn *g = &m->fns[fn];
		double self = 0;
		for (int i = 0; i < g->nstmt; i++) {
			struct gstmt *s = &m->stmts[g->stmt0 + i];
			if (s->kind == S_SELF)
				self += s->prob / 255.0 * (1.0 + s->reps) / 2.0 * s->cost * g->self_factor;
		}
		int id = g->alias >= 0 ? g->alias : fn;
		own[id] += self * g->ecalls;
		idx[fn] = fn;
	}
	qsort_r(idx, (size_t)m->nfns, sizeof(int), cmp_own, own);
	printf("%-8s %-34s %s\n", "own%", "function", "file:line");
	for (int i = 0; i < m->nfns; i++) {
		struct gfn *g = &m->fns[idx[i]];
		if (own[idx[i]] <= 0)
			break;
		printf("%7.3f%% %-34s %s:%d\n", 100.0 * own[idx[i]] / total, g->name, m->files[g->file].path, g->first_line);
	}
	free(own);
	free(idx);
}

static void apply_modifiers(struct model *m, const struct options *opt, struct rng *mr)
{
	for (int i = 0; i < opt->nslow; i++) {
		int hit = 0;
		for (int fn = 0; fn < m->nfns; fn++) {
			int id = m->fns[fn].alias >= 0 ? m->fns[fn].alias : fn;
			if (fn_matches(m, id, opt->slow_fn[i])) {
				m->fns[fn].self_factor *= opt->slow_factor[i];
				hit = 1;
			}
		}
		if (!hit) {
			fprintf(stderr, "gen-session: --slow: no function '%s' (see --list-functions)\n", opt->slow_fn[i]);
			exit(2);
		}
	}
	for (int i = 0; i < opt->nrename; i++) {
		int hit = 0;
		for (int fn = 0; fn < m->nfns; fn++)
			if (fn_matches(m, fn, opt->rename_old[i])) {
				free(m->fns[fn].name);
				m->fns[fn].name = xstrdup(opt->rename_new[i]);
				hit = 1;
			}
		if (!hit) {
			fprintf(stderr, "gen-session: --rename: no function '%s' (see --list-functions)\n",
				opt->rename_old[i]);
			exit(2);
		}
		/* aliases share the renamed name */
		for (int fn = 0; fn < m->nfns; fn++)
			if (m->fns[fn].alias >= 0 && strcmp(m->fns[fn].name, m->fns[m->fns[fn].alias].name)) {
				free(m->fns[fn].name);
				m->fns[fn].name = xstrdup(m->fns[m->fns[fn].alias].name);
			}
	}
	(void)mr;
}

int main(int argc, char **argv)
{
	struct options opt;
	struct model model;
	struct model *m = &model;
	struct rng mr, nr;
	int rc = 0;

	if (parse_args(argc, argv, &opt))
		return 2;
	memset(m, 0, sizeof *m);
	m->lib = opt.wide_library ? &library_wide : &library_narrow;
	rng_seed(&mr, opt.model_seed, 1);
	build_model(m, &mr);
	m->unicode_names = opt.unicode_names;
	layout(m, &mr);
	compute_costs(m);

	/* Calibrate event rates so a month is MONTH_MS of work at population
	 * 1000, the individual events taking what the periodic ones leave. */
	double scale = opt.population / 1000.0;
	double fixed = 0, indiv = 0;
	for (int e = 0; e < m->nevents; e++) {
		struct event_class *ev = &m->events[e];
		double c = m->fns[ev->fire_fn].ecost;
		if (ev->kind == 0)
			fixed += c;
		else if (ev->kind == 1)
			fixed += 30 * c;
		else
			indiv += 30 * ev->weight * c;
	}
	double want = MONTH_MS * 1e6 - fixed;
	if (want < MONTH_MS * 1e6 * 0.3)
		want = MONTH_MS * 1e6 * 0.3;
	for (int e = 0; e < m->nevents; e++)
		if (m->events[e].kind == 2)
			m->events[e].rate = m->events[e].weight * want / indiv;
	double months_for_calls = opt.months ? opt.months : 1;
	compute_calls(m, months_for_calls, scale);

	/* modifiers that change the code */
	if (opt.new_fn && add_fn_option(m, &opt, add_new_function, 11, "--new-function") < 0) {
		rc = 2;
		goto done;
	}
	if (opt.newlib_fn && add_fn_option(m, &opt, add_new_lib_function, 17, "--new-lib-function") < 0) {
		rc = 2;
		goto done;
	}
	if (opt.newcaller_fn && add_fn_option(m, &opt, add_new_caller, 19, "--new-caller") < 0) {
		rc = 2;
		goto done;
	}
	for (int i = 0; i < opt.nslowlib; i++) {
		struct rng r4;
		rng_seed(&r4, opt.model_seed, 23 + (uint64_t)i);
		if (add_slow_lib(m, &r4, opt.slowlib_fn[i], opt.slowlib_frac[i]) < 0) {
			fprintf(stderr, "gen-session: --slow-lib: no function '%s' with a body (see --list-functions)\n",
				opt.slowlib_fn[i]);
			rc = 2;
			goto done;
		}
	}
	if (opt.variant_next) {
		struct rng r3;
		rng_seed(&r3, opt.model_seed, 13);
		apply_variant_next(m, &r3);
	}
	apply_modifiers(m, &opt, &mr);
	/* per-run noise: machine speed and per-function variation */
	rng_seed(&nr, run_seed(&opt), 5);
	if (opt.noise > 0) {
		double machine = 1.0 + opt.noise / 100.0 * rng_normal(&nr);
		for (int fn = 0; fn < m->nfns; fn++) {
			double f = machine * (1.0 + opt.noise / 100.0 * rng_normal(&nr));
			if (f < 0.2)
				f = 0.2;
			m->fns[fn].self_factor *= f;
		}
	}
	/* --load: contention costs some CPU time too (caches, a shared core):
	 * the real loaded run used 6% more CPU at 2.1 times the wall time */
	if (opt.load > 1.0)
		for (int fn = 0; fn < m->nfns; fn++)
			m->fns[fn].self_factor *= 1.0 + 0.05 * (opt.load - 1.0);
	render_prefixes(m);

	if (opt.list) {
		char *state = calloc((size_t)(unsigned)m->nfns, 1);
		for (int fn = 0; fn < m->nfns; fn++)
			fn_ecost(m, fn, state);
		free(state);
		compute_calls(m, months_for_calls, scale);
		double total = 0;
		for (int e = 0; e < m->nevents; e++)
			total += m->fns[m->events[e].fire_fn].ecalls * m->fns[m->events[e].fire_fn].ecost;
		list_functions(m, total);
		goto done;
	}

	FILE *f = stdout;
	if (opt.output)
		f = fopen(opt.output, "wb");
	if (!f) {
		fprintf(stderr, "gen-session: cannot open '%s': %s\n", opt.output, strerror(errno));
		rc = 1;
		goto done;
	}
	struct out o = {.f = f, .cap = 4 << 20};
	o.buf = xrealloc(NULL, o.cap);

	struct rng tr;
	rng_seed(&tr, run_seed(&opt), 3);
	char thread[128];
	snprintf(thread, sizeof thread, "\"MainThread\\u0000<thread>\\u0000%" PRIu64 "\"",
		 (uint64_t)0x7f0000000000ULL + ((uint64_t)rng_below(&tr, 0xffffff) << 12) + 0x740);
	double clock0 = 200.0 + 1800.0 * rng_unit(&tr);

	struct engine e;
	struct run_facts facts = {0};
	for (int pass = (opt.layout == 5 ? 0 : 1); pass < 2; pass++) {
		engine_start(&e, m, &opt, &o);
		if (opt.run) { /* a repeat samples at other moments of the same execution */
			struct rng pr;
			rng_seed(&pr, run_seed(&opt), 8);
			e.next_tick += rng_below(&pr, 1000000);
		}
		e.attrs = opt.layout != 43;
		e.thread_frame = thread;
		e.thread_len = (uint32_t)strlen(thread);
		e.clock_ns = (int64_t)(clock0 * 1e9);
		e.last_t = (double)e.clock_ns / 1e9;
		o.discard = pass == 0;
		o.total = 0;
		o.len = 0;
		if (pass == 0) {
			write_header5(&e, &facts);
			e.stop_bytes = opt.have_size ? opt.size : 0;
			e.stop_samples = opt.have_samples ? opt.samples : 0;
		} else {
			if (opt.layout == 5) {
				write_header5(&e, &facts);
				e.stop_samples = facts.samples;
				e.stop_bytes = 0;
			} else {
				OUT_LIT(&o, "{\"frame_records\": [");
				e.stop_bytes = opt.have_size ? opt.size : 0;
				e.stop_samples = opt.have_samples ? opt.samples : 0;
			}
		}
		if (!(opt.have_samples && opt.samples == 0) && !(pass == 1 && opt.layout == 5 && facts.samples == 0))
			run_simulation(&e);
		run_facts(&opt, e.sum_dt, e.samples, &facts);
		if (pass == 1) {
			if (opt.layout == 5)
				OUT_LIT(&o, "]}");
			else
				write_trailer4(&e, &facts);
		}
		out_flush(&o);
	}
	if (o.err || fflush(f) || (f != stdout && fclose(f))) {
		fprintf(stderr, "gen-session: write failed: %s\n", strerror(o.err ? o.err : errno));
		rc = 1;
	}
	if (opt.stats && write_stats(&opt, &facts, e.months_done)) {
		fprintf(stderr, "gen-session: cannot write '%s': %s\n", opt.stats, strerror(errno));
		rc = 1;
	}
	free(o.buf);
done:
	model_release(m);
	options_release(&opt);
	return rc;
}
