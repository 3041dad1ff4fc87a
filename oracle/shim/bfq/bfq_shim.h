/* iosched kernel oracle: what BFQ (bfq-iosched.c, bfq-wf2q.c, bfq-cgroup.c of 6.12) needs
 * beyond the shared block-layer shim: io contexts and icqs, the task (`current`), blkcg with
 * its blkg tree, hrtimer on the driver's clock, ktime, slab caches, hlists, stats counters,
 * cgroup files and the blk tracer's message hooks. Written for the oracle; names and
 * signatures follow the kernel so that the BFQ files compile unmodified. */
#ifndef SHIM_BFQ_SHIM_H
#define SHIM_BFQ_SHIM_H

#include "../block.h"

#define CONFIG_BFQ_GROUP_IOSCHED 1
#define CONFIG_BLK_CGROUP 1

typedef int pid_t_unused_;
typedef s64 ktime_t;
typedef long long loff_t_shim_;
typedef struct { s64 counter; } atomic64_t;
typedef struct { long counter; } atomic_long_t;
typedef struct { int refs; } refcount_t;

#define __user
#define __rcu
#define __percpu
#define __GFP_ZERO 0u
#define __GFP_NOWARN 0u
#define GFP_ATOMIC 0u
#define NUMA_NO_NODE (-1)
#define pr_crit(...) fprintf(stderr, __VA_ARGS__)
#define pr_err(...) fprintf(stderr, __VA_ARGS__)
#define might_sleep() ((void)0)
#define lockdep_assert_irqs_disabled() ((void)0)
#define rcu_dereference(p) (p)
#define rcu_dereference_protected(p, c) (p)
#define synchronize_rcu() ((void)0)
#define smp_wmb() barrier()
#define smp_rmb() barrier()
#define cond_resched() ((void)0)
#define raw_smp_processor_id() 0
#define BUILD_BUG_ON(c) _Static_assert(!(c), #c)
#define fallthrough __attribute__((__fallthrough__))
#define __maybe_unused __attribute__((unused))
#define U64_MAX UINT64_MAX
#define U32_MAX UINT32_MAX
#define USEC_PER_SEC 1000000L
#define NSEC_PER_USEC 1000L
#define NSEC_PER_MSEC 1000000L
#define S64_MAX INT64_MAX
#define clamp(v, lo, hi) min(max(v, lo), hi)
#define swap(a, b) do { __typeof__(a) t_ = (a); (a) = (b); (b) = t_; } while (0)
/* include/linux/math.h: the value as the signed type of its width, then its magnitude; so the
 * difference of two sector_t is a distance either way (as BFQ's get_sdist() and
 * bfq_rq_close_to_sector() need), not a wrapped unsigned number. */
#define abs(x) __builtin_choose_expr(sizeof(x) == 8,					\
	({ long long a_ = (long long)(x); a_ < 0 ? -a_ : a_; }),			\
	({ int a_ = (int)(x); a_ < 0 ? -a_ : a_; }))
#define round_up(x, y) ((((x) - 1) | ((__typeof__(x))((y) - 1))) + 1)
#define DIV_ROUND_CLOSEST(x, d) (((x) + ((d) / 2)) / (d))
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
#define set_bit(nr, addr) (*(addr) |= 1ul << (nr))
#define clear_bit(nr, addr) (*(addr) &= ~(1ul << (nr)))
#define test_bit(nr, addr) ((*(addr) >> (nr)) & 1ul)
#define ELEVATOR_FLAG_DISABLE_WBT 2
#define __cold __attribute__((cold))
#define GFP_NOIO 0u
#define USEC_PER_MSEC 1000L
#define IOPRIO_BE_NORM 4
#define clamp_val(v, lo, hi) clamp((__typeof__(v))(v), (__typeof__(v))(lo), (__typeof__(v))(hi))
#define max3(a, b, c) max(max(a, b), c)
#define __set_bit(nr, addr) set_bit(nr, addr)
#define __clear_bit(nr, addr) clear_bit(nr, addr)
#define hweight32(w) ((unsigned int)__builtin_popcount((u32)(w)))
#define time_is_after_eq_jiffies(a) time_before_eq(jiffies, a)
#define kmalloc_array(n, size, gfp) kzalloc_node((n) * (size), gfp, 0)
struct backing_dev_info;
static inline const char *bdi_dev_name(struct backing_dev_info *bdi) { (void)bdi; return "oracle"; }

