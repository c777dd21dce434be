/*
 * acl_double.c: a small C test double of the ACL runtime ABI, for acl-conformance.
 *
 * It implements the calls the conformance agent makes, legally, with the return
 * codes and the order of checks of the open-source CANN runtime (as recorded in
 * cann-runtime-facts.md, sections 2 to 5 and 7), so that the agent and the whole
 * suite run on a machine without an Ascend device.  It is written for this project;
 * nothing in it is taken from CANN.
 *
 * Model of a device: every registered variable (aclConformanceRegisterVariable) is
 * laid out in one "device image", packed in registration order between two guard
 * bands, so that a stray write lands in a neighbour and shows.  Each device keeps
 * its own image; a device's first context starts it from the registered initial
 * bytes, as a device loading its binary would.  The initial image is kept in a memfd
 * and each device's image is a private mapping of it: loading copies nothing, and a
 * page is copied when first written (a process may live for one test example only).
 *
 * Contexts: aclrtSetDevice takes a reference on a device (the first creates its
 * context and default stream, shared by every host thread); the current device is
 * per host thread; aclrtResetDevice drops a reference and the last one ends the
 * context: its streams drain and die, its events die, and the next context starts
 * the image again from the initial bytes.
 *
 * Streams: each stream is a FIFO of tasks run by a worker thread of its own
 * (started with the first task).  A copy from page-locked memory (aclrtMallocHost,
 * or a range registered with aclrtHostRegisterV2: decided by the source's start
 * pointer, as in CANN) is a task that reads the source when it runs; a copy from
 * pageable memory drains the stream, copies and returns.  Host functions
 * (aclrtLaunchHostFunc) run on the worker and hold the stream while they run.
 *
 * Handles: streams and events are objects whose first word is a magic number; a
 * handle is validated by reading that word (as CANN does), so a destroyed handle or
 * readable memory with a wrong magic is ACL_ERROR_RT_INVALID_HANDLE (107017).
 * Objects are never freed while the process lives, so a stale handle stays
 * readable.
 *
 * Compile-time switches (for the suite's own tests):
 *   planted bugs   ACL_DOUBLE_BUG_BOUND_OFF_BY_ONE   one byte past the end is accepted
 *                  ACL_DOUBLE_BUG_KIND_UNCHECKED     the To-symbol copies take any kind
 *                  ACL_DOUBLE_BUG_PAGEABLE_LATE      a pageable copy is deferred to the
 *                                                    stream and reads its source late
 *                  ACL_DOUBLE_BUG_LARGE_PAGEABLE_DROPS  a pageable aclrtMemcpyToSymbolAsync
 *                                                    of more than 8 MiB is copied 4 KiB page
 *                                                    by page, the last byte of each page left
 *                                                    out (the variable keeps its old byte)
 *   faults         ACL_DOUBLE_FAULT_SEGV_ON=<fn>     the exported function <fn> segfaults
 *                  ACL_DOUBLE_FAULT_HANG_SYNC        aclrtSynchronizeStream never returns
 *                  ACL_DOUBLE_FAULT_STREAM_LIMIT=<n> after <n> streams created in the process
 *                                                    (destroyed or not, on any device),
 *                                                    aclrtCreateStream fails with 207008: state
 *                                                    that outlives a test
 *   releases       ACL_DOUBLE_NO_SYMBOL_APIS         the six symbol APIs are not exported, as
 *                                                    in CANN before 9.1.0
 *   device-like    legal behaviours of a real asynchronous device (an ACL implementation
 *                  on a GPU), each slower or stricter than the default and within the spec:
 *                  ACL_DOUBLE_SETUP_MS=<n>           creating a device's context (an
 *                                                    aclrtSetDevice that finds none live: the
 *                                                    first of the process, the first after the
 *                                                    last aclrtResetDevice) sleeps <n> ms;
 *                                                    one creation at a time in the process
 *                  ACL_DOUBLE_FREES_WAIT             aclrtFreeHost and aclrtHostUnregister
 *                                                    first wait until every stream of every
 *                                                    device with a live context has run the
 *                                                    tasks issued before the call (host
 *                                                    functions included)
 *                  ACL_DOUBLE_HOST_FUNCS_SERIAL      the host functions of all streams of one
 *                                                    device run one at a time (a per-device
 *                                                    lock held while one runs): a host
 *                                                    function that blocks holds those of
 *                                                    every other stream of its device
 *                  ACL_DOUBLE_PAGEABLE_STAGED        aclrtMemcpyToSymbolAsync from pageable
 *                                                    memory copies the source into a staging
 *                                                    buffer at the call, issues a copy from it
 *                                                    on the stream and waits for that copy:
 *                                                    the device gets the source as at the call
 * Environment: ACL_DOUBLE_DEVICES (device count, default 2, at most 64),
 * ASCEND_RT_VISIBLE_DEVICES (which of them the process sees, as on CANN).
 */
#define _GNU_SOURCE
#include <acl/acl.h>
#include <acl_conformance/register.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define ACL_DOUBLE_VERSION "0.1.0"

#define STREAM_MAGIC 0x5354524Du /* the value CANN's handle guard compares */
#define EVENT_MAGIC 0x45564E54u
#define MAX_DEVICES 64
#define MAX_STREAMS 1984 /* per device, the default stream included */
#define GUARD 64
#define NAME_LIMIT 4096
#define HOST_REGISTER_ALIGN 4096u
#define MALLOC_HOST_ALIGN 64u
#define REGISTER_FLAGS (ACL_HOST_REG_MAPPED | ACL_HOST_REG_IOMEMORY | ACL_HOST_REG_READONLY | ACL_HOST_REG_PINNED)

#define STR2(x) #x
#define STR(x) STR2(x)

/* ---------------------------------------------------------------- faults -- */

static void fault_point(const char *function)
{
#ifdef ACL_DOUBLE_FAULT_SEGV_ON
    if (strcmp(function, STR(ACL_DOUBLE_FAULT_SEGV_ON)) == 0) {
        volatile uintptr_t unmapped = 16;
        *(volatile int *)unmapped = 1; /* SIGSEGV, as a wild pointer in a runtime would */
    }
#else
    (void)function;
#endif
}

/* An argument check: ACL_ERROR_INVALID_PARAM (100000) if cond holds, as CANN's
 * ACL_REQUIRES_* checks return it. */
#define INVALID_PARAM_IF(cond)                                                                     \
    do {                                                                                           \
        if (cond) {                                                                                \
            return ACL_ERROR_INVALID_PARAM;                                                        \
        }                                                                                          \
    } while (0)

/* Return the code of expr unless it is ACL_SUCCESS, as CANN's ACL_REQUIRES_OK does. */
#define RETURN_IF_ERROR(expr)                                                                      \
    do {                                                                                           \
        aclError code_ = (expr);                                                                   \
        if (code_ != ACL_SUCCESS) {                                                                \
            return code_;                                                                          \
        }                                                                                          \
    } while (0)

/* Every exported call starts here: its fault point, then the one-time set-up. */
#define ENTER()                                                                                    \
    do {                                                                                           \
        fault_point(__func__);                                                                     \
        ensure_init();                                                                             \
    } while (0)

/* ----------------------------------------------------------------- types -- */

enum task_kind { TASK_COPY, TASK_RECORD, TASK_WAIT, TASK_FUNC };

