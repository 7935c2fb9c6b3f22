/* SHA-256 on the CPU's SHA extensions, reading straight from a file's memory map.
 *
 * hashlib hashes a buffer already in the CPU's cache as fast as this does (about 1.95 GB/s on
 * one core here), but a file has to get there first: read() copies it from the page cache, which
 * costs a quarter as much again as the hashing (read and hash: 1.42 GB/s). Hashing the page cache
 * in place, through a memory map, spares the copy but ran slower still (1.07 GB/s): each load
 * of a cache line not yet fetched stalls the rounds, and the hardware's prefetcher does not
 * follow the hash across page boundaries. This loop asks for the line 16 blocks ahead of the one
 * it hashes, so the fetch runs while the rounds do (1.72 GB/s from a map, 8 MiB at a time).
 *
 * update_into() also copies what it hashes into a scan's window, from registers it loaded
 * anyway: the scans then search bytes that are in the cache, and no separate copy is made.
 *
 * digest_many() hashes sixteen buffers at once without the SHA extensions, in AVX-512 registers
 * (see many_blocks): for a worker's files read whole, two thirds of the time of eight pairs.
 *
 * A map of a file that shrinks while it is read faults (SIGBUS) past the new end: the loops run
 * under a guard that turns that fault into an OSError, instead of the end of the process.
 *
 * The type exists on x86-64 built by GCC or Clang; Sha256() refuses to be made (RuntimeError)
 * on a CPU without the extensions, and ACCELERATED says which (kitbuild/mapped.py reads that).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KB_SHA 1
#include <cpuid.h>
#include <immintrin.h>
#endif

#if defined(KB_SHA) && !defined(_WIN32)
#define KB_GUARD 1
#include <setjmp.h>
#include <signal.h>
#endif

#ifdef KB_SHA

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static const uint32_t H0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

/* How far ahead of the block being hashed its data is asked for: 16 blocks, about 0.5 µs of
 * rounds, longer than a fetch from memory takes. Shorter ran slower (256 bytes: 1.55 GB/s);
 * longer, no faster. */
#define AHEAD 1024

/* Hash ``n`` 64-byte blocks of each of ``L`` streams (1 or 2) into its state: lane ``l`` hashes
 * ``p[l]`` into ``h[l]`` and, when ``copy[l]`` is given, stores each block there too.
 *
 * The SHA extensions keep the state as two registers, (A, B, E, F) and (C, D, G, H); each
 * sha256rnds2 does two rounds and yields the new (A, B, E, F), and two rounds on, the old
 * (A, B, E, F) is the new (C, D, G, H): so the first of each pair writes the (C, D, G, H)
 * register, which the second reads as such. The message schedule takes four words at a time:
 * W[t..t+3] from W[t-16..t-13] (msg1 adds sigma0 of the words after them), W[t-7..t-4] (an
 * alignr of the two latest) and W[t-2..t-1] (msg2 adds sigma1, its own first two words feeding
 * its last two).
 *
 * Each round waits for the one before it, and sha256rnds2 takes longer to give its result than
 * to accept the next: two files' rounds interleaved keep it busier (2.32 GB/s for the pair on
 * one core, against 1.92 for one file), which is why a worker hashes its large files in pairs.
 * ``L`` is a constant at each call, so the loops over lanes unroll into straight code. */
__attribute__((target("sha,sse4.1,ssse3"), always_inline)) static inline void lanes(const int L, uint32_t *h[], const uint8_t *p[], uint8_t *copy[], size_t n) {
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL); /* big-endian words */
    __m128i abef[3], cdgh[3], abef0[3], cdgh0[3], w0[3], w1[3], w2[3], w3[3], m[3];
    const uint8_t *q[3];
    uint8_t *c[3];
    for (int l = 0; l < L; l++) {
        __m128i t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[l][0]), 0xB1); /* B A D C */
        cdgh[l] = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[l][4]), 0x1B);   /* H G F E */
        abef[l] = _mm_alignr_epi8(t, cdgh[l], 8);
        cdgh[l] = _mm_blend_epi16(cdgh[l], t, 0xF0);
        q[l] = p[l];
        c[l] = copy[l];
    }
    for (; n > 0; n--) {
        for (int l = 0; l < L; l++) {
            _mm_prefetch((const char *)q[l] + AHEAD, _MM_HINT_T0);
            __m128i r0 = _mm_loadu_si128((const __m128i *)q[l]), r1 = _mm_loadu_si128((const __m128i *)(q[l] + 16));
            __m128i r2 = _mm_loadu_si128((const __m128i *)(q[l] + 32)), r3 = _mm_loadu_si128((const __m128i *)(q[l] + 48));
            if (c[l] != NULL) {
                _mm_storeu_si128((__m128i *)c[l], r0);
                _mm_storeu_si128((__m128i *)(c[l] + 16), r1);
                _mm_storeu_si128((__m128i *)(c[l] + 32), r2);
                _mm_storeu_si128((__m128i *)(c[l] + 48), r3);
                c[l] += 64;
            }
            q[l] += 64;
            w0[l] = _mm_shuffle_epi8(r0, swap), w1[l] = _mm_shuffle_epi8(r1, swap);
            w2[l] = _mm_shuffle_epi8(r2, swap), w3[l] = _mm_shuffle_epi8(r3, swap);
            abef0[l] = abef[l], cdgh0[l] = cdgh[l];
        }
/* Four rounds of every lane with its words in ``w`` (the j-th four). */
#define ROUNDS(w, j)                                                                           \
    for (int l = 0; l < L; l++) {                                                              \
        m[l] = _mm_add_epi32(w[l], _mm_loadu_si128((const __m128i *)&K[4 * (j)]));             \
        cdgh[l] = _mm_sha256rnds2_epu32(cdgh[l], abef[l], m[l]);                               \
    }                                                                                          \
    for (int l = 0; l < L; l++)                                                                \
        abef[l] = _mm_sha256rnds2_epu32(abef[l], cdgh[l], _mm_shuffle_epi32(m[l], 0x0E));
/* The next four words of every lane into ``a``, which held the oldest four: a, b, c, d are
 * W[t-16..t-13], W[t-12..t-9], W[t-8..t-5] and W[t-4..t-1]. */
#define NEXT(a, b, c, d)                                                                       \
    for (int l = 0; l < L; l++)                                                                \
        a[l] = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(a[l], b[l]), _mm_alignr_epi8(d[l], c[l], 4)), d[l]);
        ROUNDS(w0, 0)
        ROUNDS(w1, 1)
        ROUNDS(w2, 2)
        ROUNDS(w3, 3)
        for (int j = 4; j < 16; j += 4) {
            NEXT(w0, w1, w2, w3)
            ROUNDS(w0, j)
            NEXT(w1, w2, w3, w0)
            ROUNDS(w1, j + 1)
            NEXT(w2, w3, w0, w1)
            ROUNDS(w2, j + 2)
            NEXT(w3, w0, w1, w2)
            ROUNDS(w3, j + 3)
        }