static inline void atomic_inc_shim_(atomic_t *a) { a->counter++; }
#define atomic_dec_and_test(a) (--(a)->counter == 0)
#define atomic_inc_not_zero(a) ((a)->counter ? ((a)->counter++, 1) : 0)
#define atomic64_read(a) ((a)->counter)
#define atomic64_set(a, v) ((a)->counter = (v))
#define atomic64_add(v, a) ((a)->counter += (v))
#define atomic_long_set(a, v) ((a)->counter = (v))
#define atomic_long_inc(a) ((a)->counter++)
#define atomic_long_dec_and_test(a) (--(a)->counter == 0)
#define refcount_set(r, v) ((r)->refs = (v))
#define refcount_inc(r) ((r)->refs++)
#define refcount_dec_and_test(r) (--(r)->refs == 0)
#define refcount_read(r) ((r)->refs)

/* Integer division as the kernel's helpers do it (64-bit hosts). */
static inline u64 div_u64(u64 a, u32 b) { return a / b; }
static inline s64 div_s64(s64 a, s32 b) { return a / b; }
static inline u64 div64_u64(u64 a, u64 b) { return a / b; }
static inline unsigned long div64_ul(unsigned long a, unsigned long b) { return a / b; }
#define do_div(n, base) ({ u32 r_ = (u32)((n) % (base)); (n) /= (base); r_; })

/* hlist. */
struct hlist_node {
	struct hlist_node *next, **pprev;
};
struct hlist_head {
	struct hlist_node *first;
};
#define HLIST_HEAD_INIT { .first = NULL }
#define INIT_HLIST_HEAD(h) ((h)->first = NULL)
static inline void INIT_HLIST_NODE(struct hlist_node *n) { n->next = NULL; n->pprev = NULL; }
static inline int hlist_unhashed(const struct hlist_node *n) { return !n->pprev; }
static inline int hlist_empty(const struct hlist_head *h) { return !h->first; }
static inline void hlist_add_head(struct hlist_node *n, struct hlist_head *h)
{
	struct hlist_node *first = h->first;
	n->next = first;
	if (first)
		first->pprev = &n->next;
	h->first = n;
	n->pprev = &h->first;
}
static inline void hlist_del_init(struct hlist_node *n)
{
	if (hlist_unhashed(n))
		return;
	*n->pprev = n->next;
	if (n->next)
		n->next->pprev = n->pprev;
	INIT_HLIST_NODE(n);
}
#define hlist_del(n) hlist_del_init(n)
#define hlist_add_head_rcu(n, h) hlist_add_head(n, h)
#define hlist_entry(ptr, type, member) container_of(ptr, type, member)
#define hlist_entry_safe(ptr, type, member) \
	({ __typeof__(ptr) p_ = (ptr); p_ ? hlist_entry(p_, type, member) : NULL; })
#define hlist_for_each_entry(pos, head, member)                                      \
	for (pos = hlist_entry_safe((head)->first, __typeof__(*(pos)), member); pos;  \
	     pos = hlist_entry_safe((pos)->member.next, __typeof__(*(pos)), member))
#define hlist_for_each_entry_safe(pos, n, head, member)                               \
	for (pos = hlist_entry_safe((head)->first, __typeof__(*pos), member);         \
	     pos && ({ n = pos->member.next; 1; });                                     \
	     pos = hlist_entry_safe(n, __typeof__(*pos), member))

/* List operations the shared list.h leaves out (macros, so that a later list.h that adds
 * them as functions does not clash). */
static inline void shim_bfq_list_del(struct list_head *e)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
	e->next = e->prev = NULL;
}
#ifndef list_del
#define list_del(e) shim_bfq_list_del(e)
#endif
static inline void shim_bfq_list_replace_init(struct list_head *old, struct list_head *new)
{
	if (list_empty(old)) {
		INIT_LIST_HEAD(new);
		return;
	}
	new->next = old->next;
	new->next->prev = new;
	new->prev = old->prev;
	new->prev->next = new;
	INIT_LIST_HEAD(old);
}
#ifndef list_replace_init
#define list_replace_init(o, n) shim_bfq_list_replace_init(o, n)
#endif
#ifndef list_for_each_entry
#define list_for_each_entry(pos, head, member)                                   \
	for (pos = list_entry((head)->next, __typeof__(*pos), member);           \
	     &pos->member != (head);                                              \
	     pos = list_entry(pos->member.next, __typeof__(*pos), member))
