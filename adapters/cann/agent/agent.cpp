/*
 * The acl-conformance agent: an executable that holds the suite's fixture device
 * variables and makes ACL calls on request, one request per line on stdin, one
 * answer per request on stdout.  The protocol is described in ../PROTOCOL.md.
 *
 * CANN documents device variables as `__gm__` variables defined in the file that
 * holds `main`, compiled with bisheng; that is why the real-CANN backend is this
 * executable and not a library.  Two builds (see CMakeLists.txt):
 *
 *   ASC     CANN's ASC toolchain.  The variables are real `__gm__` device variables,
 *           registered by the code bisheng emits; this file makes no registration.
 *   plain   the system compiler against any library exporting the ACL C functions
 *           (the bundled C double, or an alternative backend).  The build defines
 *           ACL_CONFORMANCE_REGISTER_VARIABLES: `__gm__` is defined away, and at
 *           start-up the agent fills each variable's host shadow with the fixture
 *           pattern and hands it to aclConformanceRegisterVariable (see
 *           <acl_conformance/register.h>).
 *
 * Threads.  Each request names the suite thread that made it; every suite thread gets an
 * executor thread of its own here, which makes that thread's calls in order (CANN contexts
 * are thread-local, so one suite thread's calls must all come from one agent thread).  One
 * thread at a time reads stdin (see struct Sched): usually the executor of the last caller,
 * which then runs its own next call with no hand-off; a call for another suite thread goes
 * to that thread's executor.  Requests that touch no ACL context (`open_gate`, `hello`, ...)
 * are answered by the reader at once.  A call that blocks (a pageable copy or a
 * synchronisation behind a closed gate) blocks only its executor: after 2 ms the main
 * thread takes over reading, so a gate can always be opened while a call waits for it.
 * Answers are written whole under a lock and carry the request id; the client matches them.
 *
 * The gate is a host function (aclrtLaunchHostFunc) that blocks its stream until
 * `open_gate` releases it.  Host buffers live here: page-locked ones from
 * aclrtMallocHost, pageable ones from malloc.
 *
 * The symbol APIs (aclrtGetSymbolAddress, aclrtGetSymbolSize, aclrtMemcpy{To,From}Symbol
 * and their Async forms) are not linked: CANN before 9.1.0 does not have them, and its ACL
 * version number (1.17.0 either way) does not tell.  They are looked up with
 * dlsym(RTLD_DEFAULT, ...) at start-up, so the agent builds and loads against a library
 * without them; `hello` says which are absent, and a request for an absent one answers
 * ACL_ERROR_RT_FEATURE_NOT_SUPPORT (207000) without calling anything.
 *
 * Written for acl-conformance; C++17, no dependencies beyond the ACL library.
 */
#include <acl/acl.h>

#ifdef ACL_CONFORMANCE_REGISTER_VARIABLES
#include <acl_conformance/register.h>
#ifndef __gm__
#define __gm__
#endif
#else
#include "kernel_operator.h" /* the ASC build: what CANN's device-variable samples include */
#endif

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <dlfcn.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define AGENT_VERSION "0.2.0"
#define PROTOCOL_VERSION 2

/* ------------------------------------------------------------ fixtures -- */
/* Names, sizes and declaration order are those of the simulator's DEFAULT_FIXTURES. */

struct Struct12 {
    uint32_t a, b, c;
};
struct Struct24 { /* padded: 1 + 7 + 8 + 4 + 4 */
    uint8_t a;
    uint64_t b;
    uint32_t c;
};
static_assert(sizeof(Struct12) == 12, "g_struct12 must be 12 bytes");
static_assert(sizeof(Struct24) == 24, "g_struct24 must be 24 bytes");

__gm__ uint8_t g_u8;
__gm__ uint32_t g_u32;
__gm__ uint64_t g_u64;
__gm__ Struct12 g_struct12;
__gm__ Struct24 g_struct24;
__gm__ uint8_t g_arr256[256];
__gm__ uint8_t g_arr4k[4096];
__gm__ uint8_t g_arr1m[1 << 20];
__gm__ uint8_t g_arr16m[16 << 20];

struct Fixture {
    const char *name;
    const void *host; /* the host shadow address, &var: the symbol */
    size_t size;
};

#define FIXTURE(var) {#var, (const void *)&var, sizeof(var)}
static const Fixture kFixtures[] = {
    FIXTURE(g_u8),     FIXTURE(g_u32),   FIXTURE(g_u64),   FIXTURE(g_struct12), FIXTURE(g_struct24),
    FIXTURE(g_arr256), FIXTURE(g_arr4k), FIXTURE(g_arr1m), FIXTURE(g_arr16m),
};
static const size_t kFixtureCount = sizeof kFixtures / sizeof kFixtures[0];

/* Readable memory holding no stream or event magic: the suite's "invalid handle". */
alignas(64) static unsigned char g_not_a_handle[4096];

/* --------------------------------------------------------- symbol APIs -- */
/* Signatures written out here (a vendor header without the symbol APIs declares none of
 * them); the agent never names the functions themselves, so nothing links against them. */