#undef ROUNDS
#undef NEXT
        for (int l = 0; l < L; l++) {
            abef[l] = _mm_add_epi32(abef[l], abef0[l]);
            cdgh[l] = _mm_add_epi32(cdgh[l], cdgh0[l]);
        }
    }
    for (int l = 0; l < L; l++) {
        __m128i t = _mm_shuffle_epi32(abef[l], 0x1B);      /* F E B A */
        cdgh[l] = _mm_shuffle_epi32(cdgh[l], 0xB1);        /* D C H G */
        _mm_storeu_si128((__m128i *)&h[l][0], _mm_blend_epi16(t, cdgh[l], 0xF0)); /* D C B A */
        _mm_storeu_si128((__m128i *)&h[l][4], _mm_alignr_epi8(cdgh[l], t, 8));    /* H G F E */
    }
}

/* ``n`` blocks of one stream (see lanes). */
__attribute__((target("sha,sse4.1,ssse3"))) static void blocks(uint32_t h[8], const uint8_t *p, size_t n, uint8_t *copy) {
    uint32_t *hs[1] = {h};
    const uint8_t *ps[1] = {p};
    uint8_t *cs[1] = {copy};
    lanes(1, hs, ps, cs, n);
}

/* ``n`` blocks of each of two streams, interleaved (see lanes). */
__attribute__((target("sha,sse4.1,ssse3"))) static void blocks2(uint32_t *h[2], const uint8_t *p[2], uint8_t *copy[2], size_t n) {
    lanes(2, h, p, copy, n);
}

/* ``n`` blocks of each of three streams, interleaved (see lanes). Where sha256rnds2 can take a
 * round every cycle, two streams keep it busy most of the time, three all of it: on an AMD EPYC
 * (Zen 3), 3.29 GB/s on one core for three buffers in the cache against 2.98 for two (1.61 for
 * one). Four ran slower than three (3.05): their state and message words no longer fit the
 * sixteen vector registers. Where it cannot, three run slower than two (side_by_side). */
__attribute__((target("sha,sse4.1,ssse3"))) static void blocks3(uint32_t *h[3], const uint8_t *p[3], size_t n) {
    uint8_t *copy[3] = {NULL, NULL, NULL};
    lanes(3, h, p, copy, n);
}

/* How many files read whole are hashed side by side on the SHA extensions: 3 where three
 * streams run faster per byte than two, else 2. Which is faster is the processor's own: on an AMD
 * EPYC of Zen 3, three ran at 3.29 GB/s on one core against 2.98 for two; on one of Zen 2, at
 * 2.39 against 2.86 (by these timings its sha256rnds2 takes a new round only every other cycle,
 * and two streams already keep it that busy). So both are timed once, on 4 KiB of each stream,
 * when the module is loaded (about 0.1 ms): the fastest of eight rounds of each, the rounds
 * alternating, as the host's load only ever adds time. Three must be faster by 3 % to be taken,
 * so that two close timings do not choose differently from one run to the next. The digests
 * are the same either way. */
#define TRIAL_BLOCKS 64
static int side_by_side(void) {
    static uint8_t data[3][TRIAL_BLOCKS * 64]; /* zeros: the rounds take as long on any bytes */
    uint64_t best2 = UINT64_MAX, best3 = UINT64_MAX;
    uint32_t sink = 0;
    for (int round = 0; round < 8; round++) {
        uint32_t s[3][8];
        for (int l = 0; l < 3; l++)
            memcpy(s[l], H0, sizeof s[l]);
        uint32_t *h[3] = {s[0], s[1], s[2]};
        const uint8_t *p[3] = {data[0], data[1], data[2]};
        uint8_t *copy[2] = {NULL, NULL};
        _mm_lfence();
        uint64_t t0 = __rdtsc();
        _mm_lfence();
        blocks2(h, p, copy, TRIAL_BLOCKS);
        _mm_lfence();
        uint64_t t1 = __rdtsc();
        _mm_lfence();
        blocks3(h, p, TRIAL_BLOCKS);
        _mm_lfence();
        uint64_t t2 = __rdtsc();
        best2 = t1 - t0 < best2 ? t1 - t0 : best2;
        best3 = t2 - t1 < best3 ? t2 - t1 : best3;
        sink ^= s[0][0] ^ s[1][0] ^ s[2][0];
    }
    /* (the states are used, so the rounds are not left out as work without a result) */
    volatile uint32_t used = sink;
    (void)used;
    /* Per byte, three beat two when best3 / 3 < 0.97 * best2 / 2. */
    return best3 * 200 < best2 * 291 ? 3 : 2;
}