#endif
#ifndef list_last_entry
#define list_last_entry(ptr, type, member) list_entry((ptr)->prev, type, member)
#endif

/* Time: one clock, the driver's. */
#define CLOCK_MONOTONIC 1
uint64_t shim_now_ns(void);
static inline u64 ktime_get_ns(void) { return shim_now_ns(); }
static inline ktime_t ktime_get(void) { return (ktime_t)shim_now_ns(); }
static inline u64 blk_time_get_ns(void) { return shim_now_ns(); }
static inline ktime_t blk_time_get(void) { return (ktime_t)shim_now_ns(); }
static inline ktime_t ns_to_ktime(u64 ns) { return (ktime_t)ns; }
static inline s64 ktime_to_ns(ktime_t t) { return t; }
static inline s64 ktime_to_us(ktime_t t) { return t / 1000; }
static inline ktime_t ktime_sub(ktime_t a, ktime_t b) { return a - b; }
static inline ktime_t ktime_add_ns(ktime_t a, u64 n) { return a + (s64)n; }
static inline s64 ktime_us_delta(ktime_t a, ktime_t b) { return (a - b) / 1000; }
static inline unsigned long nsecs_to_jiffies(u64 n) { return n / (NSEC_PER_SEC / HZ); }
static inline u64 jiffies_to_nsecs(unsigned long j) { return (u64)j * (NSEC_PER_SEC / HZ); }
static inline unsigned int jiffies_to_usecs(unsigned long j) { return (USEC_PER_SEC / HZ) * j; }
static inline unsigned long usecs_to_jiffies(unsigned int u)
{
	return (u + (USEC_PER_SEC / HZ) - 1) / (USEC_PER_SEC / HZ);
}

/* hrtimer: armed on the driver's event queue (oracle/shim/bfq/bfq.c). */
enum hrtimer_restart { HRTIMER_NORESTART, HRTIMER_RESTART };
enum hrtimer_mode { HRTIMER_MODE_ABS = 0, HRTIMER_MODE_REL = 1 };
struct hrtimer {
	enum hrtimer_restart (*function)(struct hrtimer *);
	u64 expires_ns;
	u64 generation;
	bool queued, running;
};
void hrtimer_init(struct hrtimer *t, int clock, enum hrtimer_mode mode);
void hrtimer_start(struct hrtimer *t, ktime_t tim, enum hrtimer_mode mode);
int hrtimer_try_to_cancel(struct hrtimer *t);
int hrtimer_cancel(struct hrtimer *t);
void shim_hrtimer_expire(struct hrtimer *t, u64 generation);
/* Names for objects in trace messages (misc.c). */
void shim_name(const void *p, const char *kind, u64 n);
void shim_forget(const void *p);

/* Slab caches. */
struct kmem_cache {
	const char *name;
	size_t size;
};
struct kmem_cache *kmem_cache_create(const char *name, size_t size, size_t align,
				     unsigned long flags, void *ctor);
#define KMEM_CACHE(s, flags) kmem_cache_create(#s, sizeof(struct s), __alignof__(struct s), flags, NULL)
void *kmem_cache_alloc_node(struct kmem_cache *c, gfp_t gfp, int node);
void kmem_cache_free(struct kmem_cache *c, void *p);
void kmem_cache_destroy(struct kmem_cache *c);
int kstrtoul(const char *s, unsigned int base, unsigned long *res);
char *strim(char *s);
unsigned long long simple_strtoull(const char *cp, char **endp, unsigned int base);