struct stream;

typedef struct task {
    struct task *next;
    uint64_t seq;
    enum task_kind kind;
    void *dst;
    const void *src;
    size_t count;
    struct stream *wait_on; /* TASK_WAIT: the stream recorded on, and its record task */
    uint64_t wait_seq;
    aclrtHostFunc fn;
    void *arg;
    void *staging; /* TASK_COPY from a staging buffer: freed with the task */
} task_t;

typedef struct stream {
    uint32_t magic; /* first word: what a handle check reads */
    int device;
    unsigned gen; /* the context generation it belongs to */
    int is_default;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    task_t *head, *tail;
    uint64_t issued, completed;
    int closing; /* no new task accepted (destroy or reset under way) */
    int stopped; /* the worker ends once the queue is empty */
    int started;
    pthread_t thread;
    struct stream *ctx_next;
    struct stream *all_next;
} stream_t;

typedef struct event {
    uint32_t magic;
    int device;
    unsigned gen;
    pthread_mutex_t mu;
    stream_t *rec_stream; /* the latest record, or NULL */
    uint64_t rec_seq;
    struct event *ctx_next;
    struct event *all_next;
} event_t;

typedef struct device {
    int refcount;
    unsigned gen;
    int live;
    uint8_t *image; /* mapped with the first context, mapped again over itself by later ones */
    stream_t *default_stream;
    stream_t *streams; /* created streams of the live context */
    int nstreams;
    event_t *events;
} device_t;

typedef struct symbol {
    const void *host;
    char *name;
    size_t size;
    size_t offset; /* of byte 0 in the device image */
} symbol_t;

typedef struct range {
    uintptr_t start, end;
} range_t;

typedef struct ranges {
    range_t *v;
    size_t n, cap;
} ranges_t;

/* ---------------------------------------------------------------- state --- */

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER; /* everything below but streams' queues */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_ndev;
static int g_physical[MAX_DEVICES];
static int g_nphysical;
static device_t g_dev[MAX_DEVICES];
static stream_t *g_all_streams; /* every stream ever made: kept so stale handles stay readable */
static event_t *g_all_events;
static symbol_t *g_syms;
static size_t g_nsyms, g_capsyms;
static int g_initial_fd = -1; /* the initial device image (a memfd): guard, variables, guard */
static size_t g_image_size;
static int g_layout_frozen;
static ranges_t g_host_allocs; /* aclrtMallocHost memory */
static ranges_t g_registered;  /* aclrtHostRegister[V2] ranges */
static int g_init_count;
static char *g_init_config;
static int g_init_has_config;
static uint64_t g_host_limit = (uint64_t)1 << 32;

#ifdef ACL_DOUBLE_SETUP_MS
static pthread_mutex_t g_setup_mu = PTHREAD_MUTEX_INITIALIZER; /* one context creation at a time */
#endif
#ifdef ACL_DOUBLE_HOST_FUNCS_SERIAL
static pthread_mutex_t g_func_mu[MAX_DEVICES]; /* held while a host function of the device runs */
#endif

static __thread int tl_dev = -1;
static __thread unsigned tl_gen;

static void guard_fill(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        p[i] = (uint8_t)((i * 7 + 0xA5) & 0xFF);
    }
}

/* pwrite all of it: 0, or -1. */
static int write_at(int fd, const void *data, size_t n, size_t offset)
{
    const uint8_t *p = data;
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, (off_t)offset);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return -1;
        }
        p += w;
        n -= (size_t)w;
        offset += (size_t)w;
    }
    return 0;
}

static void init_once(void)
{
#ifdef ACL_DOUBLE_HOST_FUNCS_SERIAL
    for (int i = 0; i < MAX_DEVICES; i++) {
        pthread_mutex_init(&g_func_mu[i], NULL);
    }
#endif
    int physical = 2;
    const char *env = getenv("ACL_DOUBLE_DEVICES");
    if (env != NULL && *env != '\0') {
        long v = strtol(env, NULL, 10);
        physical = v < 0 ? 0 : (v > MAX_DEVICES ? MAX_DEVICES : (int)v);
    }
    g_nphysical = physical;
    const char *visible = getenv("ASCEND_RT_VISIBLE_DEVICES");
    g_ndev = 0;
    if (visible != NULL && *visible != '\0') {
        const char *p = visible;
        while (*p != '\0' && g_ndev < MAX_DEVICES) {
            char *end = NULL;
            long id = strtol(p, &end, 10);
            if (end == p) {
                break;
            }
            int seen = 0;
            for (int i = 0; i < g_ndev; i++) {
                seen |= g_physical[i] == id;
            }
            if (id >= 0 && id < physical && !seen) {
                g_physical[g_ndev++] = (int)id;
            }
            p = end;
            while (*p == ',' || *p == ' ') {
                p++;
            }
        }
    } else {
        for (int i = 0; i < physical; i++) {
            g_physical[g_ndev++] = i;
        }
    }
    const char *limit = getenv("ACL_DOUBLE_HOST_LIMIT");
    if (limit != NULL && *limit != '\0') {
        g_host_limit = strtoull(limit, NULL, 10);
    }
    g_image_size = 2 * GUARD;
    uint8_t guards[2 * GUARD];
    guard_fill(guards, sizeof guards);
    int fd = memfd_create("acl-double-initial-image", MFD_CLOEXEC);
    if (fd >= 0 && write_at(fd, guards, sizeof guards, 0) == 0) {
        g_initial_fd = fd;
    } else if (fd >= 0) {
        close(fd);
    }
}

static void ensure_init(void)
{
    pthread_once(&g_once, init_once);
}

/* ------------------------------------------------------------ host ranges -- */

static int ranges_add(ranges_t *r, uintptr_t start, uintptr_t end)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        range_t *v = realloc(r->v, cap * sizeof *v);
        if (v == NULL) {
            return -1;
        }
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n].start = start;
    r->v[r->n].end = end;
    r->n++;
    return 0;
}

static int ranges_remove_start(ranges_t *r, uintptr_t start)
{
    for (size_t i = 0; i < r->n; i++) {
        if (r->v[i].start == start) {
            r->v[i] = r->v[--r->n];
            return 1;
        }
    }
    return 0;
}

/* ranges_remove_start under g_mu. */
static int take_range(ranges_t *r, const void *start)
{
    pthread_mutex_lock(&g_mu);
    int found = ranges_remove_start(r, (uintptr_t)start);
    pthread_mutex_unlock(&g_mu);
    return found;
}

static int ranges_overlap(const ranges_t *r, uintptr_t start, uintptr_t end)
{
    for (size_t i = 0; i < r->n; i++) {
        if (r->v[i].start < end && start < r->v[i].end) {
            return 1;
        }
    }
    return 0;
}

/* --------------------------------------------------------------- contexts -- */

/* This thread's current context: 1 and (device, generation), or 0.  Caller holds g_mu. */
static int current_locked(int *device, unsigned *gen)
{
    if (tl_dev < 0 || tl_dev >= g_ndev) {
        return 0;
    }
    device_t *d = &g_dev[tl_dev];
    if (!d->live || d->gen != tl_gen) {
        return 0;
    }
    *device = tl_dev;
    *gen = tl_gen;
    return 1;
}