typedef aclError (*GetSymbolAddressFn)(const void *symbol, void **devPtr);
typedef aclError (*GetSymbolSizeFn)(const void *symbol, size_t *size);
typedef aclError (*MemcpyToSymbolFn)(const void *symbol, const void *src, size_t count, size_t offset,
                                     aclrtMemcpyKind kind);
typedef aclError (*MemcpyToSymbolAsyncFn)(const void *symbol, const void *src, size_t count, size_t offset,
                                          aclrtMemcpyKind kind, aclrtStream stream);
typedef aclError (*MemcpyFromSymbolFn)(void *dst, size_t dstMax, const void *symbol, size_t count, size_t offset,
                                       aclrtMemcpyKind kind);
typedef aclError (*MemcpyFromSymbolAsyncFn)(void *dst, size_t dstMax, const void *symbol, size_t count,
                                            size_t offset, aclrtMemcpyKind kind, aclrtStream stream);

static const long long kFeatureNotSupport = 207000; /* ACL_ERROR_RT_FEATURE_NOT_SUPPORT */

struct SymbolApis {
    GetSymbolAddressFn get_symbol_address = nullptr;
    GetSymbolSizeFn get_symbol_size = nullptr;
    MemcpyToSymbolFn memcpy_to_symbol = nullptr;
    MemcpyToSymbolAsyncFn memcpy_to_symbol_async = nullptr;
    MemcpyFromSymbolFn memcpy_from_symbol = nullptr;
    MemcpyFromSymbolAsyncFn memcpy_from_symbol_async = nullptr;
    std::string missing; /* the absent ones, comma-separated */
};
/* Set in main, before the first request is read; read-only after.  On the heap and never
 * destroyed, like State below. */
static SymbolApis &g_sym = *new SymbolApis;

template <typename Fn>
static void find_symbol_api(Fn &out, const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name); /* the executable and every library loaded with it */
    if (p == nullptr) {
        g_sym.missing += (g_sym.missing.empty() ? "" : ",") + std::string(name);
        return;
    }
    static_assert(sizeof(Fn) == sizeof(void *), "function and object pointers differ in size");
    std::memcpy(&out, &p, sizeof p); /* POSIX: dlsym's result is the function's address */
}

static void find_symbol_apis()
{
    find_symbol_api(g_sym.get_symbol_address, "aclrtGetSymbolAddress");
    find_symbol_api(g_sym.get_symbol_size, "aclrtGetSymbolSize");
    find_symbol_api(g_sym.memcpy_to_symbol, "aclrtMemcpyToSymbol");
    find_symbol_api(g_sym.memcpy_to_symbol_async, "aclrtMemcpyToSymbolAsync");
    find_symbol_api(g_sym.memcpy_from_symbol, "aclrtMemcpyFromSymbol");
    find_symbol_api(g_sym.memcpy_from_symbol_async, "aclrtMemcpyFromSymbolAsync");
}

/* --------------------------------------------------------------- state -- */

struct Request {
    std::string id;
    std::vector<std::string> args; /* args[0] is the command */
    std::string payload;
};

struct Executor {
    std::condition_variable cv; /* waits under Sched::mu */
    std::deque<Request *> queue;
    bool bye = false;
};

/*
 * Who reads stdin.  One thread at a time holds the reader role.  In the common case it is
 * the executor of the suite thread that called last: reading its own next request, it
 * runs it at once, with no hand-off between threads (a hand-off costs more than a whole
 * call on some machines).  While that executor runs a call, nobody reads; if the call
 * lasts longer than kRescueAfter (it may wait for a gate that only a later request can
 * open), the main thread takes the role over and reads on.  When the main thread reads a
 * request for an executor, it hands the request and the role to it.
 */
struct Sched {
    std::mutex mu;
    std::condition_variable main_cv;
    Executor *owner = nullptr; /* the executor holding the role; nullptr: the main thread */
    bool busy = false;         /* the owner is running a call, not reading */
    std::chrono::steady_clock::time_point busy_since;
};

static const std::chrono::milliseconds kRescueAfter(2);
static const std::chrono::milliseconds kRescueTick(5);

struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool open = false;
};

struct HostBuffer {
    size_t size;
    bool pinned;
};

/* Everything lives on the heap and is never destroyed: exit() runs no destructor
 * that an executor still blocked in the backend could trip over. */
struct State {
    std::mutex out_mu;
    std::mutex mem_mu;
    std::map<uintptr_t, HostBuffer> buffers;
    std::map<uintptr_t, uint64_t> registered; /* successful aclrtHostRegisterV2 ranges */
    std::vector<void *> quarantine;
    std::mutex gate_mu;
    std::unordered_map<int64_t, Gate *> gates;
    int64_t next_gate = 1;
    std::unordered_map<std::string, Executor *> executors; /* the reader role's holder only */
    Sched sched;
};
static State *g;

/* -------------------------------------------------------------- output -- */

static void write_all(const char *data, size_t n)
{
    while (n > 0) {
        ssize_t w = write(1, data, n);
        if (w < 0) {
            if (errno == EINTR) {
                continue;
            }
            _exit(0); /* the client is gone */
        }
        data += w;
        n -= (size_t)w;
    }
}

