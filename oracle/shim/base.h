/* iosched kernel oracle: the C basics kernel sources expect (types, compiler words, bits).
 * The project's own user-space stand-ins; no kernel code. */
#ifndef SHIM_BASE_H
#define SHIM_BASE_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;
typedef u64 sector_t;
typedef unsigned int gfp_t;

#define __bitwise
#define __force
#define __init
#define __exit
#define __read_mostly
#undef __always_inline
#define __always_inline inline __attribute__((always_inline))
#define __must_check
#define __acquires(x)
#define __releases(x)
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define READ_ONCE(x) (*(volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define barrier() __asm__ __volatile__("" ::: "memory")
#define __stringify_1(x) #x
#define __stringify(x) __stringify_1(x)
#define EXPORT_SYMBOL(sym) extern int shim_export_unused_
#define EXPORT_SYMBOL_GPL(sym) extern int shim_export_unused_
#define GFP_KERNEL 0u
#define GFP_NOWAIT 0u
#define BITS_PER_LONG 64

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))
#define min_t(t, a, b) ((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define max_t(t, a, b) ((t)(a) > (t)(b) ? (t)(a) : (t)(b))

/* A kernel warning is a bug in the scheduler or in the shim's use of it: say so and stop,
 * so that a scenario never passes on a path the kernel would have complained about. */
void shim_fatal(const char *what, const char *file, int line);
#define BUG_ON(c) do { if (c) shim_fatal("BUG_ON(" #c ")", __FILE__, __LINE__); } while (0)
#define WARN_ON_ONCE(c) ({ int __w = !!(c); if (__w) shim_fatal("WARN_ON_ONCE(" #c ")", __FILE__, __LINE__); __w; })
#define WARN_ON(c) WARN_ON_ONCE(c)
#define WARN_ONCE(c, ...) ({ if (0) fprintf(stderr, __VA_ARGS__); WARN_ON_ONCE(c); })

/* One CPU, one thread: locks and RCU are no-ops. */
typedef struct { int unused; } spinlock_t;
#define spin_lock_init(l) ((void)(l))
#define spin_lock(l) ((void)(l))
#define spin_unlock(l) ((void)(l))
#define spin_lock_irq(l) ((void)(l))
#define spin_unlock_irq(l) ((void)(l))
#define spin_lock_irqsave(l, f) ((void)(l), (f) = 0)
#define spin_unlock_irqrestore(l, f) ((void)(l), (void)(f))
#define lockdep_assert_held(l) ((void)(l))
#define rcu_assign_pointer(p, v) ((p) = (v))
#define RCU_INIT_POINTER(p, v) ((p) = (v))
#define rcu_dereference_raw(p) (p)
#define rcu_read_lock() ((void)0)
#define rcu_read_unlock() ((void)0)

typedef struct { int counter; } atomic_t;
#define atomic_read(a) ((a)->counter)
#define atomic_set(a, v) ((a)->counter = (v))
#define atomic_inc(a) ((void)((a)->counter++))
#define atomic_dec(a) ((void)((a)->counter--))

static inline void *kzalloc_node(size_t n, gfp_t gfp, int node)
{
	(void)gfp;
	(void)node;
	void *p = calloc(1, n);
	if (!p)
		shim_fatal("out of memory", __FILE__, __LINE__);
	return p;
}
#define kzalloc(n, gfp) kzalloc_node(n, gfp, 0)
#define kmalloc(n, gfp) kzalloc_node(n, gfp, 0)
#define kfree(p) free((void *)(p))

int kstrtoint(const char *s, unsigned int base, int *res);
int sysfs_emit(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define THIS_MODULE NULL
#define MODULE_ALIAS(x) extern int shim_module_info_unused_
#define MODULE_AUTHOR(x) extern int shim_module_info_unused_
#define MODULE_LICENSE(x) extern int shim_module_info_unused_
#define MODULE_DESCRIPTION(x) extern int shim_module_info_unused_
/* The scheduler's module_init becomes the one entry point the driver calls. */
#define module_init(fn) int shim_module_init(void) { return fn(); }
#define module_exit(fn) void shim_module_exit(void) { fn(); }
int shim_module_init(void);

#endif
