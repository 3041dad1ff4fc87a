/* iosched kernel oracle: drives a kernel blk-mq scheduler, compiled unmodified against the
 * shim, through a scenario, and prints every decision one per line (the Rust side prints the
 * same lines for iosched's core; crates/lab/src/oracle/mod.rs documents them).
 *
 * The block layer modelled: a bio first tries the scheduler's bio_merge; else it takes a
 * scheduler tag (nr_requests of them; limit_depth's shallow depth caps how many may be in use
 * when it asks) or waits for one in arrival order, then insert_requests. After every event
 * the hardware queue runs: while the device holds fewer than `depth` requests and has_work,
 * dispatch_request; a NULL answer with work pending re-runs the queue one jiffy-rounded
 * 3 ms later (BLK_MQ_BUDGET_DELAY), unless a re-run is already pending. Completion frees
 * the request (finish_request) and its tag, which wakes the tag waiters in order. */
#include "scenario.h"
#include "../shim/oracle.h"

/* A scheduler's own hooks (BFQ: oracle/driver/bfq.c); these weak defaults do nothing. */
__attribute__((weak)) void shim_sched_setup(struct scenario *s, struct request_queue *q) { (void)s; (void)q; }
__attribute__((weak)) void shim_task_enter(uint32_t pid) { (void)pid; }
__attribute__((weak)) void shim_task_exit(uint32_t pid) { (void)pid; }
__attribute__((weak)) void shim_bio_init(struct bio *bio) { (void)bio; }
__attribute__((weak)) void shim_hrtimer_event(void *timer, uint64_t generation) { (void)timer; (void)generation; }
__attribute__((weak)) void shim_sched_ready(struct scenario *s) { (void)s; }
__attribute__((weak)) void shim_request_born(struct request *rq) { (void)rq; }
__attribute__((weak)) void shim_request_gone(struct request *rq) { (void)rq; }
__attribute__((weak)) int shim_store_extra(const struct sc_tunable *tu, char *shown) { (void)tu; (void)shown; return -ENOENT; }

/* An hrtimer (BFQ's idle timer) fires before the other events of its instant, as a due
 * jiffies timer does (kyber's), and the queue runs after it. */
enum kind { EV_HRTIMER, EV_COMPLETE, EV_RERUN, EV_TUNABLE, EV_EXIT, EV_ARRIVE };

struct event {
	uint64_t t;
	enum kind kind;
	uint64_t seq;
	void *ptr;
	int index;
};

struct proc_state {
	struct sc_proc *spec;
	uint64_t rng, next_sector;
	bool exited;
};

static struct scenario sc;
static struct request_queue queue;
static struct blk_mq_hw_ctx hctx;
static struct blk_mq_tags sched_tags;
static struct elevator_type *et;
static struct proc_state procs[MAX_ITEMS];
static struct event *heap;
static size_t heap_len, heap_cap;
static uint64_t now_ns, end_abs, next_seq, next_bio_id = 1, rerun_at;
static bool rerun_pending;
static uint32_t in_device, tags_used;
static uint64_t last_end;
/* Bios waiting for a tag, in arrival order, with the shallow depth they asked with. */
static struct bio *waiting[MAX_ITEMS * 4];
static unsigned int waiting_depth[MAX_ITEMS * 4];
static size_t nwaiting;

/* CPU 0's software queue, the only one (kyber keeps a queue per software queue). */
struct blk_mq_ctx shim_mq_ctx;

uint64_t shim_now_ns(void)
{
	return now_ns;
}

static void push(uint64_t t, enum kind kind, void *ptr, int index);

/* An hrtimer armed to fire at `t` (absolute ns); `generation` tells a stale arm. */
void shim_timer_push(uint64_t t, void *timer, uint64_t generation)
{
	push(t, EV_HRTIMER, timer, (int)generation);
}

static void set_clock(uint64_t t)
{
	now_ns = t;
	jiffies = INITIAL_JIFFIES + t / (NSEC_PER_SEC / HZ);
}