static int current(int *device, unsigned *gen)
{
    pthread_mutex_lock(&g_mu);
    int ok = current_locked(device, gen);
    pthread_mutex_unlock(&g_mu);
    return ok;
}

/* Take g_mu and this thread's current context: ACL_SUCCESS with g_mu held, or 107002
 * (no current context) with g_mu released. */
static aclError lock_current(int *device, unsigned *gen)
{
    pthread_mutex_lock(&g_mu);
    if (!current_locked(device, gen)) {
        pthread_mutex_unlock(&g_mu);
        return ACL_ERROR_RT_CONTEXT_NULL;
    }
    return ACL_SUCCESS;
}

/* The checks a create call (stream, event) makes first: its out-pointer (100000), then
 * lock_current, which holds g_mu on success. */
static aclError begin_create(const void *out, int *device, unsigned *gen)
{
    INVALID_PARAM_IF(out == NULL);
    return lock_current(device, gen);
}

/* ---------------------------------------------------------------- streams -- */

static stream_t *stream_new(int device, unsigned gen, int is_default)
{
    stream_t *s = calloc(1, sizeof *s);
    if (s == NULL) {
        return NULL;
    }
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, &attr);
    pthread_condattr_destroy(&attr);
    s->device = device;
    s->gen = gen;
    s->is_default = is_default;
    __atomic_store_n(&s->magic, STREAM_MAGIC, __ATOMIC_RELEASE);
    s->all_next = g_all_streams; /* caller holds g_mu */
    g_all_streams = s;
    return s;
}

static int wait_seq(stream_t *s, uint64_t seq, int32_t timeout_ms)
{
    struct timespec deadline;
    if (timeout_ms >= 0) {
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec += 1;
            deadline.tv_nsec -= 1000000000L;
        }
    }
    int timed_out = 0;
    pthread_mutex_lock(&s->mu);
    while (s->completed < seq) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&s->cv, &s->mu);
        } else if (pthread_cond_timedwait(&s->cv, &s->mu, &deadline) == ETIMEDOUT) {
            timed_out = s->completed < seq;
            break;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return timed_out;
}

static uint64_t stream_issued(stream_t *s)
{
    pthread_mutex_lock(&s->mu);
    uint64_t n = s->issued;
    pthread_mutex_unlock(&s->mu);
    return n;
}

/* Free a task and the staging buffer it owns. */
static void task_free(task_t *t)
{
    free(t->staging);
    free(t);
}

static void run_task(const stream_t *s, task_t *t)
{
    switch (t->kind) {
    case TASK_COPY:
        memcpy(t->dst, t->src, t->count);
        break;
    case TASK_RECORD:
        break; /* that it has run is the event */
    case TASK_WAIT:
        wait_seq(t->wait_on, t->wait_seq, -1);
        break;
    case TASK_FUNC:
#ifdef ACL_DOUBLE_HOST_FUNCS_SERIAL
        /* Host functions of one device run one at a time, as on a device whose host
         * callbacks share one thread: one that blocks holds every other stream's. */
        pthread_mutex_lock(&g_func_mu[s->device]);
        t->fn(t->arg);
        pthread_mutex_unlock(&g_func_mu[s->device]);
#else
        (void)s;
        t->fn(t->arg);
#endif
        break;
    }
}

static void *stream_worker(void *arg)
{
    stream_t *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->head == NULL && !s->stopped) {
            pthread_cond_wait(&s->cv, &s->mu);
        }
        task_t *t = s->head;
        if (t == NULL) {
            break;
        }
        s->head = t->next;
        if (s->head == NULL) {
            s->tail = NULL;
        }
        pthread_mutex_unlock(&s->mu);
        run_task(s, t);
        pthread_mutex_lock(&s->mu);
        s->completed = t->seq;
        pthread_cond_broadcast(&s->cv);
        task_free(t);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Issue a task: 0 and its sequence number in *seq, or an error (the task is freed). */
static aclError stream_enqueue(stream_t *s, task_t *t, uint64_t *seq)
{
    pthread_mutex_lock(&s->mu);
    if (s->closing) {
        pthread_mutex_unlock(&s->mu);
        task_free(t);
        return ACL_ERROR_RT_INVALID_HANDLE;
    }
    if (!s->started) {
        if (pthread_create(&s->thread, NULL, stream_worker, s) != 0) {
            pthread_mutex_unlock(&s->mu);
            task_free(t);
            return ACL_ERROR_RT_INTERNAL_ERROR;
        }
        s->started = 1;
    }
    t->seq = ++s->issued;
    t->next = NULL;
    if (s->tail != NULL) {
        s->tail->next = t;
    } else {
        s->head = t;
    }
    s->tail = t;
    if (seq != NULL) {
        *seq = t->seq;
    }
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return ACL_SUCCESS;
}

static task_t *task_new(enum task_kind kind)
{
    task_t *t = calloc(1, sizeof *t);
    if (t != NULL) {
        t->kind = kind;
    }
    return t;
}

/* Refuse new tasks, wait for the issued ones, end the worker. */
static void stream_retire(stream_t *s)
{
    pthread_mutex_lock(&s->mu);
    s->closing = 1;
    uint64_t seq = s->issued;
    while (s->completed < seq) {
        pthread_cond_wait(&s->cv, &s->mu);
    }
    s->stopped = 1;
    pthread_cond_broadcast(&s->cv);
    int started = s->started;
    pthread_mutex_unlock(&s->mu);
    if (started && !pthread_equal(s->thread, pthread_self())) {
        pthread_join(s->thread, NULL);
    }
}

/* A handle is a stream if its first word holds the magic (CANN reads it the same way). */
static stream_t *as_stream(aclrtStream handle)
{
    if (handle == NULL || ((uintptr_t)handle & 3u) != 0) {
        return NULL;
    }
    uint32_t magic = __atomic_load_n((const uint32_t *)handle, __ATOMIC_ACQUIRE);
    return magic == STREAM_MAGIC ? (stream_t *)handle : NULL;
}

static event_t *as_event(aclrtEvent handle)
{
    if (handle == NULL || ((uintptr_t)handle & 3u) != 0) {
        return NULL;
    }
    uint32_t magic = __atomic_load_n((const uint32_t *)handle, __ATOMIC_ACQUIRE);
    return magic == EVENT_MAGIC ? (event_t *)handle : NULL;
}

/*
 * Resolve a stream argument.  NULL is the current context's default stream (107002
 * without one); anything that is not a live stream is 107017.  *device / *gen: the
 * caller's current context, or -1 when there is none.
 */
static aclError resolve_stream(aclrtStream handle, stream_t **out, int *device, unsigned *gen)
{
    pthread_mutex_lock(&g_mu);
    int dev = -1;
    unsigned g = 0;
    int has = current_locked(&dev, &g);
    *device = has ? dev : -1;
    *gen = g;
    if (handle == NULL) {
        if (!has) {
            pthread_mutex_unlock(&g_mu);
            return ACL_ERROR_RT_CONTEXT_NULL;
        }
        *out = g_dev[dev].default_stream;
        pthread_mutex_unlock(&g_mu);
        return ACL_SUCCESS;
    }
    pthread_mutex_unlock(&g_mu);
    stream_t *s = as_stream(handle);
    if (s == NULL) {
        return ACL_ERROR_RT_INVALID_HANDLE;
    }
    *out = s;
    return ACL_SUCCESS;
}

