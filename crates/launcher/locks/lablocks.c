/*
 * The lock library: preloaded into a real server (LD_PRELOAD) to tell which of its
 * pthread mutexes and rwlocks its threads wait on, for how long, how long they are held,
 * and, on request, to lengthen one lock's critical sections by a known amount (the
 * delay experiment). What it is not: a profiler of anything else, or a lock of its own.
 *
 * Why a preloaded library rather than perf: `perf lock contention -b` sees kernel locks
 * only, and `syscalls:sys_enter_futex` sees a futex word but neither the hold time nor a
 * way to lengthen it. mutrace (the closest tool) is not packaged in Debian 12.
 *
 * Why a table in a shared file (LAB_LOCKS_FILE, mmap'd MAP_SHARED) rather than a report
 * at exit: the lab kills servers with SIGKILL and reads the table at a window's edges,
 * as it reads the threads' schedstat, so a window's figures are the difference of two
 * reads and no signal or thread of ours runs in the server.
 *
 * Cost, kept low on purpose: an uncontended lock is a trylock that succeeds plus one
 * thread-local counter; a contended one is timed (two clock reads) and counted in its
 * lock's slot; every SAMPLE_EVERY-th acquisition of a thread is timed until its unlock
 * (the hold). A lock's slot is made the first time it is sampled or waited on; its class
 * (what the table names) is its object and symbol for a lock in a shared object's data,
 * else the first call site outside the lock wrappers (libc, NSPR, LAB_LOCKS_WRAPPERS) on
 * the stack of that first acquisition: locks made at one place are one class. One wait in
 * WAIT_SAMPLE per thread names its own call site, before it blocks, and counts in its
 * class's first WAIT_SITES sites: who waits, which is not always who took it first.
 *
 * A condition wait releases its mutex and takes it back inside glibc: the library pauses
 * a sampled hold for the wait (else a worker's idle sleep on a queue's condition would
 * count as holding the queue's lock) and resumes it after.
 *
 * What it cannot see: the wait to take the mutex back inside pthread_cond_wait (glibc
 * takes it without calling pthread_mutex_lock), locks a program takes without pthreads
 * (spinlocks, futexes of its own, Berkeley DB's test-and-set mutexes), a statically
 * linked program, and a program that clears LD_PRELOAD.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAGIC 0x736b636f6c62616cULL /* "lablocks" */
#define VERSION 2
#define SLOTS 16384
#define CLASSES 1024
#define TEXT 160
#define SAMPLE_EVERY 64
#define PENDING 4
#define FRAMES 24
#define WAIT_SITES 4
#define WAIT_SAMPLE 8

/* The layout the lab reads (crates/servers/src/locks.rs): keep the two in step. */
struct header {
    uint64_t magic;
    uint32_t version;
    uint32_t sample_every;
    uint32_t slots;
    uint32_t classes;
    int32_t pid;
    uint32_t full; /* locks not counted: the slot table was full */
    uint64_t delayed; /* holds lengthened by the delay experiment */
    int32_t delay_class; /* the class being delayed, -1 none yet */
    uint32_t pad;
};

struct slot {
    uint64_t addr; /* the lock's address; 0 free */
    uint32_t class;
    uint32_t ready; /* 1 once class is set */
    uint64_t waits; /* acquisitions that found it taken */
    uint64_t wait_ns; /* time those waited */
    uint64_t sampled; /* sampled acquisitions (every SAMPLE_EVERY-th of a thread) */
    uint64_t holds; /* sampled holds timed to their release */
    uint64_t hold_ns;
    uint64_t pad;
};

/* Where a class's sampled waits came from (one wait in WAIT_SAMPLE per thread). */
struct wait_site {
    uint64_t key; /* hash of text; 0 free */
    uint32_t ready; /* 1 once the text is written */
    uint32_t pad;
    uint64_t waits;
    uint64_t wait_ns;
    char text[TEXT];
};

struct class {
    uint64_t key; /* hash of name; 0 free */
    uint32_t ready; /* 1 once the texts are written */
    uint32_t kind; /* 1 mutex, 2 rwlock */
    char name[TEXT];
    char site[TEXT];
    uint64_t wait_sampled; /* sampled waits, named among `sites` or not (all full) */
    struct wait_site sites[WAIT_SITES];
};

