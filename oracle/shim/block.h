/* iosched kernel oracle: the block layer as a blk-mq scheduler sees it (request, queue,
 * elevator, bio, tags), reduced to what the oracle's driver models. Written for the oracle;
 * names and signatures follow the kernel so its schedulers compile unmodified. */
#ifndef SHIM_BLOCK_H
#define SHIM_BLOCK_H

#include "base.h"
#include "list.h"
#include "jiffies.h"
#include <linux/rbtree.h>

#define READ 0
#define WRITE 1
#define SECTOR_SHIFT 9

typedef u32 blk_opf_t;
typedef unsigned int blk_insert_t;
typedef u32 req_flags_t;

/* Operations and flags: the kernel's bit values where the schedulers test them. */
enum req_op {
	REQ_OP_READ = 0,
	REQ_OP_WRITE = 1,
	REQ_OP_FLUSH = 2,
	REQ_OP_DISCARD = 3,
};
#define REQ_OP_BITS 8
#define REQ_OP_MASK ((1u << REQ_OP_BITS) - 1)
#define REQ_SYNC (1u << 11)
#define REQ_META (1u << 12)
#define REQ_PRIO (1u << 13)
#define REQ_NOMERGE (1u << 14)
#define REQ_IDLE (1u << 15)
#define REQ_FUA (1u << 17)
#define REQ_PREFLUSH (1u << 18)
#define REQ_NOMERGE_FLAGS (REQ_NOMERGE | REQ_PREFLUSH | REQ_FUA)

#define RQF_STARTED (1u << 1)
#define RQF_USE_SCHED (1u << 5)

#define BLK_MQ_INSERT_AT_HEAD (1u << 0)

static inline enum req_op shim_op(blk_opf_t opf) { return (enum req_op)(opf & REQ_OP_MASK); }
static inline bool op_is_write(blk_opf_t op) { return op & 1; }
static inline bool op_is_sync(blk_opf_t op)
{
	return (op & REQ_OP_MASK) == REQ_OP_READ || (op & (REQ_SYNC | REQ_FUA | REQ_PREFLUSH));
}

/* I/O priorities (uapi/linux/ioprio.h values). */
#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_CLASS_MASK 0x07
#define IOPRIO_PRIO_MASK ((1u << IOPRIO_CLASS_SHIFT) - 1)
#define IOPRIO_PRIO_CLASS(p) (((p) >> IOPRIO_CLASS_SHIFT) & IOPRIO_CLASS_MASK)
#define IOPRIO_PRIO_DATA(p) ((p) & IOPRIO_PRIO_MASK)
#define IOPRIO_PRIO_VALUE(c, d) ((u16)(((c) << IOPRIO_CLASS_SHIFT) | (d)))
enum { IOPRIO_CLASS_NONE, IOPRIO_CLASS_RT, IOPRIO_CLASS_BE, IOPRIO_CLASS_IDLE };

struct blkcg_gq;
struct gendisk;

struct bvec_iter {
	sector_t bi_sector;
	unsigned int bi_size;
};

struct bio {
	struct bio *bi_next;
	blk_opf_t bi_opf;
	unsigned short bi_ioprio;
	struct bvec_iter bi_iter;
	/* The oracle's own: the arrival this bio is and its process, for the decision lines. */
	u64 shim_id;
	u32 shim_pid;
	/* The cgroup's blkg (NULL without blkcg): bios of different blkgs never merge. */
	struct blkcg_gq *bi_blkg;
};

static inline enum req_op bio_op(const struct bio *b) { return shim_op(b->bi_opf); }
static inline int bio_data_dir(const struct bio *b) { return op_is_write(b->bi_opf) ? WRITE : READ; }
static inline unsigned int bio_sectors(const struct bio *b) { return b->bi_iter.bi_size >> SECTOR_SHIFT; }
static inline sector_t bio_end_sector(const struct bio *b) { return b->bi_iter.bi_sector + bio_sectors(b); }
static inline unsigned short bio_prio(const struct bio *b) { return b->bi_ioprio; }