/* resolve_stream for a call that only waits on or reads the stream: any context's
 * stream will do. */
static aclError stream_of(aclrtStream handle, stream_t **out)
{
    int device;
    unsigned gen;
    return resolve_stream(handle, out, &device, &gen);
}

/* A task submitted to a stream needs a current context, and the stream's own one. */
static aclError submit_check(const stream_t *s, int device, unsigned gen)
{
    if (device < 0) {
        return ACL_ERROR_RT_CONTEXT_NULL;
    }
    if (s->device != device || s->gen != gen) {
        return ACL_ERROR_RT_STREAM_CONTEXT;
    }
    return ACL_SUCCESS;
}

/* A new task of that kind for a stream argument, in CANN's order of checks: the stream
 * resolves (resolve_stream), it may take a task from this thread (submit_check), the
 * task is allocated.  The caller fills the task in and issues it with stream_enqueue. */
static aclError new_stream_task(aclrtStream handle, enum task_kind kind, stream_t **s, task_t **t)
{
    int device;
    unsigned gen;
    aclError code = resolve_stream(handle, s, &device, &gen);
    if (code == ACL_SUCCESS) {
        code = submit_check(*s, device, gen);
    }
    if (code != ACL_SUCCESS) {
        return code;
    }
    *t = task_new(kind);
    return *t != NULL ? ACL_SUCCESS : ACL_ERROR_RT_MEMORY_ALLOCATION;
}

/* An event argument: NULL is 100000, anything that is not a live event 107017. */
static aclError event_of(aclrtEvent handle, event_t **out)
{
    INVALID_PARAM_IF(handle == NULL);
    *out = as_event(handle);
    return *out != NULL ? ACL_SUCCESS : ACL_ERROR_RT_INVALID_HANDLE;
}

/* The event's latest record: its stream (NULL if never recorded) and *seq there. */
static stream_t *last_record(event_t *e, uint64_t *seq)
{
    pthread_mutex_lock(&e->mu);
    stream_t *on = e->rec_stream;
    *seq = e->rec_seq;
    pthread_mutex_unlock(&e->mu);
    return on;
}

/* ------------------------------------------------------------- init, errors -- */

aclError aclInit(const char *configPath)
{
    ENTER();
    aclError code = ACL_SUCCESS;
    pthread_mutex_lock(&g_mu);
    if (g_init_count > 0) {
        int same = (configPath == NULL && !g_init_has_config) ||
                   (configPath != NULL && g_init_has_config && strcmp(configPath, g_init_config) == 0);
        if (same) {
            g_init_count++;
            code = ACL_ERROR_REPEAT_INITIALIZE;
        } else {
            code = ACL_ERROR_INVALID_PARAM;
        }
    } else {
        free(g_init_config);
        g_init_config = configPath != NULL ? strdup(configPath) : NULL;
        g_init_has_config = configPath != NULL;
        g_init_count = 1;
    }
    pthread_mutex_unlock(&g_mu);
    return code;
}

aclError aclFinalize(void)
{
    fault_point(__func__); /* no ensure_init: aclFinalize reads none of that state */
    aclError code = ACL_SUCCESS;
    pthread_mutex_lock(&g_mu);
    if (g_init_count == 0) {
        code = ACL_ERROR_REPEAT_FINALIZE;
    } else {
        g_init_count--;
    }
    pthread_mutex_unlock(&g_mu);
    return code;
}

static const char *variant_text(void)
{
    return ""
#ifdef ACL_DOUBLE_BUG_BOUND_OFF_BY_ONE
           " bug=bound-off-by-one"
#endif
#ifdef ACL_DOUBLE_BUG_KIND_UNCHECKED
           " bug=kind-unchecked"
#endif
#ifdef ACL_DOUBLE_BUG_PAGEABLE_LATE
           " bug=pageable-late"
#endif
#ifdef ACL_DOUBLE_BUG_LARGE_PAGEABLE_DROPS
           " bug=large-pageable-drops"
#endif
#ifdef ACL_DOUBLE_FAULT_SEGV_ON
           " fault=segv-on-" STR(ACL_DOUBLE_FAULT_SEGV_ON)
#endif
#ifdef ACL_DOUBLE_FAULT_HANG_SYNC
           " fault=hang-sync"
#endif
#ifdef ACL_DOUBLE_FAULT_STREAM_LIMIT
           " fault=stream-limit-" STR(ACL_DOUBLE_FAULT_STREAM_LIMIT)
#endif
#ifdef ACL_DOUBLE_NO_SYMBOL_APIS
           " no-symbol-apis"
#endif
#if defined(ACL_DOUBLE_SETUP_MS) && defined(ACL_DOUBLE_FREES_WAIT) &&                            \
    defined(ACL_DOUBLE_HOST_FUNCS_SERIAL) && defined(ACL_DOUBLE_PAGEABLE_STAGED)
           " device-like-" STR(ACL_DOUBLE_SETUP_MS) /* all four: short, the version has 128 bytes */
#else
#ifdef ACL_DOUBLE_SETUP_MS
           " device=setup-ms-" STR(ACL_DOUBLE_SETUP_MS)
#endif
#ifdef ACL_DOUBLE_FREES_WAIT
           " device=frees-wait"
#endif
#ifdef ACL_DOUBLE_HOST_FUNCS_SERIAL
           " device=host-funcs-serial"
#endif
#ifdef ACL_DOUBLE_PAGEABLE_STAGED
           " device=pageable-staged"
#endif
#endif
        ;
}

aclError aclsysGetVersionStr(char *pkgName, char *versionStr)
{
    ENTER();
    INVALID_PARAM_IF(pkgName == NULL || versionStr == NULL);
    if (strcmp(pkgName, "runtime") != 0) {
        return ACL_ERROR_INVALID_FILE; /* no version.info for that package */
    }
    char visible[64] = "";
    size_t used = 0;
    for (int i = 0; i < g_ndev && used + 4 < sizeof visible; i++) {
        int n = snprintf(visible + used, sizeof visible - used, "%s%d", i ? "," : "", g_physical[i]);
        if (n < 0) {
            break;
        }
        used += (size_t)n;
    }
    snprintf(versionStr, ACL_PKG_VERSION_MAX_SIZE, "acl-conformance C double %s (devices %s of %d)%s",
             ACL_DOUBLE_VERSION, visible, g_nphysical, variant_text());
    return ACL_SUCCESS;
}

/* --------------------------------------------------------- registration -- */