struct table {
    struct header h;
    struct slot slots[SLOTS];
    struct class classes[CLASSES];
};

static struct table *table;
static int (*real_mutex_lock)(pthread_mutex_t *);
static int (*real_mutex_trylock)(pthread_mutex_t *);
static int (*real_mutex_unlock)(pthread_mutex_t *);
static int (*real_rdlock)(pthread_rwlock_t *);
static int (*real_tryrdlock)(pthread_rwlock_t *);
static int (*real_wrlock)(pthread_rwlock_t *);
static int (*real_trywrlock)(pthread_rwlock_t *);
static int (*real_rwunlock)(pthread_rwlock_t *);
static int (*real_cond_wait)(pthread_cond_t *, pthread_mutex_t *);
static int (*real_cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);

/* The delay experiment: LAB_LOCK_DELAY=NAME=NS[:outside]. */
static char delay_name[TEXT];
static uint64_t delay_ns;
static int delay_outside;
static char wrappers[512];

#define TLS __thread __attribute__((tls_model("initial-exec")))
static TLS int inside; /* this thread is in the library: pass straight through */
static TLS uint32_t tick;
static TLS uint32_t wait_tick;
static TLS struct {
    const void *lock;
    uint64_t at;
    struct slot *slot;
} pending[PENDING];

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static uint64_t hash_bytes(const char *s) {
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h ? h : 1;
}

static uint64_t hash_addr(const void *p) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static void resolve(void) {
    real_mutex_lock = dlsym(RTLD_NEXT, "pthread_mutex_lock");
    real_mutex_trylock = dlsym(RTLD_NEXT, "pthread_mutex_trylock");
    real_mutex_unlock = dlsym(RTLD_NEXT, "pthread_mutex_unlock");
    real_rdlock = dlsym(RTLD_NEXT, "pthread_rwlock_rdlock");
    real_tryrdlock = dlsym(RTLD_NEXT, "pthread_rwlock_tryrdlock");
    real_wrlock = dlsym(RTLD_NEXT, "pthread_rwlock_wrlock");
    real_trywrlock = dlsym(RTLD_NEXT, "pthread_rwlock_trywrlock");
    real_rwunlock = dlsym(RTLD_NEXT, "pthread_rwlock_unlock");
    real_cond_wait = dlsym(RTLD_NEXT, "pthread_cond_wait");
    real_cond_timedwait = dlsym(RTLD_NEXT, "pthread_cond_timedwait");
}