/* One answer: "<id> <code> [outputs...] [#<n>]\n" and n raw bytes. */
static void reply(const std::string &id, long long code, const std::vector<std::string> &outs = {},
                  const char *data = nullptr, size_t n = 0, bool has_payload = false)
{
    std::string head = id + " " + std::to_string(code);
    for (const std::string &o : outs) {
        head += " " + o;
    }
    if (has_payload) {
        head += " #" + std::to_string(n);
    }
    head += "\n";
    std::lock_guard<std::mutex> lock(g->out_mu);
    write_all(head.data(), head.size());
    if (n > 0) {
        write_all(data, n);
    }
}

static void reply_error(const std::string &id, const std::string &message)
{
    reply(id, -1, {}, message.data(), message.size(), true); /* code -1: a protocol error */
}

static std::string u64(uint64_t v)
{
    return std::to_string(v);
}

static std::string ptr(const void *p)
{
    return std::to_string((unsigned long long)(uintptr_t)p);
}

/* -------------------------------------------------------------- parsing -- */

struct BadRequest {
    std::string what;
};

static uint64_t arg_u64(const Request &r, size_t i)
{
    if (i >= r.args.size()) {
        throw BadRequest{r.args[0] + ": missing argument " + std::to_string(i)};
    }
    const char *s = r.args[i].c_str();
    char *end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0 || s[0] == '-') {
        throw BadRequest{r.args[0] + ": bad unsigned argument '" + r.args[i] + "'"};
    }
    return (uint64_t)v;
}

static int32_t arg_i32(const Request &r, size_t i)
{
    if (i >= r.args.size()) {
        throw BadRequest{r.args[0] + ": missing argument " + std::to_string(i)};
    }
    const char *s = r.args[i].c_str();
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0 || v < INT32_MIN || v > INT32_MAX) {
        throw BadRequest{r.args[0] + ": bad int32 argument '" + r.args[i] + "'"};
    }
    return (int32_t)v;
}

static void *arg_ptr(const Request &r, size_t i)
{
    return (void *)(uintptr_t)arg_u64(r, i);
}

static aclrtMemcpyKind arg_kind(const Request &r, size_t i)
{
    /* Any int32 is passed on as the enum, as a C caller casting it would. */
    return static_cast<aclrtMemcpyKind>(arg_i32(r, i));
}

/* -------------------------------------------------------- host buffers -- */

/* Do [addr, addr + n) lie in one live host buffer?  Caller holds mem_mu. */
static bool in_buffer(uintptr_t addr, size_t n)
{
    auto it = g->buffers.upper_bound(addr);
    if (it == g->buffers.begin()) {
        return false;
    }
    --it;
    uintptr_t start = it->first;
    size_t size = it->second.size;
    if (addr < start || addr - start > size) {
        return false;
    }
    return n <= size - (addr - start) && (n == 0 || addr - start < size);
}

static bool overlaps_registered(uintptr_t start, size_t size)
{
    for (const auto &reg : g->registered) {
        if (reg.first < start + size && start < reg.first + reg.second) {
            return true;
        }
    }
    return false;
}

/* ---------------------------------------------------------------- gate -- */

static void gate_function(void *arg)
{
    Gate *gate = static_cast<Gate *>(arg);
    std::unique_lock<std::mutex> lock(gate->mu);
    gate->cv.wait(lock, [gate] { return gate->open; });
}

static long long open_gate(int64_t id)
{
    Gate *gate = nullptr;
    {
        std::lock_guard<std::mutex> lock(g->gate_mu);
        auto it = g->gates.find(id);
        if (it == g->gates.end()) {
            return ACL_ERROR_INVALID_PARAM;
        }
        gate = it->second;
    }
    {
        std::lock_guard<std::mutex> lock(gate->mu);
        gate->open = true;
    }
    gate->cv.notify_all();
    return ACL_SUCCESS;
}

static void open_every_gate()
{
    std::lock_guard<std::mutex> lock(g->gate_mu);
    for (auto &entry : g->gates) {
        {
            std::lock_guard<std::mutex> glock(entry.second->mu);
            entry.second->open = true;
        }
        entry.second->cv.notify_all();
    }
}

/* ------------------------------------------------------------ the calls -- */