int aclConformanceRegisterVariable(const void *hostVar, const char *name, size_t size)
{
    ENTER();
    INVALID_PARAM_IF(hostVar == NULL || name == NULL || size == 0 ||
                     strnlen(name, NAME_LIMIT) >= NAME_LIMIT);
    int code = ACL_SUCCESS;
    pthread_mutex_lock(&g_mu);
    for (size_t i = 0; i < g_nsyms; i++) {
        if (g_syms[i].host == hostVar) {
            pthread_mutex_unlock(&g_mu); /* re-registration keeps the first entry */
            return ACL_SUCCESS;
        }
    }
    if (g_layout_frozen || g_initial_fd < 0 || size > SIZE_MAX / 2 - g_image_size) {
        code = ACL_ERROR_RT_PARAM_INVALID;
        goto out;
    }
    if (g_nsyms == g_capsyms) {
        size_t cap = g_capsyms ? g_capsyms * 2 : 16;
        symbol_t *v = realloc(g_syms, cap * sizeof *v);
        if (v == NULL) {
            code = ACL_ERROR_RT_MEMORY_ALLOCATION;
            goto out;
        }
        g_syms = v;
        g_capsyms = cap;
    }
    size_t offset = g_image_size - GUARD;
    char *copy = strdup(name);
    uint8_t guard[GUARD];
    guard_fill(guard, sizeof guard);
    if (copy == NULL || write_at(g_initial_fd, hostVar, size, offset) != 0 ||
        write_at(g_initial_fd, guard, sizeof guard, offset + size) != 0) {
        free(copy);
        code = ACL_ERROR_RT_MEMORY_ALLOCATION; /* the image keeps its old size: nothing moved */
        goto out;
    }
    g_image_size += size;
    g_syms[g_nsyms].host = hostVar;
    g_syms[g_nsyms].name = copy;
    g_syms[g_nsyms].size = size;
    g_syms[g_nsyms].offset = offset;
    g_nsyms++;
out:
    pthread_mutex_unlock(&g_mu);
    return code;
}

/* -------------------------------------------------------------- devices -- */

static aclError set_device(int32_t deviceId)
{
    aclError code = ACL_SUCCESS;
    pthread_mutex_lock(&g_mu);
    device_t *d = &g_dev[deviceId];
    if (!d->live) {
        /* The device loads its image: a private mapping of the initial image, so that
         * loading copies nothing and a page is copied only when first written.  A later
         * context maps it again over the same addresses, dropping what the last one wrote. */
        void *image = g_initial_fd < 0 ? MAP_FAILED
                                       : mmap(d->image, g_image_size, PROT_READ | PROT_WRITE,
                                              MAP_PRIVATE | (d->image != NULL ? MAP_FIXED : 0),
                                              g_initial_fd, 0);
        if (image != MAP_FAILED) {
            d->image = image;
        }
        stream_t *s = image != MAP_FAILED ? stream_new(deviceId, d->gen, 1) : NULL;
        if (s == NULL) {
            code = ACL_ERROR_RT_MEMORY_ALLOCATION;
            goto out;
        }
        g_layout_frozen = 1;
        d->default_stream = s;
        d->streams = NULL;
        d->nstreams = 0;
        d->events = NULL;
        d->live = 1;
    }
    d->refcount++;
    tl_dev = deviceId;
    tl_gen = d->gen;
out:
    pthread_mutex_unlock(&g_mu);
    return code;
}

#ifdef ACL_DOUBLE_SETUP_MS
static void sleep_ms(long ms)
{
    struct timespec left = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
}
#endif

aclError aclrtSetDevice(int32_t deviceId)
{
    ENTER();
    if (deviceId < 0 || deviceId >= g_ndev) {
        return ACL_ERROR_RT_INVALID_DEVICEID;
    }
#ifdef ACL_DOUBLE_SETUP_MS
    /* Creating a context takes time on a real device.  One creation at a time, outside
     * g_mu, so that the process's other calls (and the streams) go on meanwhile. */
    pthread_mutex_lock(&g_setup_mu);
    pthread_mutex_lock(&g_mu);
    int creating = !g_dev[deviceId].live;
    pthread_mutex_unlock(&g_mu);
    if (creating) {
        sleep_ms(ACL_DOUBLE_SETUP_MS);
    }
    aclError code = set_device(deviceId);
    pthread_mutex_unlock(&g_setup_mu);
    return code;
#else
    return set_device(deviceId);
#endif
}

/* End device d's context (caller holds g_mu): every stream and event dies at once;
 * the streams, returned as a list through ctx_next, must then be retired. */
static stream_t *end_context_locked(device_t *d)
{
    stream_t *dying = d->default_stream;
    dying->ctx_next = d->streams;
    for (stream_t *s = dying; s != NULL; s = s->ctx_next) {
        __atomic_store_n(&s->magic, 0u, __ATOMIC_RELEASE);
    }
    for (event_t *e = d->events; e != NULL; e = e->ctx_next) {
        __atomic_store_n(&e->magic, 0u, __ATOMIC_RELEASE);
    }
    d->default_stream = NULL;
    d->streams = NULL;
    d->events = NULL;
    d->nstreams = 0;
    d->live = 0;
    d->gen++;
    return dying;
}

static aclError reset_device(int32_t deviceId)
{
    if (deviceId < 0 || deviceId >= g_ndev) {
        return ACL_ERROR_RT_INVALID_DEVICEID;
    }
    pthread_mutex_lock(&g_mu);
    device_t *d = &g_dev[deviceId];
    if (d->refcount == 0) {
        pthread_mutex_unlock(&g_mu);
        return ACL_SUCCESS;
    }
    d->refcount--;
    if (d->refcount > 0 || !d->live) {
        pthread_mutex_unlock(&g_mu);
        return ACL_SUCCESS;
    }
    stream_t *dying = end_context_locked(d);
    if (tl_dev == deviceId) {
        tl_dev = -1;
    }
    pthread_mutex_unlock(&g_mu);
    while (dying != NULL) { /* wait for every pending task, then end the workers */
        stream_t *next = dying->ctx_next;
        stream_retire(dying);
        dying = next;
    }
    return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId)
{
    ENTER();
    return reset_device(deviceId);
}

aclError aclrtGetDevice(int32_t *deviceId)
{
    ENTER();
    INVALID_PARAM_IF(deviceId == NULL);
    int dev;
    unsigned gen;
    if (!current(&dev, &gen)) {
        return ACL_ERROR_RT_CONTEXT_NULL;
    }
    *deviceId = dev;
    return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t *count)
{
    ENTER();
    INVALID_PARAM_IF(count == NULL);
    *count = (uint32_t)g_ndev;
    return ACL_SUCCESS;
}

aclError aclrtSynchronizeDevice(void)
{
    ENTER();
    stream_t *targets[MAX_STREAMS + 1];
    uint64_t seqs[MAX_STREAMS + 1];
    size_t n = 0;
    int dev;
    unsigned gen;
    RETURN_IF_ERROR(lock_current(&dev, &gen));
    targets[n++] = g_dev[dev].default_stream;
    for (stream_t *s = g_dev[dev].streams; s != NULL && n < MAX_STREAMS + 1; s = s->ctx_next) {
        targets[n++] = s;
    }
    for (size_t i = 0; i < n; i++) {
        seqs[i] = stream_issued(targets[i]);
    }
    pthread_mutex_unlock(&g_mu);
    for (size_t i = 0; i < n; i++) {
        wait_seq(targets[i], seqs[i], -1);
    }
    return ACL_SUCCESS;
}

/* -------------------------------------------------------------- streams -- */

/* The stream-limit fault: streams created in this process, ever (caller holds g_mu).
 * Counts one creation when it is allowed. */
static int stream_limit_reached(void)
{
#ifdef ACL_DOUBLE_FAULT_STREAM_LIMIT
    static unsigned long created;
    if (created >= (unsigned long)(ACL_DOUBLE_FAULT_STREAM_LIMIT)) {
        return 1;
    }
    created++;
#endif
    return 0;
}