/* Tasks and io contexts (block/blk-ioc.c's interface). */
struct io_context;
struct blkcg;
struct task_struct {
	pid_t pid;
	int nice;
	int policy;
	struct io_context *io_context;
	/* The oracle's own: the task's cgroup and the ioprio its io_context starts with. */
	struct blkcg *shim_blkcg;
	unsigned short shim_ioprio;
};
void shim_exit_io_context(struct task_struct *task);
#define SCHED_IDLE 5
extern struct task_struct *shim_current;
#define current shim_current
#define IOPRIO_NR_LEVELS 8
#define IOPRIO_BE_NR IOPRIO_NR_LEVELS
#define IOPRIO_PRIO_LEVEL(p) IOPRIO_PRIO_DATA(p)
#define IOPRIO_DEFAULT IOPRIO_PRIO_VALUE(IOPRIO_CLASS_NONE, 0)
static inline int task_nice_ioprio(struct task_struct *t) { return (t->nice + 20) / 5; }
static inline int task_nice_ioclass(struct task_struct *t)
{
	return t->policy == SCHED_IDLE ? IOPRIO_CLASS_IDLE : IOPRIO_CLASS_BE;
}

struct io_context {
	atomic_long_t refcount;
	atomic_t active_ref;
	unsigned short ioprio;
	spinlock_t lock;
	struct list_head icq_list;
	/* The oracle's own: the task owning it (for its pid in messages). */
	struct task_struct *shim_task;
};

#define ICQ_EXITED (1 << 2)
struct io_cq {
	struct request_queue *q;
	struct io_context *ioc;
	struct list_head q_node;
	struct list_head ioc_node;
	unsigned int flags;
};
struct io_cq *ioc_find_get_icq(struct request_queue *q);
struct io_cq *ioc_lookup_icq(struct request_queue *q);
void put_io_context(struct io_context *ioc);

/* cgroups and blkcg (block/blk-cgroup.h's interface, one disk). */
#define BLKCG_MAX_POLS 6
#define CGROUP_WEIGHT_MIN 1
#define CGROUP_WEIGHT_DFL 100
#define CGROUP_WEIGHT_MAX 10000
#define CFTYPE_NOT_ON_ROOT (1 << 1)
struct cgroup {
	int level;
};
struct cgroup_subsys_state {
	struct cgroup *cgroup;
	u64 serial_nr;
	struct cgroup_subsys_state *parent;
};
struct rcu_head {
	void (*func)(struct rcu_head *);
};
#define call_rcu(h, f) (f)(h)
struct gendisk;
struct blkcg_policy_data {
	struct blkcg *blkcg;
	int plid;
};
struct blkcg {
	struct cgroup_subsys_state css;
	spinlock_t lock;
	struct hlist_head blkg_list;
	struct blkcg_policy_data *cpd[BLKCG_MAX_POLS];
	/* The oracle's own: its path ("/" for the root), its cgroup, its parent. */
	struct cgroup shim_cgroup;
	struct blkcg *shim_parent;
	char shim_path[64];
};
struct blkg_policy_data {
	struct blkcg_gq *blkg;
	int plid;
	bool online;
	struct rcu_head rcu_head;
};
struct blkcg_gq {
	struct request_queue *q;
	struct list_head q_node;
	struct hlist_node blkcg_node;
	struct blkcg *blkcg;
	struct blkcg_gq *parent;
	int refcnt;
	bool online;
	struct blkg_policy_data *pd[BLKCG_MAX_POLS];
};
struct seq_file;
struct kernfs_open_file {
	struct cgroup_subsys_state *shim_css;
};
struct cftype {
	char name[64];
	unsigned long private;
	unsigned int flags;
	int (*seq_show)(struct seq_file *, void *);
	u64 (*read_u64)(struct cgroup_subsys_state *, struct cftype *);
	int (*write_u64)(struct cgroup_subsys_state *, struct cftype *, u64);
	ssize_t (*write)(struct kernfs_open_file *, char *, size_t, loff_t);
};
struct blkcg_policy {
	int plid;
	struct cftype *dfl_cftypes;
	struct cftype *legacy_cftypes;
	struct blkcg_policy_data *(*cpd_alloc_fn)(gfp_t);
	void (*cpd_free_fn)(struct blkcg_policy_data *);
	struct blkg_policy_data *(*pd_alloc_fn)(struct gendisk *, struct blkcg *, gfp_t);
	void (*pd_init_fn)(struct blkg_policy_data *);
	void (*pd_online_fn)(struct blkg_policy_data *);
	void (*pd_offline_fn)(struct blkg_policy_data *);
	void (*pd_free_fn)(struct blkg_policy_data *);
	void (*pd_reset_stats_fn)(struct blkg_policy_data *);
};
struct blkg_conf_ctx {
	char *input;
	char *body;
	struct blkcg_gq *blkg;
};
struct cgroup_subsys {
	int unused;
};
extern struct cgroup_subsys io_cgrp_subsys;
#define cgroup_subsys_on_dfl(ss) (1)
static inline struct blkcg *css_to_blkcg(struct cgroup_subsys_state *css)
{
	return css ? container_of(css, struct blkcg, css) : NULL;
}
static inline struct blkg_policy_data *blkg_to_pd(struct blkcg_gq *blkg, struct blkcg_policy *pol)
{
	return blkg ? blkg->pd[pol->plid] : NULL;
}
static inline struct blkcg_gq *pd_to_blkg(struct blkg_policy_data *pd)
{
	return pd ? pd->blkg : NULL;
}
static inline struct blkcg_policy_data *blkcg_to_cpd(struct blkcg *blkcg, struct blkcg_policy *pol)
{
	return blkcg ? blkcg->cpd[pol->plid] : NULL;
}
static inline void blkg_get(struct blkcg_gq *blkg) { blkg->refcnt++; }
static inline void blkg_put(struct blkcg_gq *blkg) { blkg->refcnt--; }
int blkcg_policy_register(struct blkcg_policy *pol);
void blkcg_policy_unregister(struct blkcg_policy *pol);
int blkcg_activate_policy(struct gendisk *disk, const struct blkcg_policy *pol);
void blkcg_deactivate_policy(struct gendisk *disk, const struct blkcg_policy *pol);
void bio_associate_blkg_from_css(struct bio *bio, struct cgroup_subsys_state *css);
void blkg_conf_init(struct blkg_conf_ctx *ctx, char *input);
int blkg_conf_prep(struct blkcg *blkcg, const struct blkcg_policy *pol, struct blkg_conf_ctx *ctx);
void blkg_conf_exit(struct blkg_conf_ctx *ctx);
void blkcg_print_blkgs(struct seq_file *sf, struct blkcg *blkcg,
		       u64 (*prfill)(struct seq_file *, struct blkg_policy_data *, int),
		       const struct blkcg_policy *pol, int data, bool show_total);