static void execute(Request &r)
{
    const std::string &cmd = r.args[0];
    const std::string &id = r.id;
    if (cmd == "init") {
        std::string path = r.payload;
        reply(id, aclInit(arg_u64(r, 1) ? path.c_str() : nullptr));
    } else if (cmd == "finalize") {
        reply(id, aclFinalize());
    } else if (cmd == "get_version_str") {
        char version[2 * ACL_PKG_VERSION_MAX_SIZE] = {0};
        char package[] = "runtime";
        aclError code = aclsysGetVersionStr(package, version);
        size_t n = strnlen(version, sizeof version);
        reply(id, code, {}, version, n, true);
    } else if (cmd == "set_device") {
        reply(id, aclrtSetDevice(arg_i32(r, 1)));
    } else if (cmd == "get_device") {
        int32_t device = -1;
        aclError code = aclrtGetDevice(&device);
        reply(id, code, {std::to_string(device)});
    } else if (cmd == "reset_device") {
        reply(id, aclrtResetDevice(arg_i32(r, 1)));
    } else if (cmd == "get_device_count") {
        uint32_t count = 0;
        aclError code = aclrtGetDeviceCount(&count);
        reply(id, code, {u64(count)});
    } else if (cmd == "synchronize_device") {
        reply(id, aclrtSynchronizeDevice());
    } else if (cmd == "create_stream") {
        aclrtStream stream = nullptr;
        aclError code = aclrtCreateStream(arg_u64(r, 1) ? nullptr : &stream);
        reply(id, code, {ptr(stream)});
    } else if (cmd == "destroy_stream") {
        reply(id, aclrtDestroyStream(arg_ptr(r, 1)));
    } else if (cmd == "synchronize_stream") {
        reply(id, aclrtSynchronizeStream(arg_ptr(r, 1)));
    } else if (cmd == "synchronize_stream_with_timeout") {
        reply(id, aclrtSynchronizeStreamWithTimeout(arg_ptr(r, 1), arg_i32(r, 2)));
    } else if (cmd == "stream_query") {
        aclrtStreamStatus status = ACL_STREAM_STATUS_RESERVED;
        aclError code = aclrtStreamQuery(arg_ptr(r, 1), &status);
        reply(id, code, {std::to_string((int)status)});
    } else if (cmd == "create_event") {
        aclrtEvent event = nullptr;
        aclError code = aclrtCreateEvent(arg_u64(r, 1) ? nullptr : &event);
        reply(id, code, {ptr(event)});
    } else if (cmd == "record_event") {
        reply(id, aclrtRecordEvent(arg_ptr(r, 1), arg_ptr(r, 2)));
    } else if (cmd == "stream_wait_event") {
        reply(id, aclrtStreamWaitEvent(arg_ptr(r, 1), arg_ptr(r, 2)));
    } else if (cmd == "synchronize_event") {
        reply(id, aclrtSynchronizeEvent(arg_ptr(r, 1)));
    } else if (cmd == "destroy_event") {
        reply(id, aclrtDestroyEvent(arg_ptr(r, 1)));
    } else if (cmd == "malloc_host") {
        size_t size = (size_t)arg_u64(r, 1);
        void *p = nullptr;
        aclError code = aclrtMallocHost(arg_u64(r, 2) ? nullptr : &p, size);
        if (code == ACL_SUCCESS && p != nullptr) {
            std::lock_guard<std::mutex> lock(g->mem_mu);
            g->buffers[(uintptr_t)p] = HostBuffer{size, true};
        }
        reply(id, code, {ptr(p)});
    } else if (cmd == "free_host") {
        void *p = arg_ptr(r, 1);
        aclError code = aclrtFreeHost(p);
        if (code == ACL_SUCCESS) {
            std::lock_guard<std::mutex> lock(g->mem_mu);
            g->buffers.erase((uintptr_t)p);
        }
        reply(id, code);
    } else if (cmd == "malloc_pageable") {
        size_t size = (size_t)arg_u64(r, 1);
        void *p = std::calloc(size ? size : 1, 1); /* malloc, zero-filled; size 0: a unique address */
        if (p == nullptr) {
            reply(id, ACL_ERROR_RT_MEMORY_ALLOCATION, {"0"});
            return;
        }
        {
            std::lock_guard<std::mutex> lock(g->mem_mu);
            g->buffers[(uintptr_t)p] = HostBuffer{size, false};
        }
        reply(id, ACL_SUCCESS, {ptr(p)});
    } else if (cmd == "free_pageable") {
        uintptr_t p = (uintptr_t)arg_u64(r, 1);
        if (p == 0) {
            reply(id, ACL_SUCCESS); /* free(NULL) */
            return;
        }
        std::lock_guard<std::mutex> lock(g->mem_mu);
        auto it = g->buffers.find(p);
        if (it == g->buffers.end() || it->second.pinned) {
            reply(id, ACL_ERROR_INVALID_PARAM); /* not the start of live malloc memory */
            return;
        }
        /* A range still registered stays registered after free() (CANN's table is process
         * global); keeping such a buffer allocated stops malloc from handing its address
         * out again as fresh pageable memory that the backend would take as page-locked. */
        if (overlaps_registered(p, it->second.size)) {
            g->quarantine.push_back((void *)p);
        } else {
            std::free((void *)p);
        }
        g->buffers.erase(it);
        reply(id, ACL_SUCCESS);
    } else if (cmd == "host_register") {
        void *p = arg_ptr(r, 1);
        uint64_t size = arg_u64(r, 2);
        aclError code = aclrtHostRegisterV2(p, size, (uint32_t)arg_u64(r, 3));
        if (code == ACL_SUCCESS) {
            std::lock_guard<std::mutex> lock(g->mem_mu);
            g->registered[(uintptr_t)p] = size;
        }
        reply(id, code);
    } else if (cmd == "host_unregister") {
        void *p = arg_ptr(r, 1);
        aclError code = aclrtHostUnregister(p);
        if (code == ACL_SUCCESS) {
            std::lock_guard<std::mutex> lock(g->mem_mu);
            g->registered.erase((uintptr_t)p);
        }
        reply(id, code);
    } else if (cmd == "write_host") {
        uintptr_t dst = (uintptr_t)arg_u64(r, 1);
        std::lock_guard<std::mutex> lock(g->mem_mu);
        if (!in_buffer(dst, r.payload.size())) {
            reply(id, ACL_ERROR_INVALID_PARAM);
            return;
        }
        if (!r.payload.empty()) {
            std::memcpy((void *)dst, r.payload.data(), r.payload.size());
        }
        reply(id, ACL_SUCCESS);
    } else if (cmd == "read_host") {
        uintptr_t src = (uintptr_t)arg_u64(r, 1);
        size_t count = (size_t)arg_u64(r, 2);
        std::lock_guard<std::mutex> lock(g->mem_mu);
        if (!in_buffer(src, count)) {
            reply(id, ACL_ERROR_INVALID_PARAM, {}, nullptr, 0, true);
            return;
        }
        reply(id, ACL_SUCCESS, {}, (const char *)src, count, true);
    } else if (cmd == "get_symbol_address") {
        void *dev = nullptr;
        const void *symbol = arg_ptr(r, 1);
        void **out = arg_u64(r, 2) ? nullptr : &dev;
        auto fn = g_sym.get_symbol_address;
        long long code = fn != nullptr ? fn(symbol, out) : kFeatureNotSupport; /* before ptr(dev) */
        reply(id, code, {ptr(dev)});
    } else if (cmd == "get_symbol_size") {
        size_t size = 0;
        const void *symbol = arg_ptr(r, 1);
        size_t *out = arg_u64(r, 2) ? nullptr : &size;
        auto fn = g_sym.get_symbol_size;
        long long code = fn != nullptr ? fn(symbol, out) : kFeatureNotSupport; /* before u64(size) */
        reply(id, code, {u64(size)});
    } else if (cmd == "memcpy_to_symbol_async") {
        const void *symbol = arg_ptr(r, 1), *src = arg_ptr(r, 2);
        size_t count = (size_t)arg_u64(r, 3), offset = (size_t)arg_u64(r, 4);
        aclrtMemcpyKind kind = arg_kind(r, 5);
        aclrtStream stream = arg_ptr(r, 6);
        auto fn = g_sym.memcpy_to_symbol_async;
        reply(id, fn != nullptr ? fn(symbol, src, count, offset, kind, stream) : kFeatureNotSupport);
    } else if (cmd == "memcpy_to_symbol") {
        const void *symbol = arg_ptr(r, 1), *src = arg_ptr(r, 2);
        size_t count = (size_t)arg_u64(r, 3), offset = (size_t)arg_u64(r, 4);
        aclrtMemcpyKind kind = arg_kind(r, 5);
        auto fn = g_sym.memcpy_to_symbol;
        reply(id, fn != nullptr ? fn(symbol, src, count, offset, kind) : kFeatureNotSupport);
    } else if (cmd == "memcpy_from_symbol") {
        void *dst = arg_ptr(r, 1);
        size_t dst_max = (size_t)arg_u64(r, 2);
        const void *symbol = arg_ptr(r, 3);
        size_t count = (size_t)arg_u64(r, 4), offset = (size_t)arg_u64(r, 5);
        aclrtMemcpyKind kind = arg_kind(r, 6);
        auto fn = g_sym.memcpy_from_symbol;
        reply(id, fn != nullptr ? fn(dst, dst_max, symbol, count, offset, kind) : kFeatureNotSupport);
    } else if (cmd == "memcpy_from_symbol_async") {
        void *dst = arg_ptr(r, 1);
        size_t dst_max = (size_t)arg_u64(r, 2);
        const void *symbol = arg_ptr(r, 3);
        size_t count = (size_t)arg_u64(r, 4), offset = (size_t)arg_u64(r, 5);
        aclrtMemcpyKind kind = arg_kind(r, 6);
        aclrtStream stream = arg_ptr(r, 7);
        auto fn = g_sym.memcpy_from_symbol_async;
        reply(id, fn != nullptr ? fn(dst, dst_max, symbol, count, offset, kind, stream) : kFeatureNotSupport);
    } else if (cmd == "launch_gate") {
        aclrtStream stream = arg_ptr(r, 1);
        Gate *gate = new Gate;
        int64_t gid;
        {
            std::lock_guard<std::mutex> lock(g->gate_mu);
            gid = g->next_gate++;
            g->gates[gid] = gate; /* kept even if refused: the backend may still hold it */
        }
        aclError code = aclrtLaunchHostFunc(stream, gate_function, gate);
        reply(id, code, {std::to_string(code == ACL_SUCCESS ? gid : 0)});
    } else {
        throw BadRequest{"unknown command '" + cmd + "'"};
    }
}