aclError aclrtCreateStream(aclrtStream *stream)
{
    ENTER();
    int dev;
    unsigned gen;
    RETURN_IF_ERROR(begin_create(stream, &dev, &gen));
    aclError code = ACL_SUCCESS;
    stream_t *s = NULL;
    if (g_dev[dev].nstreams + 1 >= MAX_STREAMS || stream_limit_reached()) {
        code = ACL_ERROR_RT_NO_STREAM_RESOURCE;
    } else if ((s = stream_new(dev, gen, 0)) == NULL) {
        code = ACL_ERROR_RT_MEMORY_ALLOCATION;
    } else {
        s->ctx_next = g_dev[dev].streams;
        g_dev[dev].streams = s;
        g_dev[dev].nstreams++;
        *stream = s;
    }
    pthread_mutex_unlock(&g_mu);
    return code;
}

static aclError destroy_stream(aclrtStream stream)
{
    INVALID_PARAM_IF(stream == NULL);
    stream_t *s = as_stream(stream);
    if (s == NULL) {
        return ACL_ERROR_RT_INVALID_HANDLE;
    }
    int dev;
    unsigned gen;
    RETURN_IF_ERROR(lock_current(&dev, &gen));
    if (__atomic_load_n(&s->magic, __ATOMIC_ACQUIRE) != STREAM_MAGIC) {
        pthread_mutex_unlock(&g_mu); /* destroyed meanwhile */
        return ACL_ERROR_RT_INVALID_HANDLE;
    }
    if (s->is_default || s->device != dev || s->gen != gen) {
        pthread_mutex_unlock(&g_mu);
        return ACL_ERROR_RT_STREAM_CONTEXT;
    }
    for (stream_t **p = &g_dev[dev].streams; *p != NULL; p = &(*p)->ctx_next) {
        if (*p == s) {
            *p = s->ctx_next;
            break;
        }
    }
    g_dev[dev].nstreams--;
    __atomic_store_n(&s->magic, 0u, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&g_mu);
    stream_retire(s); /* waits for the pending tasks */
    return ACL_SUCCESS;
}

aclError aclrtDestroyStream(aclrtStream stream)
{
    ENTER();
    return destroy_stream(stream);
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
    ENTER();
    stream_t *s;
    RETURN_IF_ERROR(stream_of(stream, &s));
#ifdef ACL_DOUBLE_FAULT_HANG_SYNC
    for (;;) {
        sleep(1000); /* the fault: never returns */
    }
#endif
    wait_seq(s, stream_issued(s), -1); /* another device's stream is synchronised too */
    return ACL_SUCCESS;
}

aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout)
{
    ENTER();
    if (timeout < -1) {
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    stream_t *s;
    RETURN_IF_ERROR(stream_of(stream, &s));
    if (timeout == 0) {
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    if (wait_seq(s, stream_issued(s), timeout)) {
        return ACL_ERROR_RT_STREAM_SYNC_TIMEOUT;
    }
    return ACL_SUCCESS;
}

aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status)
{
    ENTER();
    stream_t *s;
    RETURN_IF_ERROR(stream_of(stream, &s));
    INVALID_PARAM_IF(status == NULL);
    pthread_mutex_lock(&s->mu);
    *status = s->completed >= s->issued ? ACL_STREAM_STATUS_COMPLETE : ACL_STREAM_STATUS_NOT_READY;
    pthread_mutex_unlock(&s->mu);
    return ACL_SUCCESS;
}

aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtHostFunc fn, void *args)
{
    ENTER();
    INVALID_PARAM_IF(fn == NULL);
    stream_t *s;
    task_t *t;
    RETURN_IF_ERROR(new_stream_task(stream, TASK_FUNC, &s, &t));
    t->fn = fn;
    t->arg = args;
    return stream_enqueue(s, t, NULL);
}

/* --------------------------------------------------------------- events -- */

aclError aclrtCreateEvent(aclrtEvent *event)
{
    ENTER();
    int dev;
    unsigned gen;
    RETURN_IF_ERROR(begin_create(event, &dev, &gen));
    aclError code = ACL_SUCCESS;
    event_t *e = calloc(1, sizeof *e);
    if (e == NULL) {
        code = ACL_ERROR_RT_MEMORY_ALLOCATION;
    } else {
        pthread_mutex_init(&e->mu, NULL);
        e->device = dev;
        e->gen = gen;
        e->ctx_next = g_dev[dev].events;
        g_dev[dev].events = e;
        e->all_next = g_all_events;
        g_all_events = e;
        __atomic_store_n(&e->magic, EVENT_MAGIC, __ATOMIC_RELEASE);
        *event = e;
    }
    pthread_mutex_unlock(&g_mu);
    return code;
}

aclError aclrtDestroyEvent(aclrtEvent event)
{
    ENTER();
    event_t *e;
    RETURN_IF_ERROR(event_of(event, &e));
    pthread_mutex_lock(&g_mu);
    if (__atomic_load_n(&e->magic, __ATOMIC_ACQUIRE) != EVENT_MAGIC) {
        pthread_mutex_unlock(&g_mu);
        return ACL_ERROR_RT_INVALID_HANDLE;
    }
    __atomic_store_n(&e->magic, 0u, __ATOMIC_RELEASE);
    device_t *d = &g_dev[e->device];
    if (d->live && d->gen == e->gen) {
        for (event_t **p = &d->events; *p != NULL; p = &(*p)->ctx_next) {
            if (*p == e) {
                *p = e->ctx_next;
                break;
            }
        }
    }
    pthread_mutex_unlock(&g_mu);
    return ACL_SUCCESS; /* waits already issued keep the record they captured */
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream)
{
    ENTER();
    event_t *e;
    RETURN_IF_ERROR(event_of(event, &e));
    stream_t *s;
    task_t *t;
    RETURN_IF_ERROR(new_stream_task(stream, TASK_RECORD, &s, &t));
    /* Issue and publish under the event's lock, so no wait sees an older record. */
    pthread_mutex_lock(&e->mu);
    uint64_t seq = 0;
    aclError code = stream_enqueue(s, t, &seq);
    if (code == ACL_SUCCESS) {
        e->rec_stream = s;
        e->rec_seq = seq;
    }
    pthread_mutex_unlock(&e->mu);
    return code;
}

aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event)
{
    ENTER();
    INVALID_PARAM_IF(event == NULL);
    stream_t *s;
    int dev;
    unsigned gen;
    RETURN_IF_ERROR(resolve_stream(stream, &s, &dev, &gen));
    event_t *e;
    aclError code = event_of(event, &e); /* the handle is read only after the stream resolves */
    if (code == ACL_SUCCESS) {
        code = submit_check(s, dev, gen);
    }
    if (code != ACL_SUCCESS) {
        return code;
    }
    uint64_t seq;
    stream_t *on = last_record(e, &seq);
    if (on == NULL) {
        return ACL_SUCCESS; /* never recorded: nothing to wait for */
    }
    task_t *t = task_new(TASK_WAIT);
    if (t == NULL) {
        return ACL_ERROR_RT_MEMORY_ALLOCATION;
    }
    t->wait_on = on;
    t->wait_seq = seq;
    return stream_enqueue(s, t, NULL);
}

aclError aclrtSynchronizeEvent(aclrtEvent event)
{
    ENTER();
    event_t *e;
    RETURN_IF_ERROR(event_of(event, &e));
    uint64_t seq;
    stream_t *on = last_record(e, &seq);
    if (on != NULL) {
        wait_seq(on, seq, -1);
    }
    return ACL_SUCCESS;
}

