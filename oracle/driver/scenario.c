/* iosched kernel oracle: scenario parsing for the C driver. Strict: an unknown directive or
 * key, or a malformed number, is an error naming file and line. */
#include "scenario.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cursor {
	const char *path;
	int line;
};

static int fail(const struct cursor *c, const char *what, const char *tok)
{
	fprintf(stderr, "%s:%d: %s '%s'\n", c->path, c->line, what, tok);
	return -1;
}

static int num(const struct cursor *c, const char *tok, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(tok, &end, 10);
	if (end == tok || *end != '\0' || errno || tok[0] == '-')
		return fail(c, "bad number in", tok);
	*out = v;
	return 0;
}

static int num32(const struct cursor *c, const char *tok, uint32_t *out)
{
	uint64_t v;
	if (num(c, tok, &v))
		return -1;
	if (v > UINT32_MAX)
		return fail(c, "number too large in", tok);
	*out = (uint32_t)v;
	return 0;
}

/* `R:n`, `B:n`, `I:n`, `N:n`: class and level, as IOPRIO_PRIO_VALUE(). */
static int prio(const struct cursor *c, const char *tok, uint16_t *out)
{
	const char *classes = "NRBI";
	const char *k = strchr(classes, tok[0]);
	if (!k || tok[0] == '\0' || tok[1] != ':' || tok[2] < '0' || tok[2] > '7' || tok[3])
		return fail(c, "bad priority", tok);
	*out = (uint16_t)(((k - classes) << 13) | (tok[2] - '0'));
	return 0;
}

static int flag(const struct cursor *c, const char *tok, bool *out)
{
	if (strcmp(tok, "0") && strcmp(tok, "1"))
		return fail(c, "expected 0 or 1 in", tok);
	*out = tok[0] == '1';
	return 0;
}

static int device_key(const struct cursor *c, struct sc_device *d, const char *k, const char *v)
{
	if (!strcmp(k, "depth"))
		return num32(c, v, &d->depth);
	if (!strcmp(k, "nr_requests"))
		return num32(c, v, &d->nr_requests);
	if (!strcmp(k, "rotational"))
		return flag(c, v, &d->rotational);
	if (!strcmp(k, "base_ns"))
		return num(c, v, &d->base_ns);
	if (!strcmp(k, "per_sector_ns"))
		return num(c, v, &d->per_sector_ns);
	if (!strcmp(k, "seek_min_ns"))
		return num(c, v, &d->seek_min_ns);
	if (!strcmp(k, "seek_per_ksector_ns"))
		return num(c, v, &d->seek_per_ksector_ns);
	if (!strcmp(k, "seek_max_ns"))
		return num(c, v, &d->seek_max_ns);
	if (!strcmp(k, "max_sectors"))
		return num32(c, v, &d->max_sectors);
	if (!strcmp(k, "capacity"))
		return num(c, v, &d->capacity);
	return fail(c, "unknown key", k);
}

/* A cgroup path: "/" or "/a/b" (names of letters, digits, '-', '_'); stored without the
 * root's "/" ("" is the root). */