static int cpu_has_sha(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 9)) || !(c & (1u << 19))) /* SSSE3, SSE4.1 */
        return 0;
    if (__get_cpuid_max(0, NULL) < 7)
        return 0;
    __cpuid_count(7, 0, a, b, c, d);
    return (b >> 29) & 1; /* SHA */
}

#endif /* KB_SHA */

#ifdef KB_GUARD
/* The guard against a map's fault (see the module comment): the handler jumps back into the
 * loop's caller when this thread is inside one, and otherwise hands the signal to whatever
 * handled it before (the default ends the process, as it would have). */
static _Thread_local sigjmp_buf *guarded;
static struct sigaction before;

static void on_bus(int sig, siginfo_t *info, void *context) {
    (void)info;
    (void)context;
    if (guarded != NULL)
        siglongjmp(*guarded, 1);
    sigaction(SIGBUS, &before, NULL);
    raise(sig);
}
#endif

typedef struct {
    PyObject_HEAD uint32_t h[8];
    uint64_t length; /* bytes hashed, the buffered ones included */
    uint8_t buffer[64];
    size_t used;     /* how much of buffer holds bytes not hashed yet */
} Sha256;

#ifdef KB_SHA
/* Hash ``n`` bytes at ``p`` (copying them to ``copy`` too, when given): the caller's guard is up. */
static void feed(Sha256 *s, const uint8_t *p, size_t n, uint8_t *copy) {
    s->length += n;
    if (s->used > 0) {
        size_t take = 64 - s->used < n ? 64 - s->used : n;
        memcpy(s->buffer + s->used, p, take);
        if (copy != NULL) {
            memcpy(copy, p, take);
            copy += take;
        }
        s->used += take;
        p += take;
        n -= take;
        if (s->used < 64)
            return;
        blocks(s->h, s->buffer, 1, NULL);
        s->used = 0;
    }
    blocks(s->h, p, n / 64, copy);
    size_t whole = n - n % 64;
    memcpy(s->buffer, p + whole, n - whole);
    if (copy != NULL)
        memcpy(copy + whole, p + whole, n - whole);
    s->used = n - whole;
}

/* feed() for two hashes at once: their whole blocks side by side while both have some (when
 * neither holds a partial block), the rest one by one. */
static void feed2(Sha256 *a, const uint8_t *p, size_t n, uint8_t *pc, Sha256 *b, const uint8_t *q, size_t m, uint8_t *qc) {
    if (a->used == 0 && b->used == 0) {
        size_t done = 64 * ((n < m ? n : m) / 64);
        uint32_t *h[2] = {a->h, b->h};
        const uint8_t *from[2] = {p, q};
        uint8_t *to[2] = {pc, qc};
        blocks2(h, from, to, done / 64);
        a->length += done, b->length += done;
        p += done, n -= done, q += done, m -= done;
        pc = pc != NULL ? pc + done : NULL;
        qc = qc != NULL ? qc + done : NULL;
    }
    feed(a, p, n, pc);
    feed(b, q, m, qc);
}
#endif

/* feed() (or, with ``b``, feed2()) under the guard, without the GIL; -1 (and an OSError set)
 * when the bytes faulted, and then the hashes' states are undefined. */
static int guarded_feed(Sha256 *a, const uint8_t *p, size_t n, uint8_t *pc, Sha256 *b, const uint8_t *q, size_t m, uint8_t *qc) {
#ifdef KB_SHA
    volatile int faulted = 0;
#ifdef KB_GUARD
    struct sigaction now;
    if (sigaction(SIGBUS, NULL, &now) != 0 || !(now.sa_flags & SA_SIGINFO) || now.sa_sigaction != on_bus) {
        struct sigaction mine;
        memset(&mine, 0, sizeof mine);
        mine.sa_sigaction = on_bus;
        mine.sa_flags = SA_SIGINFO;
        sigemptyset(&mine.sa_mask);
        before = now;
        if (sigaction(SIGBUS, &mine, NULL) != 0) {
            PyErr_SetFromErrno(PyExc_OSError);
            return -1;
        }
    }
#endif
    Py_BEGIN_ALLOW_THREADS
#ifdef KB_GUARD
    sigjmp_buf here;
    if (sigsetjmp(here, 1) == 0) {
        guarded = &here;
        if (b == NULL)
            feed(a, p, n, pc);
        else
            feed2(a, p, n, pc, b, q, m, qc);
    } else {
        faulted = 1;
    }
    guarded = NULL;
#else
    if (b == NULL)
        feed(a, p, n, pc);
    else
        feed2(a, p, n, pc, b, q, m, qc);
#endif
    Py_END_ALLOW_THREADS
    if (faulted) {
        PyErr_SetString(PyExc_OSError, "the file changed while it was read (its memory map faulted)");
        return -1;
    }
    return 0;
#else
    (void)a, (void)p, (void)n, (void)pc, (void)b, (void)q, (void)m, (void)qc;
    PyErr_SetString(PyExc_RuntimeError, "no SHA extensions");
    return -1;
#endif
}

static int accelerated(void) {
#ifdef KB_SHA
    static int known = -1;
    if (known < 0)
        known = cpu_has_sha();
    return known;
#else
    return 0;
#endif
}

static PyObject *sha_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    if (PyTuple_GET_SIZE(args) != 0 || (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0)) {
        PyErr_SetString(PyExc_TypeError, "Sha256() takes no arguments");
        return NULL;
    }
    if (!accelerated()) {
        PyErr_SetString(PyExc_RuntimeError, "this CPU has no SHA extensions: use hashlib");
        return NULL;
    }
    Sha256 *s = (Sha256 *)type->tp_alloc(type, 0);
    if (s == NULL)
        return NULL;
    memcpy(s->h, H0, sizeof s->h);
    return (PyObject *)s;
}