/* ---------------------------------------------------------- host memory -- */

#ifdef ACL_DOUBLE_FREES_WAIT
/* Wait until every stream of every device with a live context has run the tasks issued
 * before now, host functions included (what freeing page-locked memory does on a device
 * that cannot tell which tasks still use it). */
static void wait_every_device_idle(void)
{
    size_t n = 0;
    pthread_mutex_lock(&g_mu);
    for (int d = 0; d < g_ndev; d++) {
        if (g_dev[d].live) {
            n += 1 + (size_t)g_dev[d].nstreams;
        }
    }
    stream_t **targets = calloc(n ? n : 1, sizeof *targets);
    uint64_t *seqs = calloc(n ? n : 1, sizeof *seqs);
    size_t k = 0;
    for (int d = 0; d < g_ndev && targets != NULL && seqs != NULL; d++) {
        if (!g_dev[d].live) {
            continue;
        }
        targets[k++] = g_dev[d].default_stream;
        for (stream_t *s = g_dev[d].streams; s != NULL && k < n; s = s->ctx_next) {
            targets[k++] = s;
        }
    }
    for (size_t i = 0; i < k; i++) {
        seqs[i] = stream_issued(targets[i]);
    }
    pthread_mutex_unlock(&g_mu); /* waits hold no lock */
    for (size_t i = 0; i < k; i++) {
        wait_seq(targets[i], seqs[i], -1);
    }
    free(targets);
    free(seqs);
}
#endif

aclError aclrtMallocHost(void **hostPtr, size_t size)
{
    ENTER();
    INVALID_PARAM_IF(hostPtr == NULL || size == 0);
    void *p = NULL;
    if (size > g_host_limit || posix_memalign(&p, MALLOC_HOST_ALIGN, size) != 0) {
        return ACL_ERROR_RT_MEMORY_ALLOCATION;
    }
    memset(p, 0, size);
    pthread_mutex_lock(&g_mu);
    int failed = ranges_add(&g_host_allocs, (uintptr_t)p, (uintptr_t)p + size);
    pthread_mutex_unlock(&g_mu);
    if (failed) {
        free(p);
        return ACL_ERROR_RT_MEMORY_ALLOCATION;
    }
    *hostPtr = p;
    return ACL_SUCCESS;
}

aclError aclrtFreeHost(void *hostPtr)
{
    ENTER();
    INVALID_PARAM_IF(hostPtr == NULL);
#ifdef ACL_DOUBLE_FREES_WAIT
    wait_every_device_idle();
#endif
    if (!take_range(&g_host_allocs, hostPtr)) {
        return ACL_ERROR_RT_PARAM_INVALID; /* not the start of live aclrtMallocHost memory */
    }
    free(hostPtr);
    return ACL_SUCCESS;
}

static aclError register_range(void *ptr, uint64_t size)
{
    uintptr_t start = (uintptr_t)ptr;
    INVALID_PARAM_IF(size > UINTPTR_MAX - start);
    uintptr_t end = start + (uintptr_t)size;
    aclError code = ACL_SUCCESS;
    pthread_mutex_lock(&g_mu);
    if (ranges_overlap(&g_host_allocs, start, end) || ranges_overlap(&g_registered, start, end)) {
        code = ACL_ERROR_RT_HOST_MEMORY_ALREADY_REGISTERED; /* page-locked already */
    } else if (ranges_add(&g_registered, start, end) != 0) {
        code = ACL_ERROR_RT_MEMORY_ALLOCATION;
    }
    pthread_mutex_unlock(&g_mu);
    return code;
}

aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag)
{
    ENTER();
    INVALID_PARAM_IF(ptr == NULL || size == 0);
    INVALID_PARAM_IF(flag == 0 || (flag & ~(uint32_t)REGISTER_FLAGS) != 0);
    INVALID_PARAM_IF((uintptr_t)ptr % HOST_REGISTER_ALIGN != 0);
    return register_range(ptr, size);
}

aclError aclrtHostUnregister(void *ptr)
{
    ENTER();
    INVALID_PARAM_IF(ptr == NULL);
#ifdef ACL_DOUBLE_FREES_WAIT
    wait_every_device_idle();
#endif
    return take_range(&g_registered, ptr) ? ACL_SUCCESS : ACL_ERROR_RT_HOST_MEMORY_NOT_REGISTERED;
}

/* --------------------------------------------------------------- copies -- */

#ifndef ACL_DOUBLE_NO_SYMBOL_APIS /* the symbol APIs and their helpers */

static int ranges_contain(const ranges_t *r, uintptr_t p)
{
    for (size_t i = 0; i < r->n; i++) {
        if (r->v[i].start <= p && (p < r->v[i].end || (p == r->v[i].start))) {
            return 1;
        }
    }
    return 0;
}

/* The registered variable whose host address is symbol, or NULL (caller holds g_mu). */
static const symbol_t *find_symbol_locked(const void *symbol)
{
    for (size_t i = 0; i < g_nsyms; i++) {
        if (g_syms[i].host == symbol) {
            return &g_syms[i];
        }
    }
    return NULL;
}

/* Is a copy whose host side starts at p page-locked?  Only the start pointer decides. */
static int is_pinned(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    pthread_mutex_lock(&g_mu);
    int pinned = ranges_contain(&g_host_allocs, a) || ranges_contain(&g_registered, a);
    pthread_mutex_unlock(&g_mu);
    return pinned;
}

/* What a copy from or to pageable memory does. */
enum pageable_path {
    PAGEABLE_DRAIN_COPY, /* drain the stream, copy, return (CANN) */
    PAGEABLE_LATE,       /* the planted bug: a task that reads the source when it runs */
    PAGEABLE_STAGED      /* copy the source now, issue a task from the copy, wait for it */
};

/* A pageable copy staged at the call: the source is read into a staging buffer now, a
 * copy from it is issued on the stream, and the call returns once that copy has run. */
static aclError copy_staged(stream_t *s, void *dst, const void *src, size_t count)
{
    task_t *t = task_new(TASK_COPY);
    uint8_t *staging = malloc(count);
    if (t == NULL || staging == NULL) {
        free(t);
        free(staging);
        return ACL_ERROR_RT_MEMORY_ALLOCATION;
    }
    memcpy(staging, src, count); /* the source as at the call */
    t->dst = dst;
    t->src = staging;
    t->count = count;
    t->staging = staging;
    uint64_t seq = 0;
    RETURN_IF_ERROR(stream_enqueue(s, t, &seq));
    wait_seq(s, seq, -1);
    return ACL_SUCCESS;
}

/*
 * A copy that is either a task (page-locked host side: read or written when it
 * runs) or made now after draining the stream (pageable host side), as
 * rtMemcpyAsync does; host_side is the pointer whose start decides, pageable what a
 * pageable one does.
 */