struct request_queue;
struct blk_mq_hw_ctx;
struct io_cq;

struct request {
	struct request_queue *q;
	struct blk_mq_hw_ctx *mq_hctx;
	struct blk_mq_ctx *mq_ctx;
	blk_opf_t cmd_flags;
	req_flags_t rq_flags;
	unsigned short ioprio;
	sector_t __sector;
	unsigned int __data_len;
	struct bio *bio, *biotail;
	struct list_head queuelist;
	/* The oracle keeps the elevator hash as one list, newest first (hash_add() adds at the
	 * head of its bucket, and only equal keys compete in a lookup). */
	struct list_head hash;
	bool on_hash;
	struct rb_node rb_node;
	u64 fifo_time;
	u64 start_time_ns;
	u64 io_start_time_ns;
	struct {
		struct io_cq *icq;
		void *priv[2];
	} elv;
	/* The oracle's own: request id (its first bio's arrival), submitting pid, tag held. */
	u64 shim_id;
	u32 shim_pid;
	bool shim_tag;
};

#define rb_entry_rq(node) rb_entry((node), struct request, rb_node)
#define rq_entry_fifo(ptr) list_entry((ptr), struct request, queuelist)

static inline sector_t blk_rq_pos(const struct request *rq) { return rq->__sector; }
static inline unsigned int blk_rq_bytes(const struct request *rq) { return rq->__data_len; }
static inline unsigned int blk_rq_sectors(const struct request *rq) { return rq->__data_len >> SECTOR_SHIFT; }
static inline enum req_op req_op(const struct request *rq) { return shim_op(rq->cmd_flags); }
static inline int rq_data_dir(const struct request *rq) { return op_is_write(rq->cmd_flags) ? WRITE : READ; }
static inline bool rq_is_sync(const struct request *rq) { return op_is_sync(rq->cmd_flags); }
static inline unsigned short req_get_ioprio(const struct request *rq) { return rq->ioprio; }
static inline bool blk_discard_mergable(const struct request *rq) { (void)rq; return false; }
static inline bool rq_mergeable(const struct request *rq)
{
	if (req_op(rq) != REQ_OP_READ && req_op(rq) != REQ_OP_WRITE)
		return false;
	return !(rq->cmd_flags & REQ_NOMERGE_FLAGS);
}

enum elv_merge {
	ELEVATOR_NO_MERGE = 0,
	ELEVATOR_FRONT_MERGE = 1,
	ELEVATOR_BACK_MERGE = 2,
	ELEVATOR_DISCARD_MERGE = 3,
};

#ifdef SHIM_KERNEL_SBITMAP
/* The kernel's own include/linux/sbitmap.h (and lib/sbitmap.c), for kyber's tokens. */
#include "kernel_lib.h"
#include SHIM_KERNEL_SBITMAP
#else
struct sbitmap_queue {
	unsigned int min_shallow_depth;
};
#endif

struct blk_mq_tags {
	struct sbitmap_queue bitmap_tags;
};

#ifndef SHIM_KERNEL_SBITMAP

static inline void sbitmap_queue_min_shallow_depth(struct sbitmap_queue *sbq, unsigned int d)
{
	sbq->min_shallow_depth = d;
}
#endif

struct blk_mq_hw_ctx {
	struct request_queue *queue;
	struct blk_mq_tags *sched_tags;
	void *sched_data;
	/* One software queue (CPU 0) maps to the one hardware queue, of the default type. */
	unsigned short type;
	unsigned int nr_ctx;
	int numa_node;
};