static bool before(const struct event *a, const struct event *b)
{
	if (a->t != b->t)
		return a->t < b->t;
	if (a->kind != b->kind)
		return a->kind < b->kind;
	return a->seq < b->seq;
}

static void push(uint64_t t, enum kind kind, void *ptr, int index)
{
	if (heap_len == heap_cap) {
		heap_cap = heap_cap ? heap_cap * 2 : 256;
		heap = realloc(heap, heap_cap * sizeof(*heap));
		if (!heap)
			shim_fatal("out of memory", __FILE__, __LINE__);
	}
	size_t i = heap_len++;
	heap[i] = (struct event){ t, kind, next_seq++, ptr, index };
	while (i > 0 && before(&heap[i], &heap[(i - 1) / 2])) {
		struct event tmp = heap[i];
		heap[i] = heap[(i - 1) / 2];
		heap[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
}

static struct event pop(void)
{
	struct event top = heap[0];
	heap[0] = heap[--heap_len];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < heap_len && before(&heap[l], &heap[m]))
			m = l;
		if (r < heap_len && before(&heap[r], &heap[m]))
			m = r;
		if (m == i)
			break;
		struct event tmp = heap[i];
		heap[i] = heap[m];
		heap[m] = tmp;
		i = m;
	}
	return top;
}

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static struct bio *new_bio(uint32_t pid, bool write, bool sync, bool fua, uint64_t sector,
			   uint32_t sectors, uint16_t ioprio)
{
	struct bio *b = kzalloc(sizeof(*b), GFP_KERNEL);
	b->bi_opf = (write ? REQ_OP_WRITE : REQ_OP_READ) | (sync ? REQ_SYNC : 0) | (fua ? REQ_FUA : 0);
	b->bi_ioprio = ioprio;
	b->bi_iter.bi_sector = sector;
	b->bi_iter.bi_size = sectors << SECTOR_SHIFT;
	b->shim_id = next_bio_id++;
	b->shim_pid = pid;
	shim_bio_init(b);
	return b;
}

/* Process `i`'s next bio, at `t`. */
static void issue_next(int i, uint64_t t)
{
	struct proc_state *p = &procs[i];
	const struct sc_proc *s = p->spec;
	uint64_t sector;
	if (s->random) {
		uint64_t slots = s->span / s->size ? s->span / s->size : 1;
		sector = s->base + (splitmix64(&p->rng) % slots) * s->size;
	} else {
		sector = p->next_sector;
		p->next_sector += s->size + s->gap;
		if (s->span && p->next_sector + s->size > s->base + s->span)
			p->next_sector = s->base;
	}
	struct sc_arrival *a = kzalloc(sizeof(*a), GFP_KERNEL);
	*a = (struct sc_arrival){ .time_ns = t, .pid = s->pid, .sectors = s->size,
				  .write = s->write, .sync = s->sync, .sector = sector };
	push(t, EV_ARRIVE, a, 1);
}

static int proc_index(uint32_t pid)
{
	for (int i = 0; i < sc.nprocs; i++)
		if (sc.procs[i].pid == pid)
			return i;
	return -1;
}

static void print_bio_dir(const struct bio *b)
{
	putchar(op_is_write(b->bi_opf) ? 'W' : 'R');
}

void shim_bio_merged(struct request *rq, struct bio *bio, char side)
{
	printf("M %llu %llu %llu %c\n", (unsigned long long)now_ns,
	       (unsigned long long)bio->shim_id, (unsigned long long)rq->shim_id, side);
}

void shim_requests_merged(struct request *rq, struct request *next)
{
	printf("A %llu %llu %llu\n", (unsigned long long)now_ns,
	       (unsigned long long)next->shim_id, (unsigned long long)rq->shim_id);
}

static bool tag_free(unsigned int shallow)
{
	return tags_used < queue.nr_requests && (shallow == 0 || tags_used < shallow);
}