static PyObject *sha_update(Sha256 *self, PyObject *data) {
    Py_buffer b;
    if (PyObject_GetBuffer(data, &b, PyBUF_SIMPLE) < 0)
        return NULL;
    int r = guarded_feed(self, b.buf, (size_t)b.len, NULL, NULL, NULL, 0, NULL);
    PyBuffer_Release(&b);
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* One side of update_into: data[start:stop] to hash, appended to ``window`` (a bytearray) after
 * window[keep:] is moved to its front (as refill does). */
typedef struct {
    Py_buffer data;
    PyObject *window;
    Py_ssize_t start, n, carry;
    uint8_t *to; /* where the new bytes go in the window */
} Into;

/* Check and take (data, start, stop, window, keep) at ``args``, and make room in the window: 0,
 * or -1 with an exception set and nothing taken. */
static int into_begin(Into *x, PyObject *const *args) {
    if (!PyByteArray_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "update_into(data, start, stop, window: bytearray, keep)");
        return -1;
    }
    Py_ssize_t start = PyLong_AsSsize_t(args[1]), stop = PyLong_AsSsize_t(args[2]), keep = PyLong_AsSsize_t(args[4]);
    if (PyErr_Occurred())
        return -1;
    PyObject *window = args[3];
    if (((PyByteArrayObject *)window)->ob_exports > 0) {
        PyErr_SetString(PyExc_BufferError, "update_into: the window has a view on it");
        return -1;
    }
    if (PyObject_GetBuffer(args[0], &x->data, PyBUF_SIMPLE) < 0)
        return -1;
    Py_ssize_t len = PyByteArray_GET_SIZE(window);
    if (start < 0 || stop < start || stop > x->data.len || keep < 0 || keep > len) {
        PyBuffer_Release(&x->data);
        PyErr_SetString(PyExc_ValueError, "update_into: start, stop or keep out of range");
        return -1;
    }
    x->window = window, x->start = start, x->n = stop - start, x->carry = len - keep;
    /* Grown first if it must (a resize keeps the front, and what is kept is at the back), the
     * kept bytes moved to the front; into_end cuts it to their length and the new bytes'. */
    if (PyByteArray_Resize(window, len > x->carry + x->n ? len : x->carry + x->n) < 0) {
        PyBuffer_Release(&x->data);
        return -1;
    }
    char *d = PyByteArray_AS_STRING(window);
    memmove(d, d + keep, (size_t)x->carry);
    x->to = (uint8_t *)d + x->carry;
    return 0;
}

/* Release what into_begin took and size the window: with the new bytes if ``ok``, else with
 * what was kept alone (at its front). 0, or -1 if the resize failed. */
static int into_end(Into *x, int ok) {
    PyBuffer_Release(&x->data);
    return PyByteArray_Resize(x->window, ok ? x->carry + x->n : x->carry);
}

static const uint8_t *into_from(Into *x) {
    return (const uint8_t *)x->data.buf + x->start;
}

/* update_into(data, start, stop, window, keep): hash data[start:stop] and append it to the
 * window (see Into). */
static PyObject *sha_update_into(Sha256 *self, PyObject *const *args, Py_ssize_t nargs) {
    Into x;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "update_into(data, start, stop, window: bytearray, keep)");
        return NULL;
    }
    if (into_begin(&x, args) < 0)
        return NULL;
    int ok = guarded_feed(self, into_from(&x), (size_t)x.n, x.to, NULL, NULL, 0, NULL) == 0;
    if (into_end(&x, ok) < 0 || !ok)
        return NULL;
    Py_RETURN_NONE;
}

#ifdef KB_SHA
/* The final state of a hash whose state is ``h`` after ``length`` bytes, the last ``used`` of
 * them (fewer than 64) at ``buffer`` not hashed yet: the padding is hashed on a copy. */
static void finish(const uint32_t state[8], const uint8_t *buffer, size_t used, uint64_t length, uint32_t h[8]) {
    uint8_t tail[128] = {0};
    if (h != state) /* callers may finish a state in place; memcpy's regions must not overlap */
        memcpy(h, state, 8 * sizeof h[0]);
    memcpy(tail, buffer, used);
    tail[used] = 0x80;
    size_t total = used + 9 <= 64 ? 64 : 128;
    uint64_t bits = length * 8;
    for (int i = 0; i < 8; i++)
        tail[total - 1 - i] = (uint8_t)(bits >> (8 * i));
    blocks(h, tail, total / 64, NULL);
}
#endif

#ifdef KB_SHA
/* A final state in hex, as a str. */
static PyObject *hex_text(const uint32_t h[8]) {
    static const char digits[] = "0123456789abcdef";
    char hex[64];
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 8; k++)
            hex[8 * i + k] = digits[(h[i] >> (28 - 4 * k)) & 15];
    return PyUnicode_FromStringAndSize(hex, 64);
}

/* The hash's digest in hex, as a str (the padding on a copy: ``s`` can go on being fed). */
static PyObject *hex_of(const Sha256 *s) {
    uint32_t h[8];
    finish(s->h, s->buffer, s->used, s->length, h);
    return hex_text(h);
}
#endif

static PyObject *sha_hexdigest(Sha256 *self, PyObject *unused) {
    (void)unused;
#ifdef KB_SHA
    return hex_of(self);
#else
    PyErr_SetString(PyExc_RuntimeError, "no SHA extensions");
    return NULL;
#endif
}