static aclError copy_on_stream(void *dst, const void *src, size_t count, aclrtStream stream,
                               const void *host_side, enum pageable_path pageable)
{
    stream_t *s;
    int dev;
    unsigned gen;
    RETURN_IF_ERROR(resolve_stream(stream, &s, &dev, &gen));
    int pinned = is_pinned(host_side);
    if (!pinned && pageable == PAGEABLE_STAGED) {
        return copy_staged(s, dst, src, count); /* any context's stream, as a drain would */
    }
    if (pinned || pageable == PAGEABLE_LATE) {
        RETURN_IF_ERROR(submit_check(s, dev, gen));
        task_t *t = task_new(TASK_COPY);
        if (t == NULL) {
            return ACL_ERROR_RT_MEMORY_ALLOCATION;
        }
        t->dst = dst;
        t->src = src;
        t->count = count;
        return stream_enqueue(s, t, NULL);
    }
    wait_seq(s, stream_issued(s), -1); /* pageable: drain the stream, then copy */
#ifdef ACL_DOUBLE_BUG_LARGE_PAGEABLE_DROPS
    if (host_side == src && count > ((size_t)8 << 20)) {
        /* the planted bug: staged 4 KiB page by page, the last byte of each page left out */
        for (size_t at = 0; at < count; at += 4096) {
            size_t n = count - at < 4096 ? count - at : 4096;
            memcpy((uint8_t *)dst + at, (const uint8_t *)src + at, n == 4096 ? n - 1 : n);
        }
        return ACL_SUCCESS;
    }
#endif
    memcpy(dst, src, count);
    return ACL_SUCCESS;
}

/*
 * GetSymbolInfo and the bounds checks, in CANN's order: a current context (107002),
 * the exact symbol (107043), offset + count overflowing size_t (500001), past the end
 * (100000).  *addr: the symbol's bytes at offset on the current device.
 */
static aclError symbol_range(const void *symbol, size_t offset, size_t count, uint8_t **addr)
{
    int dev;
    unsigned gen;
    RETURN_IF_ERROR(lock_current(&dev, &gen));
    const symbol_t *sym = find_symbol_locked(symbol);
    if (sym == NULL) {
        pthread_mutex_unlock(&g_mu);
        return ACL_ERROR_RT_INVALID_SYMBOL;
    }
    size_t size = sym->size;
    uint8_t *base = g_dev[dev].image + sym->offset;
    pthread_mutex_unlock(&g_mu);
    if (offset > SIZE_MAX - count) {
        return ACL_ERROR_FAILURE;
    }
#ifdef ACL_DOUBLE_BUG_BOUND_OFF_BY_ONE
    if (offset + count > size + 1) { /* the planted bug: one byte past the end passes */
#else
    if (offset + count > size) {
#endif
        return ACL_ERROR_INVALID_PARAM;
    }
    *addr = base + offset;
    return ACL_SUCCESS;
}

static int to_kind_ok(aclrtMemcpyKind kind)
{
#ifdef ACL_DOUBLE_BUG_KIND_UNCHECKED
    (void)kind; /* the planted bug: any kind is taken for host to device */
    return 1;
#else
    return kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEFAULT;
#endif
}

static int from_kind_ok(aclrtMemcpyKind kind)
{
    return kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEFAULT;
}

aclError aclrtGetSymbolAddress(const void *symbol, void **devPtr)
{
    ENTER();
    INVALID_PARAM_IF(symbol == NULL || devPtr == NULL);
    uint8_t *addr = NULL;
    aclError code = symbol_range(symbol, 0, 0, &addr);
    if (code == ACL_SUCCESS) {
        *devPtr = addr;
    }
    return code;
}

aclError aclrtGetSymbolSize(const void *symbol, size_t *size)
{
    ENTER();
    INVALID_PARAM_IF(symbol == NULL || size == NULL);
    int dev;
    unsigned gen;
    RETURN_IF_ERROR(lock_current(&dev, &gen));
    const symbol_t *sym = find_symbol_locked(symbol);
    if (sym != NULL) {
        *size = sym->size;
    }
    pthread_mutex_unlock(&g_mu);
    return sym != NULL ? ACL_SUCCESS : ACL_ERROR_RT_INVALID_SYMBOL;
}

/*
 * The checks the two To-symbol copies share, in CANN's order: count 0 succeeds before
 * every other check (then *dst stays NULL and there is nothing to copy), then the
 * arguments and the kind, then symbol_range.  *dst: where the bytes go.
 */
static aclError to_symbol_checks(const void *symbol, const void *src, size_t count, size_t offset,
                                 aclrtMemcpyKind kind, uint8_t **dst)
{
    *dst = NULL;
    if (count == 0) {
        return ACL_SUCCESS;
    }
    INVALID_PARAM_IF(symbol == NULL || src == NULL || !to_kind_ok(kind));
    return symbol_range(symbol, offset, count, dst);
}

/* The same for the two From-symbol copies; *src: where the bytes come from. */
static aclError from_symbol_checks(void *dst, size_t dstMax, const void *symbol, size_t count,
                                   size_t offset, aclrtMemcpyKind kind, uint8_t **src)
{
    *src = NULL;
    if (count == 0) {
        return ACL_SUCCESS;
    }
    INVALID_PARAM_IF(symbol == NULL || dst == NULL || count > dstMax || !from_kind_ok(kind));
    return symbol_range(symbol, offset, count, src);
}

aclError aclrtMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset,
                                  aclrtMemcpyKind kind, aclrtStream stream)
{
    ENTER();
    uint8_t *dst;
    aclError code = to_symbol_checks(symbol, src, count, offset, kind, &dst);
    if (code != ACL_SUCCESS || dst == NULL) {
        return code;
    }
#if defined(ACL_DOUBLE_BUG_PAGEABLE_LATE)
    const enum pageable_path pageable = PAGEABLE_LATE; /* the planted bug: read when it runs */
#elif defined(ACL_DOUBLE_PAGEABLE_STAGED)
    const enum pageable_path pageable = PAGEABLE_STAGED;
#else
    const enum pageable_path pageable = PAGEABLE_DRAIN_COPY;
#endif
    return copy_on_stream(dst, src, count, stream, src, pageable);
}

aclError aclrtMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
                             aclrtMemcpyKind kind)
{
    ENTER();
    uint8_t *dst;
    aclError code = to_symbol_checks(symbol, src, count, offset, kind, &dst);
    if (code != ACL_SUCCESS || dst == NULL) {
        return code;
    }
    memcpy(dst, src, count); /* synchronous, outside every stream */
    return ACL_SUCCESS;
}

aclError aclrtMemcpyFromSymbol(void *dst, size_t dstMax, const void *symbol, size_t count,
                               size_t offset, aclrtMemcpyKind kind)
{
    ENTER();
    uint8_t *src;
    aclError code = from_symbol_checks(dst, dstMax, symbol, count, offset, kind, &src);
    if (code != ACL_SUCCESS || src == NULL) {
        return code;
    }
    memcpy(dst, src, count);
    return ACL_SUCCESS;
}

aclError aclrtMemcpyFromSymbolAsync(void *dst, size_t dstMax, const void *symbol, size_t count,
                                    size_t offset, aclrtMemcpyKind kind, aclrtStream stream)
{
    ENTER();
    uint8_t *src;
    aclError code = from_symbol_checks(dst, dstMax, symbol, count, offset, kind, &src);
    if (code != ACL_SUCCESS || src == NULL) {
        return code;
    }
    return copy_on_stream(dst, src, count, stream, dst, PAGEABLE_DRAIN_COPY);
}

#endif /* ACL_DOUBLE_NO_SYMBOL_APIS */
