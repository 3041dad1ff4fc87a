/* iosched kernel oracle: the block layer around a blk-mq scheduler, written for the oracle
 * from the kernel's documented behaviour (elevator.c, blk-merge.c, blk-mq-sched.c of 6.12):
 * the sort-tree helpers, the merge hash, the one-hit merge cache (q->last_merge), bio and
 * request merging, and freeing a request. Device limits: only max_sectors bounds a merge
 * (segments are not modelled; the Rust side models the same). */
#include <stdarg.h>

#include "block.h"
#include "oracle.h"

unsigned long jiffies = INITIAL_JIFFIES;
static struct elevator_type *registered;

void shim_fatal(const char *what, const char *file, int line)
{
	fprintf(stderr, "kernel-oracle: %s at %s:%d\n", what, file, line);
	exit(3);
}

int kstrtoint(const char *s, unsigned int base, int *res)
{
	char *end;
	/* strtol() would skip leading blanks; the kernel's parser does not. */
	if (*s == ' ' || *s == '\t' || *s == '\n')
		return -EINVAL;
	errno = 0;
	long v = strtol(s, &end, (int)base);
	if (end == s)
		return -EINVAL;
	if (*end == '\n')
		end++;
	if (*end != '\0')
		return -EINVAL;
	if (errno == ERANGE || v < INT_MIN || v > INT_MAX)
		return -ERANGE;
	*res = (int)v;
	return 0;
}

int sysfs_emit(char *buf, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, 4096, fmt, ap);
	va_end(ap);
	return n;
}

int elv_register(struct elevator_type *e)
{
	registered = e;
	return 0;
}

void elv_unregister(struct elevator_type *e)
{
	(void)e;
	registered = NULL;
}

struct elevator_type *shim_registered(void)
{
	return registered;
}

struct elevator_queue *elevator_alloc(struct request_queue *q, struct elevator_type *e)
{
	(void)q;
	struct elevator_queue *eq = kzalloc(sizeof(*eq), GFP_KERNEL);
	eq->type = e;
	return eq;
}

/* Equal sectors go right: a request joins after those already at its sector. */
void elv_rb_add(struct rb_root *root, struct request *rq)
{
	struct rb_node **p = &root->rb_node;
	struct rb_node *parent = NULL;

	while (*p) {
		parent = *p;
		if (blk_rq_pos(rq) < blk_rq_pos(rb_entry_rq(parent)))
			p = &(*p)->rb_left;
		else
			p = &(*p)->rb_right;
	}
	rb_link_node(&rq->rb_node, parent, p);
	rb_insert_color(&rq->rb_node, root);
}

void elv_rb_del(struct rb_root *root, struct request *rq)
{
	BUG_ON(RB_EMPTY_NODE(&rq->rb_node));
	rb_erase(&rq->rb_node, root);
	RB_CLEAR_NODE(&rq->rb_node);
}

/* The first request met on the search path that starts at `sector`. */
struct request *elv_rb_find(struct rb_root *root, sector_t sector)
{
	struct rb_node *n = root->rb_node;

	while (n) {
		struct request *rq = rb_entry_rq(n);
		if (sector < blk_rq_pos(rq))
			n = n->rb_left;
		else if (sector > blk_rq_pos(rq))
			n = n->rb_right;
		else
			return rq;
	}
	return NULL;
}

struct request *elv_rb_former_request(struct request_queue *q, struct request *rq)
{
	(void)q;
	struct rb_node *n = rb_prev(&rq->rb_node);
	return n ? rb_entry_rq(n) : NULL;
}

struct request *elv_rb_latter_request(struct request_queue *q, struct request *rq)
{
	(void)q;
	struct rb_node *n = rb_next(&rq->rb_node);
	return n ? rb_entry_rq(n) : NULL;
}

void elv_rqhash_del(struct request_queue *q, struct request *rq)
{
	(void)q;
	if (rq->on_hash)
		list_del_init(&rq->hash);
	rq->on_hash = false;
}

void elv_rqhash_add(struct request_queue *q, struct request *rq)
{
	list_add(&rq->hash, &q->hash_list);
	rq->on_hash = true;
}

static void elv_rqhash_reposition(struct request_queue *q, struct request *rq)
{
	elv_rqhash_del(q, rq);
	elv_rqhash_add(q, rq);
}

/* The newest mergeable request ending at `offset`. */
static struct request *elv_rqhash_find(struct request_queue *q, sector_t offset)
{
	struct request *rq, *next;

	list_for_each_entry_safe(rq, next, &q->hash_list, hash) {
		if (!rq_mergeable(rq)) {
			elv_rqhash_del(q, rq);
			continue;
		}
		if (blk_rq_pos(rq) + blk_rq_sectors(rq) == offset)
			return rq;
	}
	return NULL;
}