static void run_request(Request *r)
{
    try {
        execute(*r);
    } catch (const BadRequest &bad) {
        reply_error(r->id, bad.what);
    }
    delete r;
}

/* ------------------------------------------------------ inline commands -- */

static void hello(const std::string &id)
{
    uint32_t count = 0;
    aclError code = aclrtGetDeviceCount(&count);
#ifdef ACL_CONFORMANCE_REGISTER_VARIABLES
    const char *mode = "plain";
#else
    const char *mode = "asc";
#endif
    reply(id, ACL_SUCCESS,
          {std::to_string(PROTOCOL_VERSION), AGENT_VERSION, mode, std::to_string((long long)getpid()),
           ptr(g_not_a_handle), std::to_string(code), u64(count), g_sym.missing.empty() ? "1" : "0",
           g_sym.missing.empty() ? "-" : g_sym.missing});
}

static void fixtures(const std::string &id)
{
    std::string text;
    for (size_t k = 0; k < kFixtureCount; k++) {
        text += std::string(kFixtures[k].name) + " " + u64(kFixtures[k].size) + " " + ptr(kFixtures[k].host) + "\n";
    }
    reply(id, ACL_SUCCESS, {std::to_string(kFixtureCount)}, text.data(), text.size(), true);
}

[[noreturn]] static void quit(int status)
{
    open_every_gate(); /* so that no worker stays blocked on a gate while the process ends */
    std::exit(status);
}