#define HCTX_TYPE_DEFAULT 0
#define HCTX_MAX_TYPES 3
/* The software queue of CPU 0, the oracle's only CPU (shim_mq_ctx, set up by the driver). */
struct blk_mq_ctx {
	unsigned int cpu;
	unsigned short index_hw[HCTX_MAX_TYPES];
	struct blk_mq_hw_ctx *hctxs[HCTX_MAX_TYPES];
};
extern struct blk_mq_ctx shim_mq_ctx;
struct blk_mq_ctx *blk_mq_get_ctx(struct request_queue *q);
struct blk_mq_hw_ctx *blk_mq_map_queue(struct request_queue *q, blk_opf_t opf,
				       struct blk_mq_ctx *ctx);
void blk_mq_run_hw_queue(struct blk_mq_hw_ctx *hctx, bool async);
/* The driver's clock, for decision lines printed from the shim. */
uint64_t shim_now_ns(void);

struct blk_mq_alloc_data {
	struct request_queue *q;
	blk_opf_t cmd_flags;
	unsigned int shallow_depth;
	struct blk_mq_hw_ctx *hctx;
};

struct kobject {
	int unused;
};
static inline void kobject_put(struct kobject *k) { (void)k; }

struct elevator_type;
struct elevator_queue {
	struct elevator_type *type;
	void *elevator_data;
	struct kobject kobj;
	unsigned long flags;
};

#include "elevator_ops.h"

#define QUEUE_FLAG_SQ_SCHED 0
struct request_queue {
	struct elevator_queue *elevator;
	struct request *last_merge;
	struct list_head hash_list;
	unsigned long nr_requests;
	unsigned long queue_flags;
	int node;
	bool rotational;
	/* queue/max_sectors_kb in sectors: the largest request a merge may build. */
	unsigned int max_sectors;
	/* For schedulers with cgroup support (BFQ): the disk, the root blkg, all blkgs. */
	spinlock_t queue_lock;
	struct gendisk *disk;
	struct blkcg_gq *root_blkg;
	struct list_head blkg_list;
};

static inline void blk_queue_flag_set(unsigned int flag, struct request_queue *q)
{
	q->queue_flags |= 1ul << flag;
}
static inline bool blk_queue_nonrot(struct request_queue *q) { return !q->rotational; }
static inline void blk_queue_flag_clear(unsigned int flag, struct request_queue *q)
{
	q->queue_flags &= ~(1ul << flag);
}
/* Statistics are always on: the driver stamps io_start_time_ns at every dispatch. */
#define blk_stat_enable_accounting(q) ((void)(q))
#define blk_stat_disable_accounting(q) ((void)(q))
/* One disk; its number only labels tracepoints. */
#define disk_devt(disk) ((dev_t)0)
int kstrtoull(const char *s, unsigned int base, unsigned long long *res);

/* The block layer's side of merging and freeing (shim/blk.c). */
struct elevator_queue *elevator_alloc(struct request_queue *q, struct elevator_type *e);
int elv_register(struct elevator_type *e);
void elv_unregister(struct elevator_type *e);
void elv_rb_add(struct rb_root *root, struct request *rq);
void elv_rb_del(struct rb_root *root, struct request *rq);
struct request *elv_rb_find(struct rb_root *root, sector_t sector);
struct request *elv_rb_former_request(struct request_queue *q, struct request *rq);
struct request *elv_rb_latter_request(struct request_queue *q, struct request *rq);
void elv_rqhash_add(struct request_queue *q, struct request *rq);
void elv_rqhash_del(struct request_queue *q, struct request *rq);
bool elv_bio_merge_ok(struct request *rq, struct bio *bio);
bool blk_mq_sched_try_merge(struct request_queue *q, struct bio *bio, unsigned int nr_segs,
			    struct request **merged_request);
bool blk_mq_sched_try_insert_merge(struct request_queue *q, struct request *rq,
				   struct list_head *free);
bool blk_bio_list_merge(struct request_queue *q, struct list_head *list, struct bio *bio,
			unsigned int nr_segs);
void blk_mq_free_request(struct request *rq);
void blk_mq_free_requests(struct list_head *list);
static inline void trace_block_rq_insert(struct request *rq) { (void)rq; }

#endif