static bool bio_mergeable(struct bio *bio)
{
	return !(bio->bi_opf & REQ_NOMERGE_FLAGS);
}

bool elv_bio_merge_ok(struct request *rq, struct bio *bio)
{
	if (!rq_mergeable(rq) || !bio_mergeable(bio))
		return false;
	if (req_op(rq) != bio_op(bio) || bio_data_dir(bio) != rq_data_dir(rq))
		return false;
	/* blk_cgroup_mergeable(): only bios of one blkg share a request. */
	if (rq->bio && rq->bio->bi_blkg != bio->bi_blkg)
		return false;
	if (rq->bio && rq->bio->bi_ioprio != bio->bi_ioprio)
		return false;
	/* elv_iosched_allow_bio_merge(). */
	struct elevator_queue *e = rq->q->elevator;
	return !e->type->ops.allow_merge || e->type->ops.allow_merge(rq->q, rq, bio);
}

static enum elv_merge blk_try_merge(struct request *rq, struct bio *bio)
{
	if (blk_rq_pos(rq) + blk_rq_sectors(rq) == bio->bi_iter.bi_sector)
		return ELEVATOR_BACK_MERGE;
	if (blk_rq_pos(rq) - bio_sectors(bio) == bio->bi_iter.bi_sector)
		return ELEVATOR_FRONT_MERGE;
	return ELEVATOR_NO_MERGE;
}

/* Kernel: elv_merge(): the one-hit cache, then the hash (back), then the scheduler (front). */
static enum elv_merge elv_merge(struct request_queue *q, struct request **req, struct bio *bio)
{
	struct elevator_queue *e = q->elevator;

	if (!bio_mergeable(bio))
		return ELEVATOR_NO_MERGE;
	if (q->last_merge && elv_bio_merge_ok(q->last_merge, bio)) {
		enum elv_merge ret = blk_try_merge(q->last_merge, bio);
		if (ret != ELEVATOR_NO_MERGE) {
			*req = q->last_merge;
			return ret;
		}
	}
	struct request *rq = elv_rqhash_find(q, bio->bi_iter.bi_sector);
	if (rq && elv_bio_merge_ok(rq, bio)) {
		*req = rq;
		return ELEVATOR_BACK_MERGE;
	}
	if (e->type->ops.request_merge)
		return e->type->ops.request_merge(q, req, bio);
	return ELEVATOR_NO_MERGE;
}

/* A request that cannot grow is marked so, and leaves the one-hit cache. */
static bool fits_or_nomerge(struct request_queue *q, struct request *rq, unsigned int sectors)
{
	if (blk_rq_sectors(rq) + sectors <= q->max_sectors)
		return true;
	rq->cmd_flags |= REQ_NOMERGE;
	if (q->last_merge == rq)
		q->last_merge = NULL;
	return false;
}

static void elv_merged_request(struct request_queue *q, struct request *rq, enum elv_merge type)
{
	struct elevator_queue *e = q->elevator;

	if (e->type->ops.request_merged)
		e->type->ops.request_merged(q, rq, type);
	if (type == ELEVATOR_BACK_MERGE)
		elv_rqhash_reposition(q, rq);
	q->last_merge = rq;
}

static void elv_merge_requests(struct request_queue *q, struct request *rq, struct request *next)
{
	struct elevator_queue *e = q->elevator;

	if (e->type->ops.requests_merged)
		e->type->ops.requests_merged(q, rq, next);
	elv_rqhash_reposition(q, rq);
	q->last_merge = rq;
}

/* Kernel: attempt_merge(): `next` joins the end of `req`; returns `next` to be freed. */
static struct request *attempt_merge(struct request_queue *q, struct request *req,
				     struct request *next)
{
	if (!rq_mergeable(req) || !rq_mergeable(next))
		return NULL;
	if (req_op(req) != req_op(next) || rq_data_dir(req) != rq_data_dir(next))
		return NULL;
	if (req->bio && next->bio && req->bio->bi_ioprio != next->bio->bi_ioprio)
		return NULL;
	if (req->bio && next->bio && req->bio->bi_blkg != next->bio->bi_blkg)
		return NULL;
	if (blk_rq_pos(req) + blk_rq_sectors(req) != blk_rq_pos(next))
		return NULL;
	if (blk_rq_sectors(req) + blk_rq_sectors(next) > q->max_sectors)
		return NULL;
	if (next->start_time_ns < req->start_time_ns)
		req->start_time_ns = next->start_time_ns;
	req->biotail->bi_next = next->bio;
	req->biotail = next->biotail;
	req->__data_len += blk_rq_bytes(next);
	shim_requests_merged(req, next);
	elv_merge_requests(q, req, next);
	next->bio = NULL;
	return next;
}

