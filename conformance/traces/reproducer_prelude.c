#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <acl/acl.h>

#ifdef ACL_CONFORMANCE_REGISTER_VARIABLES
#include <acl_conformance/register.h>
#endif
#ifndef __gm__
#define __gm__ /* plain-compiler build: ordinary globals, declared to the library below */
#endif

#if defined(__GNUC__)
#define MAYBE_UNUSED __attribute__((unused))
#else
#define MAYBE_UNUSED
#endif

static int mismatches = 0;

/* ret must be one of the n codes of ok, or (any_error) any non-zero code but the m of not_ok. */
MAYBE_UNUSED static void check_code(const char *call, aclError ret, const aclError *ok, int n, int any_error,
                       const aclError *not_ok, int m)
{
    for (int i = 0; i < n; i++)
        if (ret == ok[i]) return;
    int excluded = 0;
    for (int i = 0; i < m; i++)
        if (ret == not_ok[i]) excluded = 1;
    if (any_error && ret != ACL_SUCCESS && !excluded) return;
    mismatches++;
    printf("MISMATCH %s\n    returned %d; allowed:", call, (int)ret);
    for (int i = 0; i < n; i++) printf(" %d", (int)ok[i]);
    printf("%s", any_error ? " or any non-zero code" : "");
    if (any_error && m) {
        printf(" but");
        for (int i = 0; i < m; i++) printf(" %d", (int)not_ok[i]);
    }
    printf("\n");
}

/* Each byte must equal the byte at the same position of one of the n arrays. */
MAYBE_UNUSED static void check_bytes(const char *call, const unsigned char *got, size_t var_offset,
                        size_t len, const unsigned char *const *v, int n)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < len; i++) {
        int hit = 0;
        for (int k = 0; k < n && !hit; k++) hit = got[i] == v[k][i];
        if (!hit && bad++ == 0) first = i;
    }
    if (bad == 0) return;
    mismatches++;
    printf("MISMATCH %s\n    %zu of bytes [%zu, %zu) of the variable hold values no copy that "
           "may have run explains; first at byte %zu: 0x%02x, allowed:",
           call, bad, var_offset, var_offset + len, var_offset + first, got[first]);
    for (int k = 0; k < n; k++) printf(" 0x%02x", v[k][first]);
    printf("\n");
}

/* Data too large to embed, read from the data file written beside the program (its path:
   the program's first argument, else the one it was written to); NULL if it cannot be. */
MAYBE_UNUSED static unsigned char *read_data_file(const char *path, size_t size)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = (unsigned char *)malloc(size ? size : 1);
    if (f == NULL || buf == NULL || fread(buf, 1, size, f) != size || fgetc(f) != EOF) {
        printf("cannot read the %zu bytes of data of this program from %s\n", size, path);
        if (f != NULL) fclose(f);
        free(buf);
        return NULL;
    }
    fclose(f);
    return buf;
}

/* The gate: a host function that holds its stream until the program opens it. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open;
} gate_t;
#define GATE_INIT {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0}

MAYBE_UNUSED static void gate_wait(void *arg)
{
    gate_t *g = (gate_t *)arg;
    pthread_mutex_lock(&g->mu);
    while (!g->open) pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

MAYBE_UNUSED static void gate_open(gate_t *g)
{
    pthread_mutex_lock(&g->mu);
    g->open = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

typedef struct { gate_t *gate; int ms; } gate_timer_t;

MAYBE_UNUSED static void *gate_timer(void *arg)
{
    gate_timer_t *t = (gate_timer_t *)arg;
    struct timespec d = {t->ms / 1000, (long)(t->ms % 1000) * 1000000L};
    nanosleep(&d, NULL);
    gate_open(t->gate);
    free(t);
    return NULL;
}

/* Open a gate from another thread after ms milliseconds (the call about to be made waits
   for it, as the recorded call did). */
MAYBE_UNUSED static void gate_open_after(gate_t *g, int ms)
{
    pthread_t th;
    gate_timer_t *t = (gate_timer_t *)malloc(sizeof *t);
    if (t == NULL) { gate_open(g); return; }
    t->gate = g;
    t->ms = ms;
    if (pthread_create(&th, NULL, gate_timer, t) != 0) { free(t); gate_open(g); return; }
    pthread_detach(th);
}

/* Readable memory that is no stream and no event (CANN checks a magic number there). */
MAYBE_UNUSED static uint64_t garbage[16] = {0x0bad0bad0bad0badULL};