static int cgroup_path(const struct cursor *c, const char *v, char out[64])
{
	size_t n = strlen(v);
	if (v[0] != '/' || n >= 64 || (n > 1 && v[n - 1] == '/') || strstr(v, "//"))
		return fail(c, "bad cgroup path", v);
	for (const char *s = v; *s; s++)
		if (!(*s == '/' || *s == '-' || *s == '_' || (*s >= 'a' && *s <= 'z') ||
		      (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
			return fail(c, "bad cgroup path", v);
	strcpy(out, n == 1 ? "" : v);
	return 0;
}

static int find_cgroup(const struct scenario *sc, const char *path)
{
	for (int i = 0; i < sc->ncgroups; i++)
		if (!strcmp(sc->cgroups[i].path, path))
			return i;
	return -1;
}

/* `cgroup PATH [weight=W]`: its parent must be declared before it (the root always is). */
static int parse_cgroup(const struct cursor *c, struct scenario *sc, char **t, int n)
{
	if (n < 2 || n > 3)
		return fail(c, "expected `cgroup PATH [weight=W]` in", t[0]);
	if (sc->ncgroups == (int)(sizeof(sc->cgroups) / sizeof(sc->cgroups[0])))
		return fail(c, "too many", "cgroup");
	struct sc_cgroup *g = &sc->cgroups[sc->ncgroups];
	memset(g, 0, sizeof(*g));
	if (cgroup_path(c, t[1], g->path))
		return -1;
	if (!g->path[0] || find_cgroup(sc, g->path) >= 0)
		return fail(c, "cgroup declared twice (or the root)", t[1]);
	char parent[64];
	strcpy(parent, g->path);
	*strrchr(parent, '/') = '\0';
	if (parent[0] && find_cgroup(sc, parent) < 0)
		return fail(c, "parent not declared for", t[1]);
	if (n == 3 && (strncmp(t[2], "weight=", 7) || num32(c, t[2] + 7, &g->weight)))
		return strncmp(t[2], "weight=", 7) ? fail(c, "unknown key", t[2]) : -1;
	sc->ncgroups++;
	return 0;
}

/* `cgweight PATH W [at=NS]`: writes W to the cgroup's bfq.weight. */
static int parse_cgweight(const struct cursor *c, struct scenario *sc, char **t, int n)
{
	if (n != 3 && n != 4)
		return fail(c, "expected `cgweight PATH W [at=NS]` in", t[0]);
	if (sc->ntunables == MAX_ITEMS)
		return fail(c, "too many", "cgweight");
	struct sc_tunable *tu = &sc->tunables[sc->ntunables];
	memset(tu, 0, sizeof(*tu));
	if (cgroup_path(c, t[1], tu->path))
		return -1;
	if (!tu->path[0] || find_cgroup(sc, tu->path) < 0)
		return fail(c, "undeclared cgroup", t[1]);
	if (strlen(t[2]) >= sizeof(tu->value))
		return fail(c, "too long", t[2]);
	strcpy(tu->name, "bfq.weight");
	strcpy(tu->value, t[2]);
	tu->at_boot = n == 3;
	if (n == 4 && (strncmp(t[3], "at=", 3) || num(c, t[3] + 3, &tu->time_ns)))
		return strncmp(t[3], "at=", 3) ? fail(c, "unknown key", t[3]) : -1;
	sc->ntunables++;
	return 0;
}

static int proc_key(const struct cursor *c, struct sc_proc *p, const char *k, const char *v)
{
	if (!strcmp(k, "prio"))
		return prio(c, v, &p->ioprio);
	if (!strcmp(k, "pattern")) {
		if (strcmp(v, "seq") && strcmp(v, "rand"))
			return fail(c, "bad pattern", v);
		p->random = !strcmp(v, "rand");
		return 0;
	}
	if (!strcmp(k, "dir")) {
		if (strcmp(v, "R") && strcmp(v, "W"))
			return fail(c, "bad direction", v);
		p->write = v[0] == 'W';
		return 0;
	}
	if (!strcmp(k, "sync"))
		return flag(c, v, &p->sync);
	if (!strcmp(k, "depth"))
		return num32(c, v, &p->depth);
	if (!strcmp(k, "size"))
		return num32(c, v, &p->size);
	if (!strcmp(k, "cgroup"))
		return cgroup_path(c, v, p->cgroup);
	if (!strcmp(k, "nice")) {
		char *end;
		long n = strtol(v, &end, 10);
		if (end == v || *end || n < -20 || n > 19)
			return fail(c, "bad nice", v);
		p->nice = (int)n;
		return 0;
	}
	uint64_t *fields[] = { &p->think_ns, &p->base, &p->span, &p->gap, &p->start_ns, &p->stop_ns, &p->seed };
	const char *names[] = { "think", "base", "span", "gap", "start", "stop", "seed" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(k, names[i]))
			return num(c, v, fields[i]);
	return fail(c, "unknown key", k);
}

/* Splits `key=value` tokens and hands each pair to `apply`. */
#define KEYS(c, toks, n, from, apply)                                     \
	do {                                                               \
		for (int i_ = (from); i_ < (n); i_++) {                    \
			char *eq_ = strchr((toks)[i_], '=');               \
			if (!eq_)                                          \
				return fail(c, "unknown key", (toks)[i_]); \
			*eq_ = '\0';                                       \
			if (apply((c), (toks)[i_], eq_ + 1))               \
				return -1;                                 \
		}                                                          \
	} while (0)

static int parse_proc(const struct cursor *c, struct scenario *sc, char **t, int n)
{
	if (sc->nprocs == MAX_ITEMS)
		return fail(c, "too many", "proc");
	struct sc_proc *p = &sc->procs[sc->nprocs];
	memset(p, 0, sizeof(*p));
	p->ioprio = 2 << 13 | 4;
	p->depth = 1;
	p->size = 8;
	p->stop_ns = UINT64_MAX;
	if (n < 2 || num32(c, t[1], &p->pid))
		return n < 2 ? fail(c, "missing", "pid") : -1;
	p->seed = p->pid;
#define PROC_KEY(c, k, v) proc_key(c, p, k, v)
	KEYS(c, t, n, 2, PROC_KEY);
	if (p->size == 0)
		return fail(c, "size must be positive in", "size=0");
	sc->nprocs++;
	return 0;
}

static int parse_arrival(const struct cursor *c, struct scenario *sc, char **t, int n)
{
	if (n != 7)
		return fail(c, "expected `arr NS PID R|W FLAGS SECTOR SECTORS` in", t[0]);
	if (sc->narrivals == MAX_ITEMS)
		return fail(c, "too many", "arr");
	struct sc_arrival *a = &sc->arrivals[sc->narrivals];
	memset(a, 0, sizeof(*a));
	if (num(c, t[1], &a->time_ns) || num32(c, t[2], &a->pid))
		return -1;
	if (strcmp(t[3], "R") && strcmp(t[3], "W"))
		return fail(c, "bad direction", t[3]);
	a->write = t[3][0] == 'W';
	for (const char *f = t[4]; strcmp(t[4], "-") && *f; f++) {
		if (*f == 's')
			a->sync = true;
		else if (*f == 'f')
			a->fua = true;
		else if (*f == 'h')
			a->head = true;
		else
			return fail(c, "unknown flag in", t[4]);
	}
	if (num(c, t[5], &a->sector) || num32(c, t[6], &a->sectors))
		return -1;
	if (a->sectors == 0)
		return fail(c, "sectors must be positive in", t[6]);
	sc->narrivals++;
	return 0;
}

static int parse_tunable(const struct cursor *c, struct scenario *sc, char **t, int n)
{
	if (n != 3 && n != 4)
		return fail(c, "expected `tunable NAME VALUE [at=NS]` in", t[0]);
	if (sc->ntunables == MAX_ITEMS)
		return fail(c, "too many", "tunable");
	struct sc_tunable *tu = &sc->tunables[sc->ntunables];
	if (strlen(t[1]) >= sizeof(tu->name) || strlen(t[2]) >= sizeof(tu->value))
		return fail(c, "too long", t[1]);
	memset(tu, 0, sizeof(*tu));
	strcpy(tu->name, t[1]);
	strcpy(tu->value, t[2]);
	tu->at_boot = n == 3;
	tu->time_ns = 0;
	if (n == 4 && (strncmp(t[3], "at=", 3) || num(c, t[3] + 3, &tu->time_ns)))
		return strncmp(t[3], "at=", 3) ? fail(c, "unknown key", t[3]) : -1;
	sc->ntunables++;
	return 0;
}

static int parse_line(const struct cursor *c, struct scenario *sc, char **t, int n)
{
	if (!strcmp(t[0], "origin") && n == 2)
		return num(c, t[1], &sc->origin_ns);
	if (!strcmp(t[0], "end") && n == 2)
		return num(c, t[1], &sc->end_ns);
	if (!strcmp(t[0], "device")) {
#define DEV_KEY(c, k, v) device_key(c, &sc->device, k, v)
		KEYS(c, t, n, 1, DEV_KEY);
		return 0;
	}
	if (!strcmp(t[0], "tunable"))
		return parse_tunable(c, sc, t, n);
	if (!strcmp(t[0], "proc"))
		return parse_proc(c, sc, t, n);
	if (!strcmp(t[0], "cgroup"))
		return parse_cgroup(c, sc, t, n);
	if (!strcmp(t[0], "cgweight"))
		return parse_cgweight(c, sc, t, n);
	if (!strcmp(t[0], "arr"))
		return parse_arrival(c, sc, t, n);
	if (!strcmp(t[0], "exit") && n == 3) {
		if (sc->nexits == MAX_ITEMS)
			return fail(c, "too many", "exit");
		struct sc_exit *e = &sc->exits[sc->nexits++];
		return num(c, t[1], &e->time_ns) || num32(c, t[2], &e->pid) ? -1 : 0;
	}
	return fail(c, "unknown directive", t[0]);
}

static void defaults(struct scenario *sc)
{
	memset(sc, 0, sizeof(*sc));
	sc->origin_ns = 1000000000000ull;
	sc->end_ns = 1000000000ull;
	sc->device.depth = 1;
	sc->device.rotational = true;
	sc->device.base_ns = 100000;
	sc->device.per_sector_ns = 1000;
	sc->device.max_sectors = 2560;
	sc->device.capacity = 1ull << 31;
}

int scenario_read(const char *path, struct scenario *sc)
{
	FILE *f = fopen(path, "r");
	struct cursor c = { path, 0 };
	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	defaults(sc);
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		c.line++;
		char *toks[64];
		int n = 0;
		for (char *s = strtok(line, " \t\r\n"); s && n < 64; s = strtok(NULL, " \t\r\n"))
			toks[n++] = s;
		if (n == 0 || toks[0][0] == '#')
			continue;
		if (parse_line(&c, sc, toks, n)) {
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	for (int i = 0; i < sc->nprocs; i++)
		if (sc->procs[i].cgroup[0] && find_cgroup(sc, sc->procs[i].cgroup) < 0) {
			fprintf(stderr, "%s: process %u in undeclared cgroup '%s'\n", path,
				sc->procs[i].pid, sc->procs[i].cgroup);
			return -1;
		}
	return 0;
}