static PyMethodDef sha_methods[] = {
    {"update", (PyCFunction)sha_update, METH_O, "Hash the bytes of a buffer."},
    {"update_into", (PyCFunction)(void (*)(void))sha_update_into, METH_FASTCALL,
     "Hash data[start:stop], appending it to window after dropping window[:keep]."},
    {"hexdigest", (PyCFunction)sha_hexdigest, METH_NOARGS, "The digest of the bytes so far, as 64 hex digits."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject Sha256Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kitbuild._sha256.Sha256",
    .tp_basicsize = sizeof(Sha256),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "SHA-256 on the CPU's SHA extensions (see kitbuild/_sha256.c).",
    .tp_methods = sha_methods,
    .tp_new = sha_new,
};

/* update_pair(a, data, start, stop, window, keep, b, data, start, stop, window, keep): two
 * update_into calls in one, their blocks hashed side by side (see lanes). When the bytes fault,
 * both windows keep only what they kept and both hashes are spoilt. */
static PyObject *update_pair(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 12 || !PyObject_TypeCheck(args[0], &Sha256Type) || !PyObject_TypeCheck(args[6], &Sha256Type)) {
        PyErr_SetString(PyExc_TypeError, "update_pair(a: Sha256, data, start, stop, window, keep, b: Sha256, data, start, stop, window, keep)");
        return NULL;
    }
    if (args[4] == args[10] || args[0] == args[6]) {
        PyErr_SetString(PyExc_ValueError, "update_pair: the two sides need their own hash and window");
        return NULL;
    }
    Into x, y;
    if (into_begin(&x, args + 1) < 0)
        return NULL;
    if (into_begin(&y, args + 7) < 0) {
        into_end(&x, 0);
        return NULL;
    }
    int ok = guarded_feed((Sha256 *)args[0], into_from(&x), (size_t)x.n, x.to, (Sha256 *)args[6], into_from(&y), (size_t)y.n, y.to) == 0;
    int sized = into_end(&x, ok) == 0;
    sized = into_end(&y, ok) == 0 && sized;
    if (!ok || !sized)
        return NULL;
    Py_RETURN_NONE;
}


/* The hex SHA-256 of each of the ``count`` (2 or 3) buffers in ``args``, as a tuple, their blocks
 * hashed side by side (see lanes). Two: in pairs (feed2). Three: the whole blocks all three have
 * (blocks3), then the two longer ones' further blocks in pairs, the rest of the shortest alone.
 * ``usage`` names the call in a TypeError. */
static PyObject *digest_side_by_side(PyObject *const *args, Py_ssize_t nargs, int count, const char *usage) {
    if (nargs != count) {
        PyErr_SetString(PyExc_TypeError, usage);
        return NULL;
    }
#ifdef KB_SHA
    if (!accelerated()) {
        PyErr_SetString(PyExc_RuntimeError, "this CPU has no SHA extensions: use hashlib");
        return NULL;
    }
    Py_buffer v[3];
    int got = 0;
    for (; got < count; got++)
        if (PyObject_GetBuffer(args[got], &v[got], PyBUF_SIMPLE) < 0)
            break;
    PyObject *out = NULL;
    if (got == count) {
        Sha256 s[3];
        const uint8_t *p[3];
        size_t left[3];
        for (int k = 0; k < count; k++) {
            memset(&s[k], 0, sizeof s[k]);
            memcpy(s[k].h, H0, sizeof s[k].h);
            p[k] = v[k].buf;
            left[k] = (size_t)v[k].len;
        }
        Py_BEGIN_ALLOW_THREADS
        if (count == 2) {
            feed2(&s[0], p[0], left[0], NULL, &s[1], p[1], left[1], NULL);
        } else {
            size_t least = left[0] < left[1] ? left[0] : left[1];
            least = (least < left[2] ? least : left[2]) / 64 * 64;
            uint32_t *h[3] = {s[0].h, s[1].h, s[2].h};
            blocks3(h, p, least / 64);
            for (int k = 0; k < 3; k++) {
                s[k].length += least;
                p[k] += least;
                left[k] -= least;
            }
            /* The one with least left (less than a block now) alone, the other two as a pair. */
            int a = left[0] <= left[1] && left[0] <= left[2] ? 0 : left[1] <= left[2] ? 1 : 2;
            int b = a == 0 ? 1 : 0, c = a == 2 ? 1 : 2;
            feed(&s[a], p[a], left[a], NULL);
            feed2(&s[b], p[b], left[b], NULL, &s[c], p[c], left[c], NULL);
        }
        Py_END_ALLOW_THREADS
        out = PyTuple_New(count);
        for (int k = 0; out != NULL && k < count; k++) {
            PyObject *hex = hex_of(&s[k]);
            if (hex == NULL)
                Py_CLEAR(out);
            else
                PyTuple_SET_ITEM(out, k, hex);
        }
    }
    for (int k = 0; k < got; k++)
        PyBuffer_Release(&v[k]);
    return out;
#else
    PyErr_SetString(PyExc_RuntimeError, "no SHA extensions");
    return NULL;
#endif
}

/* digest_pair(a, b) -> (hex digest of a, hex digest of b): two buffers' SHA-256, their blocks
 * hashed side by side (see lanes): 17 % less time than one after the other, for a worker that
 * reads a kit's files of a few hundred KiB two at a time. */
static PyObject *digest_pair(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    return digest_side_by_side(args, nargs, 2, "digest_pair(a, b)");
}

/* digest_three(a, b, c) -> their three hex digests, hashed side by side: where three streams
 * hash faster than two on this processor (SIDE_BY_SIDE, below), files read whole go three at a
 * time this way (kitbuild/mapped.py). */
static PyObject *digest_three(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    return digest_side_by_side(args, nargs, 3, "digest_three(a, b, c)");
}