/* ------------------------------------------------------------------ input -- */

/* The next request usually follows the last answer within a few tens of microseconds:
 * polling for it that long keeps this thread's CPU awake, which on a virtual machine saves
 * the wake-up of an idle CPU (tens of microseconds, more than the whole call). */
static const std::chrono::microseconds kReadSpin(40);

/* read(2) of stdin; with `poll_only`, EAGAIN instead of blocking when nothing is there. */
static ssize_t read_input(char *p, size_t n, bool poll_only)
{
    if (poll_only) {
        struct pollfd pfd = {0, POLLIN, 0};
        if (poll(&pfd, 1, 0) == 0) {
            errno = EAGAIN;
            return -1;
        }
    }
    return read(0, p, n);
}

/* stdin, read by the reader role's holder, with a buffer of its own (payloads can be large). */
struct Input {
    std::vector<char> buf = std::vector<char>(1 << 16);
    size_t start = 0, end = 0;

    /* Read more bytes; false at EOF or on an error. */
    bool fill()
    {
        if (start > 0) {
            std::memmove(buf.data(), buf.data() + start, end - start);
            end -= start;
            start = 0;
        }
        if (end == buf.size()) {
            buf.resize(buf.size() * 2);
        }
        auto until = std::chrono::steady_clock::now() + kReadSpin;
        for (;;) {
            ssize_t n = read_input(buf.data() + end, buf.size() - end, std::chrono::steady_clock::now() < until);
            if (n > 0) {
                end += (size_t)n;
                return true;
            }
            if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
                continue;
            }
            return false;
        }
    }

    /* The next line without its newline; false at EOF. */
    bool line(std::string &out)
    {
        for (;;) {
            char *nl = (char *)std::memchr(buf.data() + start, '\n', end - start);
            if (nl != nullptr) {
                out.assign(buf.data() + start, nl);
                start = (size_t)(nl - buf.data()) + 1;
                return true;
            }
            if (!fill()) {
                return false;
            }
        }
    }

    /* Exactly n bytes into out; false at EOF. */
    bool bytes(std::string &out, size_t n)
    {
        out.resize(n);
        size_t have = 0;
        while (have < n) {
            if (start == end && !fill()) {
                return false;
            }
            size_t take = std::min(n - have, end - start);
            std::memcpy(&out[have], buf.data() + start, take);
            start += take;
            have += take;
        }
        return true;
    }
};

static std::vector<std::string> split(const char *line, size_t n)
{
    std::vector<std::string> out;
    size_t i = 0;
    while (i < n) {
        while (i < n && (line[i] == ' ' || line[i] == '\n' || line[i] == '\r')) {
            i++;
        }
        size_t start = i;
        while (i < n && line[i] != ' ' && line[i] != '\n' && line[i] != '\r') {
            i++;
        }
        if (i > start) {
            out.emplace_back(line + start, i - start);
        }
    }
    return out;
}

static Input *g_in;

/* ------------------------------------------------------------ requests -- */

/* Read one request; false at EOF.  Only the reader role's holder calls this. */
static bool read_request(Request *&out, std::string &thread)
{
    std::string line;
    for (;;) {
        if (!g_in->line(line)) {
            return false;
        }
        std::vector<std::string> tok = split(line.data(), line.size());
        if (tok.empty()) {
            continue;
        }
        if (tok.size() < 3) {
            reply_error(tok[0], "a request is: <id> <thread> <command> [args...] [#<bytes>]");
            continue;
        }
        Request *r = new Request;
        r->id = tok[0];
        thread = tok[1];
        r->args.assign(tok.begin() + 2, tok.end());
        if (r->args.back().size() > 1 && r->args.back()[0] == '#') {
            size_t len = (size_t)std::strtoull(r->args.back().c_str() + 1, nullptr, 10);
            r->args.pop_back();
            if (!g_in->bytes(r->payload, len)) {
                delete r;
                return false;
            }
            if (r->args.empty()) {
                reply_error(r->id, "a request needs a command");
                delete r;
                continue;
            }
        }
        out = r;
        return true;
    }
}