u64 __blkg_prfill_u64(struct seq_file *sf, struct blkg_policy_data *pd, u64 v);
void seq_printf(struct seq_file *m, const char *fmt, ...);
struct cgroup_subsys_state *seq_css(struct seq_file *sf);
struct cftype *seq_cft(struct seq_file *sf);
static inline struct cgroup_subsys_state *of_css(struct kernfs_open_file *of) { return of->shim_css; }
#define blkg_for_each_descendant_pre(d_blkg, pos_css, p_blkg) \
	for ((void)(pos_css), d_blkg = shim_fatal_blkg_walk(); d_blkg; d_blkg = NULL)
struct blkcg_gq *shim_fatal_blkg_walk(void);
struct blkcg *shim_blkcg_create(struct blkcg *parent, const char *path);
struct blkcg *shim_blkcg_find(const char *path);
struct blkcg_gq *shim_blkg_lookup_create(struct blkcg *blkcg, struct request_queue *q);
struct request_queue *shim_current_queue(void);

/* Stats counters (blk-cgroup-rwstat.h): plain integers on one CPU. */
enum blkg_rwstat_type {
	BLKG_RWSTAT_READ,
	BLKG_RWSTAT_WRITE,
	BLKG_RWSTAT_SYNC,
	BLKG_RWSTAT_ASYNC,
	BLKG_RWSTAT_DISCARD,
	BLKG_RWSTAT_NR,
	BLKG_RWSTAT_TOTAL = BLKG_RWSTAT_NR,
};
struct percpu_counter {
	s64 count;
};
struct blkg_rwstat {
	struct percpu_counter cpu_cnt[BLKG_RWSTAT_NR];
	atomic64_t aux_cnt[BLKG_RWSTAT_NR];
};
struct blkg_rwstat_sample {
	u64 cnt[BLKG_RWSTAT_NR];
};
static inline int percpu_counter_init(struct percpu_counter *c, s64 v, gfp_t g) { (void)g; c->count = v; return 0; }
static inline void percpu_counter_destroy(struct percpu_counter *c) { (void)c; }
static inline void percpu_counter_set(struct percpu_counter *c, s64 v) { c->count = v; }
static inline void percpu_counter_add_batch(struct percpu_counter *c, s64 v, s32 b) { (void)b; c->count += v; }
static inline s64 percpu_counter_sum_positive(struct percpu_counter *c) { return c->count > 0 ? c->count : 0; }
#define BLKG_STAT_CPU_BATCH (INT_MAX / 2)
static inline int blkg_rwstat_init(struct blkg_rwstat *r, gfp_t g) { (void)g; memset(r, 0, sizeof(*r)); return 0; }
static inline void blkg_rwstat_exit(struct blkg_rwstat *r) { (void)r; }
static inline void blkg_rwstat_add(struct blkg_rwstat *r, blk_opf_t opf, uint64_t val)
{
	r->cpu_cnt[op_is_write(opf) ? BLKG_RWSTAT_WRITE : BLKG_RWSTAT_READ].count += val;
	r->cpu_cnt[op_is_sync(opf) ? BLKG_RWSTAT_SYNC : BLKG_RWSTAT_ASYNC].count += val;
}
static inline uint64_t blkg_rwstat_total(struct blkg_rwstat *r)
{
	return r->cpu_cnt[BLKG_RWSTAT_READ].count + r->cpu_cnt[BLKG_RWSTAT_WRITE].count;
}
static inline void blkg_rwstat_reset(struct blkg_rwstat *r) { memset(r, 0, sizeof(*r)); }
static inline void blkg_rwstat_add_aux(struct blkg_rwstat *to, struct blkg_rwstat *from)
{
	for (int i = 0; i < BLKG_RWSTAT_NR; i++)
		to->aux_cnt[i].counter += from->cpu_cnt[i].count + from->aux_cnt[i].counter;
}
void blkg_rwstat_recursive_sum(struct blkcg_gq *blkg, struct blkcg_policy *pol, int off,
			       struct blkg_rwstat_sample *sum);