/* A tag was taken: build the request and hand it to the scheduler. */
static void insert(struct bio *bio, bool head)
{
	shim_task_enter(bio->shim_pid);
	struct request *rq = kzalloc(sizeof(*rq), GFP_KERNEL);
	rq->q = &queue;
	rq->mq_hctx = &hctx;
	rq->mq_ctx = &shim_mq_ctx;
	rq->cmd_flags = bio->bi_opf;
	rq->rq_flags = RQF_USE_SCHED;
	rq->ioprio = bio->bi_ioprio;
	rq->__sector = bio->bi_iter.bi_sector;
	rq->__data_len = bio->bi_iter.bi_size;
	rq->bio = rq->biotail = bio;
	rq->start_time_ns = now_ns;
	rq->shim_id = bio->shim_id;
	rq->shim_pid = bio->shim_pid;
	rq->shim_tag = true;
	INIT_LIST_HEAD(&rq->queuelist);
	INIT_LIST_HEAD(&rq->hash);
	RB_CLEAR_NODE(&rq->rb_node);
	tags_used++;
	shim_request_born(rq);
	if (et->ops.prepare_request)
		et->ops.prepare_request(rq);
	printf("I %llu %llu\n", (unsigned long long)now_ns, (unsigned long long)rq->shim_id);
	LIST_HEAD(list);
	list_add_tail(&rq->queuelist, &list);
	et->ops.insert_requests(&hctx, &list, head ? BLK_MQ_INSERT_AT_HEAD : 0);
}

static void wake_waiters(void)
{
	size_t kept = 0;
	for (size_t i = 0; i < nwaiting; i++) {
		if (tag_free(waiting_depth[i])) {
			insert(waiting[i], false);
		} else {
			waiting[kept] = waiting[i];
			waiting_depth[kept++] = waiting_depth[i];
		}
	}
	nwaiting = kept;
}

void shim_request_freed(struct request *rq)
{
	shim_request_gone(rq);
	if (rq->shim_tag) {
		rq->shim_tag = false;
		tags_used--;
	}
	/* Bios moved to the request that absorbed it; a completed request's were ended. */
	free(rq);
}

static void submit(const struct sc_arrival *a, uint16_t ioprio)
{
	shim_task_enter(a->pid);
	struct bio *bio = new_bio(a->pid, a->write, a->sync, a->fua, a->sector, a->sectors, ioprio);
	printf("Q %llu %llu %u ", (unsigned long long)now_ns, (unsigned long long)bio->shim_id, a->pid);
	print_bio_dir(bio);
	printf(" %llu %u\n", (unsigned long long)a->sector, a->sectors);
	if (!a->head && et->ops.bio_merge && et->ops.bio_merge(&queue, bio, 1))
		return;
	struct blk_mq_alloc_data data = { .q = &queue, .cmd_flags = bio->bi_opf, .hctx = &hctx };
	if (et->ops.limit_depth)
		et->ops.limit_depth(bio->bi_opf, &data);
	if (nwaiting == 0 && tag_free(data.shallow_depth)) {
		insert(bio, a->head);
		return;
	}
	if (nwaiting == sizeof(waiting) / sizeof(waiting[0]))
		shim_fatal("too many bios waiting for a tag", __FILE__, __LINE__);
	printf("W %llu %llu\n", (unsigned long long)now_ns, (unsigned long long)bio->shim_id);
	waiting[nwaiting] = bio;
	waiting_depth[nwaiting++] = data.shallow_depth;
}

static uint64_t service_ns(const struct request *rq)
{
	const struct sc_device *d = &sc.device;
	uint64_t pos = blk_rq_pos(rq);
	uint64_t dist = pos > last_end ? pos - last_end : last_end - pos;
	uint64_t seek = 0;
	if (dist) {
		seek = d->seek_min_ns + dist * d->seek_per_ksector_ns / 1024;
		if (d->seek_max_ns && seek > d->seek_max_ns)
			seek = d->seek_max_ns;
	}
	return d->base_ns + d->per_sector_ns * blk_rq_sectors(rq) + seek;
}