static void executor_main(Executor *ex);

/*
 * Route a request just read by the role's holder (`self`: its executor, or nullptr for the
 * main thread).  Caller holds sched.mu.  Commands that concern no ACL thread are answered
 * here; a call goes to its thread's executor (the main thread hands the reader role along).
 */
static void route(std::unique_lock<std::mutex> &lock, Request *r, const std::string &thread, Executor *self)
{
    Sched &S = g->sched;
    const std::string &cmd = r->args[0];
    if (cmd == "open_gate" || cmd == "hello" || cmd == "fixtures" || cmd == "quit") {
        lock.unlock();
        if (cmd == "open_gate") {
            int64_t gid = r->args.size() > 1 ? std::strtoll(r->args[1].c_str(), nullptr, 10) : 0;
            reply(r->id, open_gate(gid));
        } else if (cmd == "hello") {
            hello(r->id);
        } else if (cmd == "fixtures") {
            fixtures(r->id);
        } else {
            reply(r->id, ACL_SUCCESS);
            quit(0);
        }
        delete r;
        lock.lock();
        return;
    }
    if (cmd == "bye") { /* the suite thread ended: so does its executor (no answer) */
        auto it = g->executors.find(thread);
        if (it != g->executors.end()) {
            it->second->bye = true;
            it->second->cv.notify_one();
            g->executors.erase(it);
        }
        delete r;
        return;
    }
    Executor *&ex = g->executors[thread];
    if (ex == nullptr) {
        ex = new Executor;
        std::thread(executor_main, ex).detach();
    }
    ex->queue.push_back(r);
    if (self == nullptr) {
        S.owner = ex; /* it reads on once its call is made */
        S.busy = false;
    }
    if (ex != self) {
        ex->cv.notify_one();
    }
}

static void executor_main(Executor *ex)
{
    Sched &S = g->sched;
    std::unique_lock<std::mutex> lock(S.mu);
    for (;;) {
        if (!ex->queue.empty()) {
            Request *r = ex->queue.front();
            ex->queue.pop_front();
            if (S.owner == ex) {
                S.busy = true;
                S.busy_since = std::chrono::steady_clock::now();
            }
            lock.unlock();
            run_request(r);
            lock.lock();
            if (S.owner == ex) {
                S.busy = false;
            }
            continue;
        }
        if (ex->bye) {
            if (S.owner == ex) {
                S.owner = nullptr;
                S.main_cv.notify_one();
            }
            break;
        }
        if (S.owner == ex) {
            Request *r = nullptr;
            std::string thread;
            lock.unlock();
            if (!read_request(r, thread)) {
                quit(0); /* stdin closed: the client is done */
            }
            lock.lock();
            route(lock, r, thread, ex);
            continue;
        }
        ex->cv.wait(lock);
    }
    lock.unlock();
    delete ex;
}

/* The main thread: reads while no executor holds the role, and takes the role over from
 * an executor whose call has lasted kRescueAfter, so that `open_gate` is always read. */
static void main_loop()
{
    Sched &S = g->sched;
    std::unique_lock<std::mutex> lock(S.mu);
    for (;;) {
        if (S.owner == nullptr) {
            Request *r = nullptr;
            std::string thread;
            lock.unlock();
            if (!read_request(r, thread)) {
                quit(0);
            }
            lock.lock();
            route(lock, r, thread, nullptr);
            continue;
        }
        if (S.busy && std::chrono::steady_clock::now() - S.busy_since >= kRescueAfter) {
            S.owner = nullptr; /* the executor finds it has lost the role when its call ends */
            S.busy = false;
            continue;
        }
        S.main_cv.wait_for(lock, kRescueTick);
    }
}

/* -------------------------------------------------------------- start-up -- */

#ifdef ACL_CONFORMANCE_REGISTER_VARIABLES
/* Advise transparent huge pages for the 2 MiB-aligned part of a large variable before its
 * first write: the adapter may start an agent per example, and 17 MiB of shadows then cost
 * a few faults instead of thousands.  Only advice: where huge pages are off, nothing changes. */
static void advise_huge_pages(const void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t start = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    uintptr_t end = ((uintptr_t)p + n) & ~(huge - 1);
    if (end > start) {
        (void)madvise((void *)start, end - start, MADV_HUGEPAGE);
    }
#else
    (void)p;
    (void)n;
#endif
}