#ifdef KB_SHA
/* Sixteen buffers hashed at once, a 32-bit word of each in every AVX-512 register: SHA-256's
 * rounds in plain vector arithmetic (rotates, three-way logic, adds), for sixteen messages in
 * the instructions one would take. The SHA extensions are faster for one stream, but they
 * issue a round at a time; on this project's machine, hashing sixteen buffers in the cache ran
 * at 2.6 to 2.9 GB/s on one core this way, against 1.7 to 1.8 for two streams interleaved on the
 * SHA extensions (see lanes). It pays only with many buffers of about the same length, such as
 * the records of a bench read whole: digest_many falls back to the SHA extensions for the few
 * that outlast the others. */
#define MANY 16
/* Below this many buffers still going, the rest are finished on the SHA extensions. */
#define MANY_FROM 8

static const uint8_t ZERO_BLOCK[64];

/* ``n`` blocks of each of the 16 lanes into ``st`` (word i of every lane in st[i]): lane l reads
 * its b-th block at from[l] + step[l] * b; the states of lanes not in ``active`` are left as
 * they were (their reads are of a block of zeros, step 0). */
__attribute__((target("avx512f,avx512bw"))) static void many_blocks(__m512i st[8], const uint8_t *const from[MANY], const size_t step[MANY], size_t n, __mmask16 active) {
    const __m512i swap = _mm512_broadcast_i32x4(_mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3));
    for (size_t b = 0; b < n; b++) {
        /* The lanes' blocks, a row each, turned into columns: W[t] holds word t of every lane
         * (unpacks within 128-bit lanes, then the 128-bit lanes gathered). */
        __m512i r[MANY], u[MANY], v[MANY], W[16];
        for (int l = 0; l < MANY; l++)
            r[l] = _mm512_loadu_si512((const void *)(from[l] + step[l] * b));
        for (int i = 0; i < MANY; i += 2) {
            u[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
            u[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
        }
        for (int i = 0; i < MANY; i += 4) {
            v[i] = _mm512_unpacklo_epi64(u[i], u[i + 2]);
            v[i + 1] = _mm512_unpackhi_epi64(u[i], u[i + 2]);
            v[i + 2] = _mm512_unpacklo_epi64(u[i + 1], u[i + 3]);
            v[i + 3] = _mm512_unpackhi_epi64(u[i + 1], u[i + 3]);
        }
        /* v[4q + j] holds, in its 128-bit lane k, word 4k + j of lanes 4q to 4q + 3. */
        for (int j = 0; j < 4; j++) {
            __m512i a0 = _mm512_shuffle_i32x4(v[j], v[4 + j], 0x44), a1 = _mm512_shuffle_i32x4(v[j], v[4 + j], 0xEE);
            __m512i b0 = _mm512_shuffle_i32x4(v[8 + j], v[12 + j], 0x44), b1 = _mm512_shuffle_i32x4(v[8 + j], v[12 + j], 0xEE);
            W[j] = _mm512_shuffle_epi8(_mm512_shuffle_i32x4(a0, b0, 0x88), swap);
            W[4 + j] = _mm512_shuffle_epi8(_mm512_shuffle_i32x4(a0, b0, 0xDD), swap);
            W[8 + j] = _mm512_shuffle_epi8(_mm512_shuffle_i32x4(a1, b1, 0x88), swap);
            W[12 + j] = _mm512_shuffle_epi8(_mm512_shuffle_i32x4(a1, b1, 0xDD), swap);
        }
        __m512i a = st[0], b_ = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6], h = st[7];
        for (int t = 0; t < 64; t++) {
            __m512i w;
            if (t < 16) {
                w = W[t];
            } else {
                __m512i w15 = W[(t - 15) & 15], w2 = W[(t - 2) & 15];
                __m512i s0 = _mm512_ternarylogic_epi32(_mm512_ror_epi32(w15, 7), _mm512_ror_epi32(w15, 18), _mm512_srli_epi32(w15, 3), 0x96);
                __m512i s1 = _mm512_ternarylogic_epi32(_mm512_ror_epi32(w2, 17), _mm512_ror_epi32(w2, 19), _mm512_srli_epi32(w2, 10), 0x96);
                w = W[t & 15] = _mm512_add_epi32(_mm512_add_epi32(W[t & 15], s0), _mm512_add_epi32(W[(t - 7) & 15], s1));
            }
            __m512i s1 = _mm512_ternarylogic_epi32(_mm512_ror_epi32(e, 6), _mm512_ror_epi32(e, 11), _mm512_ror_epi32(e, 25), 0x96);
            __m512i ch = _mm512_ternarylogic_epi32(e, f, g, 0xCA); /* e ? f : g */
            __m512i t1 = _mm512_add_epi32(_mm512_add_epi32(h, s1), _mm512_add_epi32(ch, _mm512_add_epi32(w, _mm512_set1_epi32((int)K[t]))));
            __m512i s0 = _mm512_ternarylogic_epi32(_mm512_ror_epi32(a, 2), _mm512_ror_epi32(a, 13), _mm512_ror_epi32(a, 22), 0x96);
            __m512i maj = _mm512_ternarylogic_epi32(a, b_, c, 0xE8); /* the majority of a, b, c */
            h = g, g = f, f = e, e = _mm512_add_epi32(d, t1), d = c, c = b_, b_ = a;
            a = _mm512_add_epi32(t1, _mm512_add_epi32(s0, maj));
        }
        __m512i now[8] = {a, b_, c, d, e, f, g, h};
        for (int i = 0; i < 8; i++)
            st[i] = _mm512_mask_add_epi32(st[i], active, st[i], now[i]);
    }
}

/* The states of the 16 lanes, word by word, into h[lane][word]. */
__attribute__((target("avx512f"))) static void many_states(const __m512i st[8], uint32_t h[MANY][8]) {
    uint32_t words[8][MANY];
    for (int i = 0; i < 8; i++)
        _mm512_storeu_si512((void *)words[i], st[i]);
    for (int l = 0; l < MANY; l++)
        for (int i = 0; i < 8; i++)
            h[l][i] = words[i][l];
}

