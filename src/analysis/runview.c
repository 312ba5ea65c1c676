#include "analysis/runview.h"

#include <stdio.h>
#include <string.h>

const char *rs_runview_str(const json_t *obj, const char *key, const char *fallback)
{
	const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : fallback;
}

int rs_runview_num(const json_t *obj, const char *key, double *out)
{
	const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	if (!json_is_number(v))
		return 0;
	*out = json_number_value(v);
	return 1;
}

int rs_runview_metric(const json_t *run, const char *name, double *out)
{
	if (rs_runview_num(json_object_get(run, "metrics"), name, out))
		return 1;
	if (rs_runview_num(json_object_get(run, "stats"), name, out))
		return 1;
	/* "stats.cpu_time": a stat the session's own cpu_time shadows in metrics */
	return !strncmp(name, "stats.", 6) &&
	       rs_runview_num(json_object_get(run, "stats"), name + 6, out);
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

static int lookup_suffix(const json_t *obj, const char *want,
			 const char **key_out, double *out)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj))
		return 0;
	/* Exact name first, then a flattened "<file>.<name>" stat. */
	v = json_object_get(obj, want);
	if (json_is_number(v) && json_number_value(v) > 0) {
		*key_out = want;
		*out = json_number_value(v);
		return 1;
	}
	json_object_foreach((json_t *)obj, key, v) {
		const char *dot = strrchr(key, '.');

		if (dot && !strcmp(dot + 1, want) && json_is_number(v) &&
		    json_number_value(v) > 0) {
			*key_out = key;
			*out = json_number_value(v);
			return 1;
		}
	}
	return 0;
}

int rs_runview_workload(const json_t *run, const char *per,
			const char **key_out, double *out)
{
	const json_t *stats = json_object_get(run, "stats");
	const json_t *metrics = json_object_get(run, "metrics");
	size_t i;

	if (per) {
		const char *key = NULL;

		if (lookup_suffix(stats, per, &key, out) ||
		    lookup_suffix(metrics, per, &key, out)) {
			*key_out = key;
			return 1;
		}
		return 0;
	}
	for (i = 0; i < sizeof(workload_keys) / sizeof(workload_keys[0]); i++) {
		const char *key = NULL;

		if (lookup_suffix(stats, workload_keys[i], &key, out) ||
		    lookup_suffix(metrics, workload_keys[i], &key, out)) {
			*key_out = key;
			return 1;
		}
	}
	return 0;
}

int rs_runview_same_machine(const json_t *a, const json_t *b, const char **why)
{
	static const char *const fields[] = { "runner", "hostname", "cpu_model" };
	const json_t *ma = json_object_get(a, "machine");
	const json_t *mb = json_object_get(b, "machine");
	size_t i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const char *va = rs_runview_str(ma, fields[i], NULL);
		const char *vb = rs_runview_str(mb, fields[i], NULL);

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

static void value_text(const json_t *v, char *out, size_t n)
{
	if (json_is_string(v))
		snprintf(out, n, "'%s'", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(out, n, "%lld", (long long)json_integer_value(v));
	else if (json_is_number(v))
		snprintf(out, n, "%.15g", json_number_value(v));
	else if (json_is_true(v) || json_is_false(v))
		snprintf(out, n, "%s", json_is_true(v) ? "true" : "false");
	else
		snprintf(out, n, "%s", v ? "(a value)" : "(none)");
}

/* The stats of a run.json, or the metrics of an index line (which carry
 * every numeric stat). */
static const json_t *config_stats(const json_t *run)
{
	const json_t *st = json_object_get(run, "stats");

	return json_is_object(st) && json_object_size(st) ? st : json_object_get(run, "metrics");
}

/* The first workload stat a run records (key and value), or 0: an unknown configuration. */
static int first_workload(const json_t *stats, const char **key, double *v)
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
static int config_known(const json_t *run)
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
static int target_text(const json_t *run, const char *vary, char *out, size_t n)
{
	const char *t = rs_runview_str(json_object_get(run, "summary"), "target", NULL);
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
static int unknown_config(const json_t *a, const json_t *b, const char *here,
			  const char *there, char *why, size_t why_len)
{
	int ka = config_known(a), kb = config_known(b);
	const json_t *known = ka ? a : b;
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

int rs_runview_same_config(const json_t *a, const json_t *b, const char *vary,
			   const char *here, const char *there, char *why, size_t why_len)
{
	const json_t *sa = config_stats(a), *sb = config_stats(b);
	const json_t *aa = json_object_get(a, "args"), *ab = json_object_get(b, "args");
	const char *key;
	json_t *v;
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
	if (!json_is_object(aa) || !json_is_object(ab) || !json_object_size(aa) ||
	    !json_object_size(ab))
		return 1; /* arguments not recorded on one side: unknown */
	json_object_foreach((json_t *)aa, key, v) {
		const json_t *w = json_object_get(ab, key);

		if (is_vary(key, vary) || (w && json_equal(v, (json_t *)w)))
			continue;
		if (why) {
			value_text(v, x, 64);
			value_text(w, y, 64);
			snprintf(why, why_len, "argument %s %s %s, %s %s", key, x, here, y, there);
		}
		return 0;
	}
	json_object_foreach((json_t *)ab, key, v) {
		if (is_vary(key, vary) || json_object_get(aa, key))
			continue;
		if (why) {
			value_text(v, y, 64);
			snprintf(why, why_len, "argument %s (none) %s, %s %s", key, here, y, there);
		}
		return 0;
	}
	return 1;
}

const char *rs_runview_accepted(const json_t *run)
{
	const char *r = rs_runview_str(json_object_get(run, "meta"), "accept", NULL);

	return r && *r ? r : NULL;
}

const char *rs_runview_session_oid(const json_t *run)
{
	const char *oid = rs_runview_str(json_object_get(run, "session"), "oid", NULL);

	return oid && *oid ? oid : NULL;
}
