#include "analysis/runview.h"

#include <stdio.h>
#include <string.h>

int rs_runview_map_num(const struct rs_runrec_map *map, const char *name, double *out)
{
	const struct rs_runrec_value *v = rs_runrec_map_get(map, name);

	if (!v || v->kind == RS_RUNREC_STRING)
		return 0;
	*out = v->d;
	return 1;
}

int rs_runview_metric(const rs_runrec *run, const char *name, double *out)
{
	if (rs_runview_map_num(&run->metrics, name, out))
		return 1;
	if (rs_runview_map_num(&run->stats, name, out))
		return 1;
	/* "stats.cpu_time": a stat the session's own cpu_time shadows in metrics */
	return !strncmp(name, "stats.", 6) && rs_runview_map_num(&run->stats, name + 6, out);
}

/*
 * Names a population model or a simulation commonly uses for "how much
 * work was asked for". Order is priority: simulated time first, because
 * run time grows with it most directly.
 */
static const char *const workload_keys[] = {
	"months", "n_months", "simulated_months", "sim_months",
	"years", "n_years", "simulated_years",
	"population", "population_size", "initial_population",
	"n_individuals", "individuals", "pop_size",
};

/* A value of a map that is a number above 0 (a workload): 1 and *out, or 0. */
static int positive(const struct rs_runrec_value *v, double *out)
{
	if (!v || v->kind == RS_RUNREC_STRING || !(v->d > 0))
		return 0;
	*out = v->d;
	return 1;
}

static int lookup_suffix(const struct rs_runrec_map *map, const char *want,
			 const char **key_out, double *out)
{
	/* Exact name first, then a flattened "<file>.<name>" stat. */
	if (positive(rs_runrec_map_get(map, want), out)) {
		*key_out = want;
		return 1;
	}
	for (size_t i = 0; i < map->n; i++) {
		const char *key = map->items[i].name;
		const char *dot = strrchr(key, '.');

		if (dot && !strcmp(dot + 1, want) && positive(&map->items[i].value, out)) {
			*key_out = key;
			return 1;
		}
	}
	return 0;
}

int rs_runview_workload(const rs_runrec *run, const char *per,
			const char **key_out, double *out)
{
	size_t i;

	if (per) {
		const char *key = NULL;

		if (lookup_suffix(&run->stats, per, &key, out) ||
		    lookup_suffix(&run->metrics, per, &key, out)) {
			*key_out = key;
			return 1;
		}
		return 0;
	}
	for (i = 0; i < sizeof(workload_keys) / sizeof(workload_keys[0]); i++) {
		const char *key = NULL;

		if (lookup_suffix(&run->stats, workload_keys[i], &key, out) ||
		    lookup_suffix(&run->metrics, workload_keys[i], &key, out)) {
			*key_out = key;
			return 1;
		}
	}
	return 0;
}

const char *rs_runview_machine(const rs_runrec *run, const char *field)
{
	if (!strcmp(field, "runner"))
		return run->machine.runner;
	if (!strcmp(field, "hostname"))
		return run->machine.hostname;
	if (!strcmp(field, "cpu_model"))
		return run->machine.cpu_model;
	return NULL;
}

int rs_runview_same_machine(const rs_runrec *a, const rs_runrec *b, const char **why)
{
	static const char *const fields[] = { "runner", "hostname", "cpu_model" };
	size_t i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const char *va = rs_runview_machine(a, fields[i]);
		const char *vb = rs_runview_machine(b, fields[i]);

		/* An empty string is "not recorded", like an absent key. */
		if (!va || !vb || !*va || !*vb)
			continue;
		if (strcmp(va, vb)) {
			if (why)
				*why = fields[i];
			return 0;
		}
	}
	return 1;
}

/* The last '.'-part of a flattened key: "sim.months" -> "months". */
static const char *last_part(const char *key)
{
	const char *dot = strrchr(key, '.');

	return dot ? dot + 1 : key;
}

static int is_vary(const char *key, const char *vary)
{
	return vary && (!strcmp(key, vary) || !strcmp(last_part(key), last_part(vary)));
}

static void value_text(const struct rs_runrec_value *v, char *out, size_t n)
{
	if (!v)
		snprintf(out, n, "(none)");
	else if (v->kind == RS_RUNREC_STRING)
		snprintf(out, n, "'%s'", v->s);
	else if (v->kind == RS_RUNREC_INT)
		snprintf(out, n, "%lld", (long long)v->i);
	else
		snprintf(out, n, "%.15g", v->d);
}

/* Whether two values of a map are the same JSON value (3 and 3.0 are not). */
static int same_value(const struct rs_runrec_value *a, const struct rs_runrec_value *b)
{
	if (a->kind != b->kind)
		return 0;
	if (a->kind == RS_RUNREC_STRING)
		return !strcmp(a->s, b->s);
	if (a->kind == RS_RUNREC_INT)
		return a->i == b->i;
	return a->d == b->d;
}

/* The stats of a run.json, or the metrics of an index line (which carry
 * every numeric stat). */
static const struct rs_runrec_map *config_stats(const rs_runrec *run)
{
	return run->stats.n ? &run->stats : &run->metrics;
}

/* The first workload stat a run records (key and value), or 0: an unknown configuration. */
static int first_workload(const struct rs_runrec_map *stats, const char **key, double *v)
{
	for (size_t i = 0; i < sizeof(workload_keys) / sizeof(workload_keys[0]); i++)
		if (lookup_suffix(stats, workload_keys[i], key, v))
			return 1;
	return 0;
}