__attribute__((target("avx512f"))) static void many_start(__m512i st[8]) {
    for (int i = 0; i < 8; i++)
        st[i] = _mm512_set1_epi32((int)H0[i]);
}

/* The SHA-256 of each of the ``n`` (at most MANY) buffers at p[l], len[l] bytes, into h[l]:
 * their whole blocks side by side while at least MANY_FROM lanes have some left (each stretch
 * as long as the shortest lane's rest), then what is left of each lane, its last partial block
 * and its padding on the SHA extensions, one lane after another. */
static void hash_many(int n, const uint8_t *const p[], const size_t len[], uint32_t h[MANY][8]) {
    __m512i st[8];
    const uint8_t *from[MANY];
    size_t step[MANY], done[MANY] = {0};
    __mmask16 active = 0;
    for (int l = 0; l < n; l++)
        if (len[l] >= 64)
            active |= (__mmask16)(1u << l);
    many_start(st);
    while (__builtin_popcount(active) >= MANY_FROM) {
        size_t most = SIZE_MAX;
        for (int l = 0; l < MANY; l++) {
            if (active & (1u << l)) {
                size_t left = len[l] / 64 - done[l];
                most = left < most ? left : most;
                from[l] = p[l] + 64 * done[l], step[l] = 64;
            } else {
                from[l] = ZERO_BLOCK, step[l] = 0;
            }
        }
        many_blocks(st, from, step, most, active);
        for (int l = 0; l < MANY; l++)
            if (active & (1u << l)) {
                done[l] += most;
                if (done[l] == len[l] / 64)
                    active &= (__mmask16)~(1u << l);
            }
    }
    many_states(st, h);
    for (int l = 0; l < n; l++) {
        blocks(h[l], p[l] + 64 * done[l], len[l] / 64 - done[l], NULL);
        size_t whole = len[l] - len[l] % 64;
        finish(h[l], p[l] + whole, len[l] - whole, (uint64_t)len[l], h[l]);
    }
}

static int many_runs(void) {
    static int known = -1;
    if (known < 0) {
        __builtin_cpu_init();
        known = accelerated() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    }
    return known;
}

/* digest_many(buffers) -> list of hex digests: the SHA-256 of each of up to 16 bytes objects,
 * hashed side by side (see many_blocks); only where MANY is set. */
static PyObject *digest_many(PyObject *module, PyObject *arg) {
    (void)module;
    if (!many_runs()) {
        PyErr_SetString(PyExc_RuntimeError, "digest_many needs the SHA extensions and AVX-512BW");
        return NULL;
    }
    if (!PyTuple_Check(arg) || PyTuple_GET_SIZE(arg) > MANY) {
        PyErr_SetString(PyExc_TypeError, "digest_many(buffers: a tuple of at most 16 bytes)");
        return NULL;
    }
    int n = (int)PyTuple_GET_SIZE(arg);
    const uint8_t *p[MANY];
    size_t len[MANY];
    for (int l = 0; l < n; l++) {
        /* bytes alone: immutable, so the GIL can go while they are read */
        PyObject *item = PyTuple_GET_ITEM(arg, l);
        if (!PyBytes_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "digest_many(buffers: a tuple of at most 16 bytes)");
            return NULL;
        }
        p[l] = (const uint8_t *)PyBytes_AS_STRING(item);
        len[l] = (size_t)PyBytes_GET_SIZE(item);
    }
    uint32_t h[MANY][8];
    Py_BEGIN_ALLOW_THREADS
    hash_many(n, p, len, h);
    Py_END_ALLOW_THREADS
    PyObject *out = PyList_New(n);
    if (out == NULL)
        return NULL;
    for (int l = 0; l < n; l++) {
        PyObject *s = hex_text(h[l]);
        if (s == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, l, s);
    }
    return out;
}
#endif

#if defined(KB_SHA) && !defined(_WIN32)
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#define KB_FILES 1

/* The file ``name`` in the folder ``dir_fd`` read whole into ``buf`` (room for limit + 1 bytes):
 * its length, or -1 when it is not a plain name, not a regular file, larger than ``limit``, or
 * cannot be opened or read (its caller's full pass reports why). Opened as kitbuild.kitfs opens
 * a file: without following a link, and without blocking on a FIFO put in its place. */