static void bio_append(struct request *rq, struct bio *bio)
{
	rq->biotail->bi_next = bio;
	rq->biotail = bio;
	rq->__data_len += bio->bi_iter.bi_size;
}

static void bio_prepend(struct request *rq, struct bio *bio)
{
	bio->bi_next = rq->bio;
	rq->bio = bio;
	rq->__sector = bio->bi_iter.bi_sector;
	rq->__data_len += bio->bi_iter.bi_size;
}

/* Kernel: blk_mq_sched_try_merge(). */
bool blk_mq_sched_try_merge(struct request_queue *q, struct bio *bio, unsigned int nr_segs,
			    struct request **merged_request)
{
	struct request *rq = NULL;
	(void)nr_segs;

	switch (elv_merge(q, &rq, bio)) {
	case ELEVATOR_BACK_MERGE:
		if (!fits_or_nomerge(q, rq, bio_sectors(bio)))
			return false;
		bio_append(rq, bio);
		shim_bio_merged(rq, bio, 'B');
		struct rb_node *n = rb_next(&rq->rb_node);
		*merged_request = n ? attempt_merge(q, rq, rb_entry_rq(n)) : NULL;
		if (!*merged_request)
			elv_merged_request(q, rq, ELEVATOR_BACK_MERGE);
		return true;
	case ELEVATOR_FRONT_MERGE:
		if (!fits_or_nomerge(q, rq, bio_sectors(bio)))
			return false;
		bio_prepend(rq, bio);
		shim_bio_merged(rq, bio, 'F');
		struct rb_node *p = rb_prev(&rq->rb_node);
		*merged_request = p ? attempt_merge(q, rb_entry_rq(p), rq) : NULL;
		if (!*merged_request)
			elv_merged_request(q, rq, ELEVATOR_FRONT_MERGE);
		return true;
	default:
		return false;
	}
}

/* Kernel: elv_attempt_insert_merge(): the new request joins the end of a queued one. */
bool blk_mq_sched_try_insert_merge(struct request_queue *q, struct request *rq,
				   struct list_head *free)
{
	if (q->last_merge && attempt_merge(q, q->last_merge, rq)) {
		list_add(&rq->queuelist, free);
		return true;
	}
	bool ret = false;
	for (;;) {
		struct request *back = elv_rqhash_find(q, blk_rq_pos(rq));
		if (!back || !attempt_merge(q, back, rq))
			break;
		list_add(&rq->queuelist, free);
		ret = true;
		rq = back;
	}
	return ret;
}

void blk_mq_free_request(struct request *rq)
{
	struct request_queue *q = rq->q;

	if (rq->rq_flags & RQF_USE_SCHED) {
		q->elevator->type->ops.finish_request(rq);
		rq->rq_flags &= ~RQF_USE_SCHED;
	}
	shim_request_freed(rq);
}

void blk_mq_free_requests(struct list_head *list)
{
	while (!list_empty(list)) {
		struct request *rq = list_first_entry(list, struct request, queuelist);
		list_del_init(&rq->queuelist);
		blk_mq_free_request(rq);
	}
}

/* Kernel: blk_bio_list_merge() (kyber's bio_merge): the newest eight requests of a software
 * queue's list, newest first; the first that takes the bio ends the walk, and so does one
 * that would but cannot grow (bio_attempt_back/front_merge() failing: BIO_MERGE_FAILED).
 * No request merge follows. */
bool blk_bio_list_merge(struct request_queue *q, struct list_head *list, struct bio *bio,
			unsigned int nr_segs)
{
	(void)nr_segs;
	int checked = 8;
	for (struct list_head *pos = list->prev; pos != list; pos = pos->prev) {
		struct request *rq = list_entry(pos, struct request, queuelist);
		if (!checked--)
			break;
		if (!elv_bio_merge_ok(rq, bio))
			continue;
		switch (blk_try_merge(rq, bio)) {
		case ELEVATOR_BACK_MERGE:
			if (!fits_or_nomerge(q, rq, bio_sectors(bio)))
				return false;
			bio_append(rq, bio);
			shim_bio_merged(rq, bio, 'B');
			return true;
		case ELEVATOR_FRONT_MERGE:
			if (!fits_or_nomerge(q, rq, bio_sectors(bio)))
				return false;
			bio_prepend(rq, bio);
			shim_bio_merged(rq, bio, 'F');
			return true;
		default:
			continue;
		}
	}
	return false;
}