u64 __blkg_prfill_rwstat(struct seq_file *sf, struct blkg_policy_data *pd,
			 const struct blkg_rwstat_sample *rwstat);
u64 blkg_prfill_rwstat(struct seq_file *sf, struct blkg_policy_data *pd, int off);

/* The disk: capacity and (no) independent access ranges. */
struct blk_independent_access_range {
	sector_t sector;
	sector_t nr_sectors;
};
struct blk_independent_access_ranges {
	unsigned int nr_ia_ranges;
	struct blk_independent_access_range ia_range[];
};
struct gendisk {
	struct request_queue *queue;
	struct blk_independent_access_ranges *ia_ranges;
	int node_id;
	sector_t capacity;
	struct backing_dev_info *bdi;
};
static inline sector_t get_capacity(struct gendisk *disk) { return disk->capacity; }

/* blk-mq, wbt, stats: the queue is run by the driver after every event. */
static inline void blk_mq_run_hw_queues(struct request_queue *q, bool async) { (void)q; (void)async; }
static inline void wbt_disable_default(struct gendisk *d) { (void)d; }
static inline void wbt_enable_default(struct gendisk *d) { (void)d; }
#ifndef blk_stat_enable_accounting
#define blk_stat_enable_accounting(q) ((void)(q))
#define blk_stat_disable_accounting(q) ((void)(q))
#endif

/* The blk tracer: BFQ's messages become the driver's `L` lines (bfq.c). */
static inline bool blk_trace_note_message_enabled(struct request_queue *q) { (void)q; return true; }
void shim_trace_msg(struct cgroup_subsys_state *css, const char *fmt, ...);
#define blk_add_trace_msg(q, fmt, ...) shim_trace_msg(NULL, fmt, ##__VA_ARGS__)
#define blk_add_cgroup_trace_msg(q, css, fmt, ...) shim_trace_msg(css, fmt, ##__VA_ARGS__)

#endif