static Py_ssize_t read_small(int dir_fd, const char *name, Py_ssize_t limit, uint8_t *buf) {
    if (name[0] == '\0' || strchr(name, '/') != NULL || strchr(name, '\\') != NULL || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return -1;
    int fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    Py_ssize_t got = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > limit) {
        close(fd);
        return -1;
    }
    /* Up to one byte past the size it had, until the end: a file that grew since is left to
     * the full pass; one that shrank is what it now holds, as a read of it would be. */
    Py_ssize_t want = (Py_ssize_t)st.st_size + 1;
    while (got < want) {
        ssize_t n = read(fd, buf + got, (size_t)(want - got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            got = -1;
            break;
        }
        if (n == 0)
            break;
        got += n;
    }
    close(fd);
    return got > st.st_size ? -1 : got;
}

/* hash_files(dir_fd, names, limit, test, arg) -> (sizes, digests): for each name in the folder
 * ``dir_fd``, the file read whole (see read_small) and, when ``test(its bytes, arg)`` is true, its
 * size and its raw SHA-256 (32 bytes each, one after another); -1 and 32 zero bytes for every
 * other file, which the caller scans its own way.
 *
 * This is verify's head start over a kit of many small files (kitbuild.prescan) in one call per
 * folder's run of files: file by file in Python, the opens and reads, the test and the hash
 * cost twice what their system calls alone do. The test sees a memoryview of this call's own
 * buffer, valid only while it runs: one that keeps it is an error. */
static PyObject *hash_files(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 5 || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "hash_files(dir_fd, names: list[str], limit, test, arg)");
        return NULL;
    }
    if (!accelerated()) {
        PyErr_SetString(PyExc_RuntimeError, "this CPU has no SHA extensions: use hashlib");
        return NULL;
    }
    long dir_fd = PyLong_AsLong(args[0]);
    Py_ssize_t limit = PyLong_AsSsize_t(args[2]);
    if (PyErr_Occurred())
        return NULL;
    if (dir_fd < 0 || dir_fd > INT_MAX || limit < 0 || limit > (1 << 30)) {
        PyErr_SetString(PyExc_ValueError, "hash_files: dir_fd or limit out of range");
        return NULL;
    }
    PyObject *names = args[1], *test = args[3], *arg = args[4];
    Py_ssize_t count = PyList_GET_SIZE(names);
    PyObject *sizes = PyList_New(count);
    PyObject *digests = PyBytes_FromStringAndSize(NULL, 32 * count);
    uint8_t *buf = PyMem_Malloc((size_t)limit + 1);
    if (sizes == NULL || digests == NULL || buf == NULL) {
        Py_XDECREF(sizes);
        Py_XDECREF(digests);
        PyMem_Free(buf);
        return PyErr_NoMemory();
    }
    uint8_t *out = (uint8_t *)PyBytes_AS_STRING(digests);
    memset(out, 0, 32 * (size_t)count);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *name = PyList_GET_ITEM(names, i);
        if (!PyUnicode_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "hash_files: each name must be a str");
            goto fail;
        }
        PyObject *raw = PyUnicode_EncodeFSDefault(name);
        if (raw == NULL)
            goto fail;
        Py_ssize_t n = -1;
        if ((Py_ssize_t)strlen(PyBytes_AS_STRING(raw)) == PyBytes_GET_SIZE(raw)) { /* no NUL in it */
            Py_BEGIN_ALLOW_THREADS
            n = read_small((int)dir_fd, PyBytes_AS_STRING(raw), limit, buf);
            Py_END_ALLOW_THREADS
        }
        Py_DECREF(raw);
        if (n >= 0) {
            PyObject *view = PyMemoryView_FromMemory((char *)buf, n, PyBUF_READ);
            if (view == NULL)
                goto fail;
            PyObject *argv[2] = {view, arg};
            PyObject *said = PyObject_Vectorcall(test, argv, 2, NULL);
            int kept = Py_REFCNT(view) > 1;
            Py_DECREF(view);
            if (said == NULL)
                goto fail;
            int yes = PyObject_IsTrue(said);
            Py_DECREF(said);
            if (yes < 0)
                goto fail;
            if (kept) {
                PyErr_SetString(PyExc_RuntimeError, "hash_files: the test kept the view of the file's bytes");
                goto fail;
            }
            if (yes) {
                uint32_t h[8];
                size_t whole = (size_t)n - (size_t)n % 64;
                memcpy(h, H0, sizeof h);
                blocks(h, buf, whole / 64, NULL);
                finish(h, buf + whole, (size_t)n - whole, (uint64_t)n, h);
                for (int w = 0; w < 8; w++)
                    for (int k = 0; k < 4; k++)
                        out[32 * i + 4 * w + k] = (uint8_t)(h[w] >> (24 - 8 * k));
            } else {
                n = -1;
            }
        }
        PyObject *size = PyLong_FromSsize_t(n);
        if (size == NULL)
            goto fail;
        PyList_SET_ITEM(sizes, i, size);
    }
    PyMem_Free(buf);
    PyObject *both = PyTuple_Pack(2, sizes, digests);
    Py_DECREF(sizes);
    Py_DECREF(digests);
    return both;
fail:
    PyMem_Free(buf);
    Py_DECREF(sizes);
    Py_DECREF(digests);
    return NULL;
}
#endif

static PyMethodDef module_methods[] = {
    {"update_pair", (PyCFunction)(void (*)(void))update_pair, METH_FASTCALL,
     "Two Sha256.update_into calls in one, their blocks hashed side by side."},
    {"digest_three", (PyCFunction)(void (*)(void))digest_three, METH_FASTCALL, "Three buffers' hex SHA-256, hashed side by side."},
    {"digest_pair", (PyCFunction)(void (*)(void))digest_pair, METH_FASTCALL,
     "The hex SHA-256 of two buffers, hashed side by side."},
#ifdef KB_SHA
    {"digest_many", digest_many, METH_O, "The hex SHA-256 of each of up to 16 bytes objects, hashed side by side."},
#endif
#ifdef KB_FILES
    {"hash_files", (PyCFunction)(void (*)(void))hash_files, METH_FASTCALL,
     "Read each small file of a folder; the size and raw SHA-256 of those that pass a test."},
#endif
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "kitbuild._sha256", NULL, -1, module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__sha256(void) {
    if (PyType_Ready(&Sha256Type) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&Sha256Type);
    if (PyModule_AddObject(m, "Sha256", (PyObject *)&Sha256Type) < 0 || PyModule_AddIntConstant(m, "ACCELERATED", accelerated()) < 0
#ifdef KB_SHA
        || PyModule_AddIntConstant(m, "MANY", many_runs() ? MANY : 0) < 0
        || PyModule_AddIntConstant(m, "SIDE_BY_SIDE", accelerated() ? side_by_side() : 0) < 0
#else
        || PyModule_AddIntConstant(m, "SIDE_BY_SIDE", 0) < 0
        || PyModule_AddIntConstant(m, "MANY", 0) < 0
#endif
    ) {
        Py_DECREF(&Sha256Type);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