static int register_fixtures()
{
    for (size_t k = 0; k < kFixtureCount; k++) {
        /* The fixture pattern: byte i of variable k is (k*37 + i*11 + 0x5A) & 0xFF.  It repeats
         * every 256 bytes (11 is odd), so the first period is computed and then copied. */
        uint8_t *bytes = (uint8_t *)(uintptr_t)kFixtures[k].host;
        size_t size = kFixtures[k].size;
        advise_huge_pages(bytes, size);
        for (size_t i = 0; i < size && i < 256; i++) {
            bytes[i] = (uint8_t)((k * 37 + i * 11 + 0x5A) & 0xFF);
        }
        for (size_t done = 256; done < size; done *= 2) {
            std::memcpy(bytes + done, bytes, std::min(done, size - done));
        }
        int rc = aclConformanceRegisterVariable(kFixtures[k].host, kFixtures[k].name, kFixtures[k].size);
        if (rc != 0) {
            std::fprintf(stderr, "acl-conformance agent: aclConformanceRegisterVariable(%s) returned %d\n",
                         kFixtures[k].name, rc);
            return rc;
        }
    }
    return 0;
}
#endif

/* ----------------------------------------------------------- fork server -- */
/*
 * `acl_conformance_agent --fork-server=<fd>`: the agent starts up (looks up the symbol APIs,
 * registers the fixtures), then makes no ACL call and serves no request itself.  On the
 * SOCK_SEQPACKET socket <fd> it reads `spawn <tag>` messages, each carrying three
 * descriptors (SCM_RIGHTS): the stdin, stdout and stderr of a new agent.  For each it forks
 * a child, which starts a session of its own, takes them as 0, 1 and 2, and serves the
 * protocol as an agent that has just started: its state is the server's, which has made
 * no ACL call.  The server answers `pid <tag> <pid>` (or `error <tag> <errno>`), and
 * `exit <pid> <wait status>` when a child has ended (it reaps them).  At EOF on the socket
 * it exits; its children live on until their own stdin closes.
 *
 * Only for backends that start no thread before their first call (the bundled double): a
 * child of a process with threads has only the forking one.  See ../PROTOCOL.md.
 */

static void server_send(int sock, const std::string &text)
{
    while (send(sock, text.data(), text.size(), MSG_NOSIGNAL) < 0 && errno == EINTR) {
    }
}

/* Serve until EOF (returns the server's exit status), or return -1 in a new child. */
static int fork_server(int sock)
{
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, nullptr);
    int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) {
        std::perror("acl-conformance agent: signalfd");
        return 4;
    }
    for (;;) {
        struct pollfd fds[2] = {{sock, POLLIN, 0}, {sfd, POLLIN, 0}};
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            std::perror("acl-conformance agent: poll");
            return 5;
        }
        if (fds[1].revents & POLLIN) {
            struct signalfd_siginfo info;
            while (read(sfd, &info, sizeof info) == (ssize_t)sizeof info) {
            }
            int status = 0;
            pid_t pid;
            while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
                server_send(sock, "exit " + std::to_string((long long)pid) + " " + std::to_string(status));
            }
        }
        if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
            continue;
        }
        char text[256];
        alignas(struct cmsghdr) char control[CMSG_SPACE(3 * sizeof(int))];
        struct iovec iov = {text, sizeof text - 1};
        struct msghdr msg = {};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
            continue;
        }
        if (n <= 0) {
            return 0; /* the client is gone */
        }
        int given[3];
        int count = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) {
                continue;
            }
            size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < k; i++) {
                int fd;
                std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                if (count < 3) {
                    given[count++] = fd;
                } else {
                    close(fd);
                }
            }
        }
        std::vector<std::string> tok = split(text, (size_t)n);
        std::string tag = tok.size() >= 2 ? tok[1] : "0";
        pid_t pid = -1;
        int error = EINVAL;
        if (tok.size() == 2 && tok[0] == "spawn" && count == 3 && (msg.msg_flags & MSG_CTRUNC) == 0) {
            pid = fork();
            error = errno;
        }
        if (pid == 0) { /* the new agent */
            close(sock);
            close(sfd);
            sigprocmask(SIG_UNBLOCK, &chld, nullptr);
            setsid(); /* a process group of its own: the client kills it with its group */
            for (int i = 0; i < 3; i++) {
                dup2(given[i], i);
            }
            for (int i = 0; i < 3; i++) {
                if (given[i] > 2) {
                    close(given[i]);
                }
            }
            return -1;
        }
        for (int i = 0; i < count; i++) {
            close(given[i]);
        }
        server_send(sock, pid > 0 ? "pid " + tag + " " + std::to_string((long long)pid)
                                  : "error " + tag + " " + std::to_string(error));
    }
}

/* ------------------------------------------------------------------ main -- */

int main(int argc, char **argv)
{
    std::signal(SIGPIPE, SIG_IGN);
    int server = -1;
    for (int i = 1; i < argc; i++) {
        if (std::strncmp(argv[i], "--fork-server=", 14) == 0) {
            server = std::atoi(argv[i] + 14);
        } else {
            std::fprintf(stderr, "usage: %s [--fork-server=<socket fd>]\n", argv[0]);
            return 2;
        }
    }
    g = new State;
    g_in = new Input;
    std::memset(g_not_a_handle, 0xA5, sizeof g_not_a_handle);
    find_symbol_apis();
#ifdef ACL_CONFORMANCE_REGISTER_VARIABLES
    if (register_fixtures() != 0) {
        return 3;
    }
#endif
    if (server >= 0) {
        int status = fork_server(server);
        if (status >= 0) {
            return status;
        }
    }
    main_loop();
}
