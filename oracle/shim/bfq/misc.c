/* iosched kernel oracle: BFQ's hrtimer on the driver's event queue, slab caches with stable
 * object names for the trace, the blk tracer's message hook, and string helpers. */
#include <stdarg.h>

#include "bfq_shim.h"

void shim_timer_push(uint64_t t, void *timer, uint64_t generation);

/* hrtimer: an arm pushes an event tagged with the timer's generation; a cancel or a re-arm
 * bumps the generation, so the stale event is dropped when it comes up. */
void hrtimer_init(struct hrtimer *t, int clock, enum hrtimer_mode mode)
{
	(void)clock;
	(void)mode;
	memset(t, 0, sizeof(*t));
}

void hrtimer_start(struct hrtimer *t, ktime_t tim, enum hrtimer_mode mode)
{
	u64 now = shim_now_ns();
	u64 at = mode == HRTIMER_MODE_REL ? now + (u64)tim : (u64)tim;
	if (at < now)
		at = now;
	t->generation = (t->generation + 1) & 0x7fffffff;
	t->expires_ns = at;
	t->queued = true;
	printf("H %llu arm %llu\n", (unsigned long long)now, (unsigned long long)at);
	shim_timer_push(at, t, t->generation);
}

/* 1: a pending expiry was cancelled; 0: none was pending; -1: its callback is running. */
int hrtimer_try_to_cancel(struct hrtimer *t)
{
	if (!t->queued)
		return t->running ? -1 : 0;
	t->queued = false;
	t->generation = (t->generation + 1) & 0x7fffffff;
	printf("H %llu cancel\n", (unsigned long long)shim_now_ns());
	return 1;
}

int hrtimer_cancel(struct hrtimer *t)
{
	return hrtimer_try_to_cancel(t) > 0;
}

/* Called by the driver when an armed expiry comes up. */
void shim_hrtimer_expire(struct hrtimer *t, u64 generation)
{
	if (!t->queued || t->generation != generation)
		return;
	t->queued = false;
	t->running = true;
	printf("H %llu fire\n", (unsigned long long)shim_now_ns());
	enum hrtimer_restart r = t->function(t);
	t->running = false;
	if (r != HRTIMER_NORESTART)
		shim_fatal("hrtimer restart is not modelled", __FILE__, __LINE__);
}

/* Object names in messages: a bfq_queue is `q<N>` (N counts allocations from 1), a request
 * `r<ID>` (its first bio's id), anything else (the embedded oom queue too) `p<N>` in order
 * of first appearance; a freed object's name is not reused. */
struct name {
	const void *ptr;
	char label[24];
};
static struct name names[1 << 14];
static size_t nnames;
static u64 next_queue = 1, next_other = 1;

static struct name *name_of(const void *p)
{
	for (size_t i = 0; i < nnames; i++)
		if (names[i].ptr == p)
			return &names[i];
	return NULL;
}

void shim_name(const void *p, const char *kind, u64 n)
{
	struct name *e = name_of(p);
	if (!e) {
		if (nnames == ARRAY_SIZE(names))
			shim_fatal("too many live objects", __FILE__, __LINE__);
		e = &names[nnames++];
	}
	e->ptr = p;
	snprintf(e->label, sizeof(e->label), "%s%llu", kind, (unsigned long long)n);
}

void shim_forget(const void *p)
{
	struct name *e = name_of(p);
	if (e)
		*e = names[--nnames];
}

static const char *label(const void *p)
{
	if (!p)
		return "(null)";
	struct name *e = name_of(p);
	if (!e) {
		shim_name(p, "p", next_other++);
		e = name_of(p);
	}
	return e->label;
}

struct kmem_cache *kmem_cache_create(const char *name, size_t size, size_t align,
				     unsigned long flags, void *ctor)
{
	(void)align;
	(void)flags;
	(void)ctor;
	struct kmem_cache *c = kzalloc(sizeof(*c), GFP_KERNEL);
	c->name = name;
	c->size = size;
	return c;
}

void *kmem_cache_alloc_node(struct kmem_cache *c, gfp_t gfp, int node)
{
	void *p = kzalloc_node(c->size, gfp, node);
	if (!strcmp(c->name, "bfq_queue"))
		shim_name(p, "q", next_queue++);
	return p;
}

void kmem_cache_free(struct kmem_cache *c, void *p)
{
	(void)c;
	shim_forget(p);
	free(p);
}

void kmem_cache_destroy(struct kmem_cache *c)
{
	free(c);
}

/* One conversion of `spec` (a printf conversion, flags to letter) with its argument. */
static int one(char *out, size_t n, const char *spec, size_t len, va_list *ap)
{
	char f[32];
	char conv = spec[len - 1];
	if (len >= sizeof(f))
		shim_fatal("format too long", __FILE__, __LINE__);
	memcpy(f, spec, len);
	f[len] = '\0';
	bool wide = strstr(f, "l") || strstr(f, "z");
	switch (conv) {
	case 'p':
		return snprintf(out, n, "%s", label(va_arg(*ap, void *)));
	case 's':
		return snprintf(out, n, f, va_arg(*ap, const char *));
	case 'c':
		return snprintf(out, n, f, va_arg(*ap, int));
	case 'd': case 'i': case 'u': case 'x': case 'X':
		return wide ? snprintf(out, n, f, va_arg(*ap, long long))
			    : snprintf(out, n, f, va_arg(*ap, int));
	case '%':
		return snprintf(out, n, "%%");
	default:
		shim_fatal("unknown conversion in a trace message", __FILE__, __LINE__);
		return 0;
	}
}

/* Kernel: blk_add_trace_msg() / blk_add_cgroup_trace_msg(): one `L` line, the cgroup's path
 * (or `-`) and the message with pointers named. */
void shim_trace_msg(struct cgroup_subsys_state *css, const char *fmt, ...)
{
	char msg[1024];
	size_t at = 0;
	va_list ap;
	va_start(ap, fmt);
	for (const char *s = fmt; *s && at < sizeof(msg) - 1;) {
		if (*s != '%') {
			msg[at++] = *s++;
			continue;
		}
		size_t len = 1 + strspn(s + 1, "-+ #0123456789.lhz");
		len += s[len] != '\0';
		int w = one(msg + at, sizeof(msg) - at, s, len, &ap);
		at += w > 0 ? (size_t)w : 0;
		if (at > sizeof(msg) - 1)
			at = sizeof(msg) - 1;
		s += len;
	}
	msg[at] = '\0';
	va_end(ap);
	const char *cg = css ? container_of(css, struct blkcg, css)->shim_path : "-";
	printf("L %llu %s %s\n", (unsigned long long)shim_now_ns(), cg, msg);
}

int kstrtoul(const char *s, unsigned int base, unsigned long *res)
{
	char *end;
	if (*s == '+')
		s++;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, (int)base);
	if (*end == '\n')
		end++;
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE)
		return -ERANGE;
	*res = v;
	return 0;
}

char *strim(char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n'))
		s[--n] = '\0';
	return s;
}

unsigned long long simple_strtoull(const char *cp, char **endp, unsigned int base)
{
	return strtoull(cp, endp, (int)base);
}