/* Kernel: __blk_mq_do_dispatch_sched(), with the device's free slots as driver tags. */
static void run_queue(void)
{
	while (in_device < sc.device.depth) {
		if (!et->ops.has_work(&hctx))
			break;
		struct request *rq = et->ops.dispatch_request(&hctx);
		if (!rq) {
			if (!rerun_pending) {
				rerun_pending = true;
				unsigned long at = jiffies + msecs_to_jiffies(3);
				rerun_at = (at - INITIAL_JIFFIES) * (NSEC_PER_SEC / HZ);
				push(rerun_at, EV_RERUN, NULL, 0);
			}
			break;
		}
		rq->rq_flags |= RQF_STARTED;
		rq->io_start_time_ns = now_ns;
		uint64_t svc = service_ns(rq);
		last_end = blk_rq_pos(rq) + blk_rq_sectors(rq);
		in_device++;
		printf("D %llu %llu %llu %u\n", (unsigned long long)now_ns,
		       (unsigned long long)rq->shim_id, (unsigned long long)blk_rq_pos(rq),
		       blk_rq_sectors(rq));
		push(now_ns + svc, EV_COMPLETE, rq, 0);
	}
}

static void complete(struct request *rq)
{
	in_device--;
	printf("C %llu %llu\n", (unsigned long long)now_ns, (unsigned long long)rq->shim_id);
	for (struct bio *b = rq->bio, *next; b; b = next) {
		next = b->bi_next;
		int i = proc_index(b->shim_pid);
		const struct sc_proc *s = procs[i].spec;
		uint64_t t = now_ns + s->think_ns;
		if (s->depth > 0 && !procs[i].exited && t < s->stop_ns && t < end_abs)
			issue_next(i, t);
		free(b);
	}
	rq->bio = NULL;
	/* Kernel: __blk_mq_end_request(): the scheduler hears of the completion, with its
	 * time, before the request is finished and freed. */
	if (et->ops.completed_request)
		et->ops.completed_request(rq, now_ns);
	blk_mq_free_request(rq);
	wake_waiters();
}

static void store_tunable(const struct sc_tunable *tu)
{
	char extra[4096];
	int er = shim_store_extra(tu, extra);
	if (er != -ENOENT) {
		printf("S %llu %s@%s %s%s\n", (unsigned long long)now_ns, tu->name, tu->path, extra,
		       er < 0 ? " rejected" : "");
		return;
	}
	for (struct elv_fs_entry *a = et->elevator_attrs; a && a->attr.name; a++) {
		if (strcmp(a->attr.name, tu->name))
			continue;
		char value[40], shown[4096];
		snprintf(value, sizeof(value), "%s\n", tu->value);
		ssize_t r = a->store(queue.elevator, value, strlen(value));
		a->show(queue.elevator, shown);
		shown[strcspn(shown, "\n")] = '\0';
		printf("S %llu %s %s%s\n", (unsigned long long)now_ns, tu->name, shown,
		       r < 0 ? " rejected" : "");
		return;
	}
	fprintf(stderr, "kernel-oracle: %s has no tunable '%s'\n", et->elevator_name, tu->name);
	exit(2);
}

static void handle(const struct event *ev)
{
	switch (ev->kind) {
	case EV_COMPLETE:
		complete(ev->ptr);
		break;
	case EV_HRTIMER:
		shim_hrtimer_event(ev->ptr, (uint64_t)(unsigned int)ev->index);
		break;
	case EV_RERUN:
		rerun_pending = false;
		printf("R %llu\n", (unsigned long long)now_ns);
		break;
	case EV_TUNABLE:
		store_tunable(ev->ptr);
		break;
	case EV_EXIT: {
		const struct sc_exit *x = ev->ptr;
		int i = proc_index(x->pid);
		procs[i].exited = true;
		printf("X %llu %u\n", (unsigned long long)now_ns, x->pid);
		shim_task_exit(x->pid);
		break;
	}
	case EV_ARRIVE: {
		struct sc_arrival *a = ev->ptr;
		int i = proc_index(a->pid);
		submit(a, procs[i].spec->ioprio);
		if (ev->index)
			free(a);
		break;
	}
	}
	run_queue();
}