/*
 * Whether a run says what it ran: a workload stat. (Not its arguments:
 * an index line, which trend reads for older runs, carries the stats
 * among its metrics but no arguments, and must judge a run as its
 * record does.)
 */
static int config_known(const rs_runrec *run)
{
	const char *key;
	double v;

	return first_workload(config_stats(run), &key, &v);
}

/*
 * Whether the token at `s` (`n` bytes) names the workload key `vary`:
 * "--months", "--n-months", "months=" ... so that its value may differ.
 */
static int names_vary(const char *s, size_t n, const char *vary)
{
	const char *want = last_part(vary);
	size_t wn = strlen(want);

	while (n && *s == '-') {
		s++;
		n--;
	}
	if (n >= wn && (n == wn || s[wn] == '=')) {
		for (size_t i = 0; i < wn; i++)
			if (s[i] != want[i] && !(s[i] == '-' && want[i] == '_'))
				return 0;
		return 1;
	}
	return 0;
}

/*
 * The profiled program and its arguments (summary.target: pyinstrument's
 * target_description, or `program` in 4.x) with the workload key's value
 * left out ("--months 12", "--months=12"), into `out`. 0 when not recorded.
 */
static int target_text(const rs_runrec *run, const char *vary, char *out, size_t n)
{
	const char *t = run->summary ? run->summary->target : NULL;
	size_t len = 0;
	int skip_next = 0;

	if (!t || !*t || n < 2)
		return 0;
	while (*t) {
		size_t tn = strcspn(t, " ");

		if (skip_next) {
			skip_next = 0;
		} else if (vary && tn && names_vary(t, tn, vary)) {
			skip_next = !memchr(t, '=', tn);
		} else if (tn && len + tn + 2 < n) {
			if (len)
				out[len++] = ' ';
			memcpy(out + len, t, tn);
			len += tn;
		}
		t += tn;
		while (*t == ' ')
			t++;
	}
	out[len] = '\0';
	return 1;
}

/* An unknown configuration on one side only, into `why`: 0 when both sides are alike. */
static int unknown_config(const rs_runrec *a, const rs_runrec *b, const char *here,
			  const char *there, char *why, size_t why_len)
{
	int ka = config_known(a), kb = config_known(b);
	const rs_runrec *known = ka ? a : b;
	const char *key = NULL;
	double v = 0;
	char what[96];

	if (ka == kb)
		return 0;
	if (!first_workload(config_stats(known), &key, &v))
		return 0;
	snprintf(what, sizeof(what), "%s %.15g", key, v);
	if (why)
		snprintf(why, why_len, "%s %s, %s %s",
			 ka ? what : "no stats", here, kb ? what : "no stats", there);
	return 1;
}

int rs_runview_same_config(const rs_runrec *a, const rs_runrec *b, const char *vary,
			   const char *here, const char *there, char *why, size_t why_len)
{
	const struct rs_runrec_map *sa = config_stats(a), *sb = config_stats(b);
	const struct rs_runrec_map *aa = &a->args, *ab = &b->args;
	size_t i;
	char x[160], y[160];

	if (unknown_config(a, b, here, there, why, why_len))
		return 0;
	for (i = 0; i < sizeof(workload_keys) / sizeof(workload_keys[0]); i++) {
		const char *ka = NULL, *kb = NULL;
		double va, vb;

		if (!lookup_suffix(sa, workload_keys[i], &ka, &va) ||
		    !lookup_suffix(sb, workload_keys[i], &kb, &vb) || is_vary(ka, vary))
			continue;
		if (va != vb) {
			if (why)
				snprintf(why, why_len, "%s %.15g %s, %.15g %s", ka, va, here, vb, there);
			return 0;
		}
	}
	if (target_text(a, vary, x, sizeof(x)) && target_text(b, vary, y, sizeof(y)) &&
	    strcmp(x, y)) {
		if (why)
			snprintf(why, why_len, "program '%s' %s, '%s' %s", x, here, y, there);
		return 0;
	}
	if (!aa->n || !ab->n)
		return 1; /* arguments not recorded on one side: unknown */
	for (i = 0; i < aa->n; i++) {
		const char *key = aa->items[i].name;
		const struct rs_runrec_value *v = &aa->items[i].value;
		const struct rs_runrec_value *w = rs_runrec_map_get(ab, key);

		if (is_vary(key, vary) || (w && same_value(v, w)))
			continue;
		if (why) {
			value_text(v, x, 64);
			value_text(w, y, 64);
			snprintf(why, why_len, "argument %s %s %s, %s %s", key, x, here, y, there);
		}
		return 0;
	}
	for (i = 0; i < ab->n; i++) {
		const char *key = ab->items[i].name;

		if (is_vary(key, vary) || rs_runrec_map_get(aa, key))
			continue;
		if (why) {
			value_text(&ab->items[i].value, y, 64);
			snprintf(why, why_len, "argument %s (none) %s, %s %s", key, here, y, there);
		}
		return 0;
	}
	return 1;
}

const char *rs_runview_accepted(const rs_runrec *run)
{
	const struct rs_runrec_value *v = rs_runrec_map_get(&run->meta, "accept");

	return v && v->kind == RS_RUNREC_STRING && *v->s ? v->s : NULL;
}

const char *rs_runview_session_oid(const rs_runrec *run)
{
	return run->has_session && run->session.oid && *run->session.oid ? run->session.oid : NULL;
}

int rs_runview_samples(const rs_runrec *run, double *out)
{
	if (!run->summary || run->summary->samples <= 0)
		return 0;
	*out = (double)run->summary->samples;
	return 1;
}