static const char *base_name(const char *path) {
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* A frame inside a lock wrapper rather than the code that wants the lock. */
static int is_wrapper(const Dl_info *info) {
    static const char *objects[] = {"libc.so", "libpthread", "libnspr4", "libplc4", "liblablocks", 0};
    if (!info->dli_fname)
        return 1;
    const char *object = base_name(info->dli_fname);
    for (int i = 0; objects[i]; i++)
        if (strncmp(object, objects[i], strlen(objects[i])) == 0)
            return 1;
    if (!info->dli_sname || !wrappers[0])
        return 0;
    const char *w = wrappers;
    size_t n = strlen(info->dli_sname);
    while (*w) {
        const char *end = strchr(w, ',');
        size_t len = end ? (size_t)(end - w) : strlen(w);
        if (len && len <= n && strncmp(info->dli_sname, w, len) == 0)
            return 1;
        if (!end)
            break;
        w = end + 1;
    }
    return 0;
}

/* "function < its caller" at the first two frames outside the wrappers. */
static void call_site(char *out, size_t size) {
    void *frames[FRAMES];
    int n = backtrace(frames, FRAMES);
    size_t used = 0;
    int named = 0;
    out[0] = 0;
    for (int i = 0; i < n && named < 2; i++) {
        Dl_info info;
        if (!dladdr(frames[i], &info) || is_wrapper(&info))
            continue;
        char one[TEXT];
        if (info.dli_sname)
            snprintf(one, sizeof one, "%s", info.dli_sname);
        else
            snprintf(one, sizeof one, "%s+0x%lx", base_name(info.dli_fname),
                     (unsigned long)((char *)frames[i] - (char *)info.dli_fbase));
        int w = snprintf(out + used, size - used, "%s%s", named ? " < " : "", one);
        if (w < 0 || (size_t)w >= size - used)
            break;
        used += (size_t)w;
        named++;
    }
    if (!named)
        snprintf(out, size, "unknown");
}

static uint32_t class_of(const void *lock, uint32_t kind) {
    char name[TEXT], site[TEXT];
    Dl_info info;
    call_site(site, sizeof site);
    /* A lock in a shared object's data keeps one name from run to run; one on the heap
     * is named by where it was first taken. */
    if (dladdr(lock, &info) && info.dli_fname) {
        if (info.dli_sname && info.dli_saddr == lock)
            snprintf(name, sizeof name, "%s!%s", base_name(info.dli_fname), info.dli_sname);
        else
            snprintf(name, sizeof name, "%s+0x%lx", base_name(info.dli_fname),
                     (unsigned long)((const char *)lock - (const char *)info.dli_fbase));
    } else {
        snprintf(name, sizeof name, "%s in %.148s", kind == 2 ? "rwlock" : "mutex", site);
    }
    uint64_t key = hash_bytes(name);
    for (uint32_t i = 0; i < CLASSES; i++) {
        struct class *c = &table->classes[(key + i) % CLASSES];
        uint64_t seen = __atomic_load_n(&c->key, __ATOMIC_ACQUIRE);
        if (seen == 0) {
            uint64_t expected = 0;
            if (__atomic_compare_exchange_n(&c->key, &expected, key, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                memcpy(c->name, name, TEXT);
                memcpy(c->site, site, TEXT);
                c->kind = kind;
                __atomic_store_n(&c->ready, 1, __ATOMIC_RELEASE);
                uint32_t index = (uint32_t)((key + i) % CLASSES);
                if (delay_name[0] && strcmp(name, delay_name) == 0)
                    __atomic_store_n(&table->h.delay_class, (int32_t)index, __ATOMIC_RELEASE);
                return index;
            }
            seen = expected;
        }
        if (seen == key)
            return (uint32_t)((key + i) % CLASSES);
    }
    return CLASSES; /* full: counted nowhere */
}

/* The lock's slot, made when `make`; NULL when absent or the table is full. */
static struct slot *slot_of(const void *lock, uint32_t kind, int make) {
    uint64_t addr = (uint64_t)(uintptr_t)lock;
    uint64_t h = hash_addr(lock);
    for (uint32_t i = 0; i < 64; i++) {
        struct slot *s = &table->slots[(h + i) % SLOTS];
        uint64_t seen = __atomic_load_n(&s->addr, __ATOMIC_ACQUIRE);
        if (seen == addr)
            return __atomic_load_n(&s->ready, __ATOMIC_ACQUIRE) ? s : NULL;
        if (seen == 0) {
            if (!make)
                return NULL;
            uint64_t expected = 0;
            if (__atomic_compare_exchange_n(&s->addr, &expected, addr, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                uint32_t c = class_of(lock, kind);
                if (c >= CLASSES)
                    return NULL;
                s->class = c;
                __atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
                return s;
            }
            if (expected == addr)
                return NULL; /* another thread is making it */
        }
    }
    __atomic_fetch_add(&table->h.full, 1, __ATOMIC_RELAXED);
    return NULL;
}

static void spin(uint64_t ns) {
    uint64_t until = now_ns() + ns;
    while (now_ns() < until) {
    }
}

/* Before the real unlock: spends the delay inside (so a sampled hold includes it) and
 * ends a sampled hold; returns the slot when the delay is to be spent outside. */
static struct slot *releasing(const void *lock) {
    int sample = -1;
    for (int i = 0; i < PENDING; i++) {
        if (pending[i].lock == lock) {
            sample = i;
            break;
        }
    }
    struct slot *delayed = NULL;
    int32_t target = __atomic_load_n(&table->h.delay_class, __ATOMIC_RELAXED);
    if (target >= 0) {
        struct slot *s = sample >= 0 ? pending[sample].slot : slot_of(lock, 0, 0);
        if (s && s->class == (uint32_t)target) {
            __atomic_fetch_add(&table->h.delayed, 1, __ATOMIC_RELAXED);
            if (delay_outside)
                delayed = s;
            else
                spin(delay_ns);
        }
    }
    if (sample >= 0) {
        struct slot *s = pending[sample].slot;
        __atomic_fetch_add(&s->holds, 1, __ATOMIC_RELAXED);
        __atomic_fetch_add(&s->hold_ns, now_ns() - pending[sample].at, __ATOMIC_RELAXED);
        pending[sample].lock = NULL;
    }
    return delayed;
}

/* Counts a sampled wait of `waited` ns at `site` (named before the wait) in class `c`. */
static void wait_at(uint32_t c, const char *site, uint64_t waited) {
    if (c >= CLASSES)
        return;
    struct class *k = &table->classes[c];
    __atomic_fetch_add(&k->wait_sampled, 1, __ATOMIC_RELAXED);
    uint64_t key = hash_bytes(site);
    for (int i = 0; i < WAIT_SITES; i++) {
        struct wait_site *w = &k->sites[i];
        uint64_t seen = __atomic_load_n(&w->key, __ATOMIC_ACQUIRE);
        if (seen == 0) {
            uint64_t expected = 0;
            if (__atomic_compare_exchange_n(&w->key, &expected, key, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                memcpy(w->text, site, TEXT);
                __atomic_store_n(&w->ready, 1, __ATOMIC_RELEASE);
                seen = key;
            } else {
                seen = expected;
            }
        }
        if (seen == key) {
            __atomic_fetch_add(&w->waits, 1, __ATOMIC_RELAXED);
            __atomic_fetch_add(&w->wait_ns, waited, __ATOMIC_RELAXED);
            return;
        }
    }
}

/* After a lock was taken: `waited_from` is 0 when it was free; `site`, where a sampled
 * wait came from (named before it blocked, so never while holding), or NULL. */
static void acquired(const void *lock, uint32_t kind, uint64_t waited_from, const char *site) {
    struct slot *s = NULL;
    uint64_t at = now_ns();
    if (waited_from) {
        s = slot_of(lock, kind, 1);
        if (s) {
            __atomic_fetch_add(&s->waits, 1, __ATOMIC_RELAXED);
            __atomic_fetch_add(&s->wait_ns, at - waited_from, __ATOMIC_RELAXED);
            if (site)
                wait_at(s->class, site, at - waited_from);
        }
    }
    if (++tick % SAMPLE_EVERY)
        return;
    if (!s)
        s = slot_of(lock, kind, 1);
    if (!s)
        return;
    __atomic_fetch_add(&s->sampled, 1, __ATOMIC_RELAXED);
    /* A free place, else the oldest guess: a lock released by another thread (an
     * rwlock's reader may be) never frees its place here. */
    int place = (int)((tick / SAMPLE_EVERY) % PENDING);
    for (int i = 0; i < PENDING; i++) {
        if (!pending[i].lock) {
            place = i;
            break;
        }
    }
    pending[place].lock = lock;
    pending[place].at = now_ns();
    pending[place].slot = s;
}

/* Whether this call is counted: the table is there and we are not inside ourselves. */
static int counting(void) {
    return table && !inside;
}

#define LOCK(name, type, real, try, kind)                                                  \
    int name(type *lock) {                                                                 \
        if (!real)                                                                         \
            resolve();                                                                     \
        if (!counting())                                                                   \
            return real(lock);                                                             \
        int r = try(lock);                                                                 \
        if (r != EBUSY) {                                                                  \
            if (r == 0 && (tick + 1) % SAMPLE_EVERY == 0) {                                \
                inside = 1;                                                                \
                acquired(lock, kind, 0, NULL);                                             \
                inside = 0;                                                                \
            } else if (r == 0) {                                                           \
                tick++;                                                                    \
            }                                                                              \
            return r;                                                                      \
        }                                                                                  \
        /* Named before blocking: the thread waits anyway, and holds nothing of this. */   \
        char site[TEXT];                                                                   \
        int named = ++wait_tick % WAIT_SAMPLE == 0;                                        \
        if (named) {                                                                       \
            inside = 1;                                                                    \
            call_site(site, sizeof site);                                                  \
            inside = 0;                                                                    \
        }                                                                                  \
        uint64_t from = now_ns();                                                          \
        r = real(lock);                                                                    \
        if (r == 0) {                                                                      \
            inside = 1;                                                                    \
            acquired(lock, kind, from, named ? site : NULL);                               \
            inside = 0;                                                                    \
        }                                                                                  \
        return r;                                                                          \
    }

LOCK(pthread_mutex_lock, pthread_mutex_t, real_mutex_lock, real_mutex_trylock, 1)
LOCK(pthread_rwlock_rdlock, pthread_rwlock_t, real_rdlock, real_tryrdlock, 2)
LOCK(pthread_rwlock_wrlock, pthread_rwlock_t, real_wrlock, real_trywrlock, 2)

#define UNLOCK(name, type, real)                                                           \
    int name(type *lock) {                                                                 \
        if (!real)                                                                         \
            resolve();                                                                     \
        if (!counting())                                                                   \
            return real(lock);                                                             \
        inside = 1;                                                                        \
        struct slot *delayed = releasing(lock);                                            \
        inside = 0;                                                                        \
        int r = real(lock);                                                                \
        if (delayed)                                                                       \
            spin(delay_ns);                                                                \
        return r;                                                                          \
    }

UNLOCK(pthread_mutex_unlock, pthread_mutex_t, real_mutex_unlock)
UNLOCK(pthread_rwlock_unlock, pthread_rwlock_t, real_rwunlock)

/* A condition wait: the part of a sampled hold before it is added now, the part after it
 * is timed from its return, and the two count as one hold at the unlock. */
static int pause_hold(const void *lock) {
    for (int i = 0; i < PENDING; i++) {
        if (pending[i].lock == lock) {
            __atomic_fetch_add(&pending[i].slot->hold_ns, now_ns() - pending[i].at, __ATOMIC_RELAXED);
            return i;
        }
    }
    return -1;
}

static void resume_hold(const void *lock, int place) {
    if (place >= 0 && pending[place].lock == lock)
        pending[place].at = now_ns();
}

int pthread_cond_wait(pthread_cond_t *cond, pthread_mutex_t *lock) {
    if (!real_cond_wait)
        resolve();
    if (!counting())
        return real_cond_wait(cond, lock);
    int place = pause_hold(lock);
    int r = real_cond_wait(cond, lock);
    resume_hold(lock, place);
    return r;
}

int pthread_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *lock, const struct timespec *until) {
    if (!real_cond_timedwait)
        resolve();
    if (!counting())
        return real_cond_timedwait(cond, lock, until);
    int place = pause_hold(lock);
    int r = real_cond_timedwait(cond, lock, until);
    resume_hold(lock, place);
    return r;
}

static void read_delay(void) {
    const char *spec = getenv("LAB_LOCK_DELAY");
    if (!spec || !*spec)
        return;
    /* NAME=NS[:outside]: the name may hold '=' and ':' itself, so split from the end. */
    const char *eq = strrchr(spec, '=');
    if (!eq || (size_t)(eq - spec) >= TEXT)
        return;
    memcpy(delay_name, spec, (size_t)(eq - spec));
    delay_name[eq - spec] = 0;
    char *end;
    delay_ns = strtoull(eq + 1, &end, 10);
    delay_outside = strcmp(end, ":outside") == 0;
}

__attribute__((constructor)) static void start(void) {
    inside = 1;
    resolve();
    const char *path = getenv("LAB_LOCKS_FILE");
    const char *w = getenv("LAB_LOCKS_WRAPPERS");
    if (w)
        snprintf(wrappers, sizeof wrappers, "%s", w);
    read_delay();
    /* The unwinder loads libgcc_s on its first call: do it here, not under a lock. */
    void *warm[2];
    backtrace(warm, 2);
    if (path && *path) {
        /* The first process of the server's command (a shell that execs the server has
         * its pid) makes the table; a program it later starts joins it. */
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0) {
            int fresh = st.st_size != (off_t)sizeof(struct table);
            if (!fresh || ftruncate(fd, sizeof(struct table)) == 0) {
                void *m = mmap(NULL, sizeof(struct table), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                if (m != MAP_FAILED) {
                    struct table *t = m;
                    if (__atomic_load_n(&t->h.magic, __ATOMIC_ACQUIRE) != MAGIC) {
                        t->h.version = VERSION;
                        t->h.sample_every = SAMPLE_EVERY;
                        t->h.slots = SLOTS;
                        t->h.classes = CLASSES;
                        t->h.pid = (int32_t)getpid();
                        t->h.delay_class = -1;
                        __atomic_store_n(&t->h.magic, MAGIC, __ATOMIC_RELEASE);
                    }
                    table = t;
                }
            }
        }
        if (fd >= 0)
            close(fd);
    }
    inside = 0;
}