static void setup(void)
{
	et = shim_registered();
	if (!et)
		shim_fatal("no elevator registered", __FILE__, __LINE__);
	queue.rotational = sc.device.rotational;
	queue.max_sectors = sc.device.max_sectors;
	/* blk_mq_init_sched(): twice the device depth, at most 2 * BLKDEV_DEFAULT_RQ. */
	queue.nr_requests = sc.device.nr_requests ? sc.device.nr_requests
				: 2 * (sc.device.depth < 128 ? sc.device.depth : 128);
	INIT_LIST_HEAD(&queue.hash_list);
	hctx.queue = &queue;
	hctx.nr_ctx = 1;
	shim_mq_ctx.hctxs[HCTX_TYPE_DEFAULT] = &hctx;
	hctx.sched_tags = &sched_tags;
	shim_sched_setup(&sc, &queue);
	if (et->ops.init_sched(&queue, et))
		shim_fatal("init_sched failed", __FILE__, __LINE__);
	if (et->ops.init_hctx && et->ops.init_hctx(&hctx, 0))
		shim_fatal("init_hctx failed", __FILE__, __LINE__);
	shim_sched_ready(&sc);
}

static void schedule_scenario(uint64_t origin)
{
	for (int i = 0; i < sc.ntunables; i++)
		if (sc.tunables[i].at_boot)
			store_tunable(&sc.tunables[i]);
		else if (origin + sc.tunables[i].time_ns < end_abs)
			push(origin + sc.tunables[i].time_ns, EV_TUNABLE, &sc.tunables[i], 0);
	for (int i = 0; i < sc.nexits; i++)
		if (origin + sc.exits[i].time_ns < end_abs)
			push(origin + sc.exits[i].time_ns, EV_EXIT, &sc.exits[i], 0);
	for (int i = 0; i < sc.nprocs; i++) {
		struct sc_proc *s = &sc.procs[i];
		procs[i] = (struct proc_state){ s, s->seed, s->base, false };
		if (s->stop_ns != UINT64_MAX)
			s->stop_ns += origin;
		uint64_t start = origin + s->start_ns;
		for (uint32_t k = 0; k < s->depth && start < end_abs && start < s->stop_ns; k++)
			issue_next(i, start);
	}
	for (int i = 0; i < sc.narrivals; i++) {
		sc.arrivals[i].time_ns += origin;
		if (sc.arrivals[i].time_ns < end_abs)
			push(sc.arrivals[i].time_ns, EV_ARRIVE, &sc.arrivals[i], 0);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s SCENARIO\n", argv[0]);
		return 2;
	}
	if (scenario_read(argv[1], &sc))
		return 2;
	for (int i = 0; i < sc.narrivals; i++)
		if (proc_index(sc.arrivals[i].pid) < 0) {
			fprintf(stderr, "%s: arrival for unknown pid %u\n", argv[1], sc.arrivals[i].pid);
			return 2;
		}
	for (int i = 0; i < sc.nexits; i++)
		if (proc_index(sc.exits[i].pid) < 0) {
			fprintf(stderr, "%s: exit of unknown pid %u\n", argv[1], sc.exits[i].pid);
			return 2;
		}
	shim_module_init();
	set_clock(0);
	setup();
	end_abs = sc.origin_ns + sc.end_ns;
	schedule_scenario(sc.origin_ns);
	for (;;) {
		/* A due timer runs before the events of its instant (the tick comes first); it
		 * does not run the queue (kyber's timer only resizes its domains). */
		uint64_t at;
		struct timer_list *timer = shim_timer_next(&at);
		if (timer && at < end_abs && (!heap_len || at <= heap[0].t)) {
			set_clock(at);
			shim_timer_fire(timer, at);
			continue;
		}
		if (!heap_len || heap[0].t >= end_abs)
			break;
		struct event ev = pop();
		set_clock(ev.t);
		handle(&ev);
	}
	return 0;
}
