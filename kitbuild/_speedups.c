/* Byte scans on the hot path of build and verify, in C.
 *
 * Every function here has a pure-Python twin (kitbuild/speedups.py) that gives the same answer;
 * this module only makes it cheaper. Scanning a kit file costs, besides SHA-256, a census of
 * printed digests, counts of placeholders and rule words, and a search for the anchors of leak
 * shapes. Done with bytes.translate, bytes.count and an automaton, each of those passes costs
 * about what hashing does; here each is a fraction of it, because 16 bytes are classified at
 * once (SSE2, part of every x86-64) and only the rare interesting positions are looked at one
 * by one. Literal rules are replaced here too: memmem jumps between a literal's occurrences and
 * two table lookups test each one's boundary, where a regex with lookarounds ran at a fifth of
 * the speed.
 *
 * Every function takes any object with the buffer protocol (bytes, bytearray, memoryview, mmap)
 * and releases the GIL while it scans, so threads may share a core's other work.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#ifdef _WIN32
#include <io.h>
#define KB_READ(fd, buf, n) _read((fd), (buf), (unsigned int)((n) > INT_MAX ? INT_MAX : (n)))
#else
#include <unistd.h>
#define KB_READ(fd, buf, n) read((fd), (buf), (size_t)(n))
#endif

#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define KB_SSE2 1
#endif

#define DIGEST_LENGTH 64
#define MAX_NEEDLES 16

static unsigned char HEX[256];
static unsigned char LABEL[256]; /* [A-Za-z0-9-]: a domain label's bytes */
static unsigned char ALPHA[256];
/* The boundaries of a literal rule (the regex pieces in kitbuild/speedups.py, byte for byte). */
static unsigned char PATH_BEFORE[256]; /* [A-Za-z0-9_.~/-]: would make a path the tail of a longer one */
static unsigned char PATH_END[256];    /* [/\s"'`,;:()\[\]{}<>|\\]: may follow a path prefix */
static unsigned char NAME_BEFORE[256]; /* [A-Za-z0-9_.-]: would make a name part of a longer one */
static unsigned char NAME_CHAR[256];   /* [A-Za-z0-9_-]: would continue a name */
static unsigned char ALNUM[256];       /* [A-Za-z0-9]: after a '.', starts a further label */

static void init_tables(void) {
    for (int c = 0; c < 256; c++) {
        int digit = c >= '0' && c <= '9';
        int upper = c >= 'A' && c <= 'Z';
        int lower = c >= 'a' && c <= 'z';
        HEX[c] = digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
        LABEL[c] = digit || upper || lower || c == '-';
        ALPHA[c] = upper || lower;
        ALNUM[c] = digit || upper || lower;
        NAME_CHAR[c] = ALNUM[c] || c == '_' || c == '-';
        NAME_BEFORE[c] = NAME_CHAR[c] || c == '.';
        PATH_BEFORE[c] = NAME_BEFORE[c] || c == '~' || c == '/';
        /* \s in a bytes pattern is ASCII white space alone: space and \t \n \v \f \r. */
        PATH_END[c] = c == ' ' || (c >= '\t' && c <= '\r') || (c != 0 && strchr("/\"'`,;:()[]{}<>|\\", c) != NULL);
    }
}

/* A growable array of Py_ssize_t, filled without the GIL and turned into a list with it. */
typedef struct {
    Py_ssize_t *items;
    Py_ssize_t len;
    Py_ssize_t cap;
    int failed;
} Offsets;

static void offsets_push(Offsets *o, Py_ssize_t value) {
    if (o->failed)
        return;
    if (o->len == o->cap) {
        Py_ssize_t cap = o->cap ? o->cap * 2 : 64;
        Py_ssize_t *grown = realloc(o->items, (size_t)cap * sizeof(Py_ssize_t));
        if (grown == NULL) {
            o->failed = 1;
            return;
        }
        o->items = grown;
        o->cap = cap;
    }
    o->items[o->len++] = value;
}

/* The offsets as a list of tuples of ``width`` ints each (width 1: a list of ints). */
static PyObject *offsets_list(Offsets *o, int width) {
    PyObject *out = NULL;
    if (o->failed) {
        PyErr_NoMemory();
        goto done;
    }
    out = PyList_New(o->len / width);
    if (out == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < o->len / width; i++) {
        PyObject *item;
        if (width == 1) {
            item = PyLong_FromSsize_t(o->items[i]);
        } else {
            item = PyTuple_New(width);
            if (item != NULL) {
                for (int k = 0; k < width; k++) {
                    PyObject *v = PyLong_FromSsize_t(o->items[i * width + k]);
                    if (v == NULL) {
                        Py_CLEAR(item);
                        break;
                    }
                    PyTuple_SET_ITEM(item, k, v);
                }
            }
        }
        if (item == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, i, item);
    }
done:
    free(o->items);
    o->items = NULL;
    return out;
}

/* Clamp [start, end) to [0, n) the way slicing does. */
static void clamp(Py_ssize_t n, Py_ssize_t *start, Py_ssize_t *end) {
    if (*start < 0) {
        *start += n;
        if (*start < 0)
            *start = 0;
    }
    if (*end < 0) {
        *end += n;
        if (*end < 0)
            *end = 0;
    }
    if (*end > n)
        *end = n;
    if (*start > n)
        *start = n;
}

#ifdef KB_SSE2
/* A bit per byte of the 16 at p: set where the byte is a hex digit (either case). */
static inline int hex_mask(const unsigned char *p) {
    __m128i v = _mm_loadu_si128((const __m128i *)p);
    __m128i digit = _mm_sub_epi8(v, _mm_set1_epi8('0'));
    __m128i is_digit = _mm_cmpeq_epi8(_mm_min_epu8(digit, _mm_set1_epi8(9)), digit);
    __m128i letter = _mm_sub_epi8(_mm_or_si128(v, _mm_set1_epi8(0x20)), _mm_set1_epi8('a'));
    __m128i is_letter = _mm_cmpeq_epi8(_mm_min_epu8(letter, _mm_set1_epi8(5)), letter);
    return _mm_movemask_epi8(_mm_or_si128(is_digit, is_letter));
}
#endif

/* The walk's step: any run of DIGEST_LENGTH hex digits, [s, s + 64), holds the 16 bytes at one
 * of its stops, one in [s, s + 48]: 49 positions in a row, so one of them is a stop. */
#define HEX_STEP (DIGEST_LENGTH - 16)

/* Runs of at least DIGEST_LENGTH hex digits, pushed as (start, end) pairs.
 *
 * The walk tests 16 bytes at every HEX_STEP (48) and stops only where all 16 are hex; from there
 * the run is measured both ways, and the walk resumes at its end. Ordinary text and
 * binary data rarely hold 16 hex digits in a row, so most of the data is never loaded: binary
 * data ran 2.6 times faster than with a test every 16 bytes. With ``first`` set, the walk stops
 * at the first run. */
static void scan_hex_runs(const unsigned char *d, Py_ssize_t n, Offsets *out, int first) {
    Py_ssize_t i = 0;
    while (i < n) {
        int whole;
#ifdef KB_SSE2
        if (n - i >= 16) {
            whole = hex_mask(d + i) == 0xFFFF;
        } else
#endif
        {
            Py_ssize_t stop = n - i >= 16 ? i + 16 : n;
            whole = stop - i == 16;
            for (Py_ssize_t k = i; k < stop && whole; k++)
                whole = HEX[d[k]];
            if (stop - i < 16) {
                /* The tail: a run reaching the end has a stop at least 16 bytes before the
                 * end, or is shorter than a digest. */
                break;
            }
        }
        if (!whole) {
            i += HEX_STEP;
            continue;
        }
        Py_ssize_t s = i, e = i + 16;
#ifdef KB_SSE2
        /* 16 bytes at a time while all are hex (a digest's run is four such blocks), then
         * byte by byte: records dense with digests scanned a quarter faster. */
        while (s >= 16 && hex_mask(d + s - 16) == 0xFFFF)
            s -= 16;
        while (n - e >= 16 && hex_mask(d + e) == 0xFFFF)
            e += 16;
#endif
        while (s > 0 && HEX[d[s - 1]])
            s--;
        while (e < n && HEX[d[e]])
            e++;
        if (e - s >= DIGEST_LENGTH) {
            offsets_push(out, s);
            offsets_push(out, e);
            if (first)
                return;
        }
        i = e;
    }
}

static PyObject *hex_runs(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    Offsets out = {0};
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    scan_hex_runs((const unsigned char *)view.buf, view.len, &out, 0);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return offsets_list(&out, 2);
}

/* Occurrences of each needle that start in data[start:stop): for each needle apart, the
 * non-overlapping ones found from the left, as ``data.count(needle, start, stop + len(needle) -
 * 1)`` counts them.
 *
 * All needles are counted in one walk, 16 positions at a time. */
typedef struct {
    const unsigned char *bytes[MAX_NEEDLES];
    Py_ssize_t lens[MAX_NEEDLES];
    Py_ssize_t next[MAX_NEEDLES]; /* where a needle's next occurrence may start (no overlaps) */
    Py_ssize_t found[MAX_NEEDLES];
    unsigned char bucket[MAX_NEEDLES]; /* the candidate scan's bucket bit for each (all ones: any) */
    int count;
} Needles;

#ifdef KB_SSE2
/* The needles' first two bytes as vector tests, grouped by first byte: group g's candidates
 * are where firsts[g] stands and one of seconds[from[g]..from[g+1]) follows it, or where
 * firsts[g] stands at all if one of its needles is that byte alone (``alone[g]`` all ones). */
typedef struct {
    __m128i firsts[MAX_NEEDLES], alone[MAX_NEEDLES], seconds[MAX_NEEDLES];
    int from[MAX_NEEDLES + 1];
    int groups;
} Pairs;

static void pairs_of(const Needles *w, Pairs *t) {
    unsigned char first[MAX_NEEDLES], second[MAX_NEEDLES][MAX_NEEDLES];
    int nsecond[MAX_NEEDLES] = {0}, alone[MAX_NEEDLES] = {0};
    int groups = 0;
    for (int k = 0; k < w->count; k++) {
        int g = 0, j = 0;
        while (g < groups && first[g] != w->bytes[k][0])
            g++;
        if (g == groups)
            first[groups++] = w->bytes[k][0];
        if (w->lens[k] == 1) {
            alone[g] = 1;
            continue;
        }
        while (j < nsecond[g] && second[g][j] != w->bytes[k][1])
            j++;
        if (j == nsecond[g])
            second[g][nsecond[g]++] = w->bytes[k][1];
    }
    int at = 0;
    for (int g = 0; g < groups; g++) {
        t->firsts[g] = _mm_set1_epi8((char)first[g]);
        t->alone[g] = _mm_set1_epi8(alone[g] ? -1 : 0);
        t->from[g] = at;
        for (int j = 0; j < nsecond[g]; j++)
            t->seconds[at++] = _mm_set1_epi8((char)second[g][j]);
    }
    t->from[groups] = at;
    t->groups = groups;
}

/* A bit per position of the 64 bytes at p where some needle's first two bytes stand (reads one
 * byte past them). Four blocks of 16 a step, unrolled by the compiler: the loops over groups and
 * second bytes then cost once per 64 bytes (2.3 GB/s a block at a time, 5.8 four at a time, on
 * the 12 shape anchors). */
#define PAIR_BLOCKS 4
static inline unsigned long long pair_mask(const unsigned char *p, const Pairs *t) {
    __m128i a[PAIR_BLOCKS], b[PAIR_BLOCKS], hit[PAIR_BLOCKS];
    for (int k = 0; k < PAIR_BLOCKS; k++) {
        a[k] = _mm_loadu_si128((const __m128i *)(p + 16 * k));
        b[k] = _mm_loadu_si128((const __m128i *)(p + 16 * k + 1));
        hit[k] = _mm_setzero_si128();
    }
    for (int g = 0; g < t->groups; g++) {
        __m128i any[PAIR_BLOCKS];
        for (int k = 0; k < PAIR_BLOCKS; k++)
            any[k] = t->alone[g];
        for (int j = t->from[g]; j < t->from[g + 1]; j++)
            for (int k = 0; k < PAIR_BLOCKS; k++)
                any[k] = _mm_or_si128(any[k], _mm_cmpeq_epi8(b[k], t->seconds[j]));
        for (int k = 0; k < PAIR_BLOCKS; k++)
            hit[k] = _mm_or_si128(hit[k], _mm_and_si128(_mm_cmpeq_epi8(a[k], t->firsts[g]), any[k]));
    }
    unsigned long long mask = 0;
    for (int k = 0; k < PAIR_BLOCKS; k++)
        mask |= (unsigned long long)(unsigned)_mm_movemask_epi8(hit[k]) << (16 * k);
    return mask;
}

/* Candidates for all needles at once, found a whole step of 64 bytes at a time: a candidate is
 * a position where some needle may stand, every needle's position is one, and each is then
 * confirmed, or not, needle by needle. Two scans find them:
 *
 * - on any x86-64 (SSE2), where a needle's first two bytes stand (pair_mask, above);
 * - with AVX2, where its first four bytes stand, by nibble tables (the "Teddy" method of
 *   Hyperscan and of Rust's aho-corasick): the needles go into 8 buckets, and for each of the
 *   first four bytes two 16-entry tables give, by the byte's low and by its high nibble, the
 *   buckets with a needle that holds such a nibble there. A byte shuffle looks up 32 bytes'
 *   nibbles at once, so a step costs the same for 2 needles or 16: count_starts on a rewritten
 *   record ran at 1.4 GB/s with a compare per needle and byte, 4.5 this way. Each candidate
 *   comes with its buckets, and only their needles are compared there;
 * - with AVX-512BW, by the same tables, 64 bytes' nibbles at once (candidates_avx512).
 *
 * Every false candidate costs a branch and a compare, so the prefix tested is long: in text,
 * ``re`` of ``records`` also starts ``reads``, and ``/ro`` of the anchor ``/root/`` starts every
 * ``/rows-`` of a path. With three bytes the leak anchors were found at 3.2 GB/s in workload
 * B's records, with four at 8.8; the fourth costs the counts a tenth (5.1 to 4.5 GB/s). */
typedef struct {
    Pairs pairs;
    unsigned char lo[4][16], hi[4][16]; /* [byte of the needle][nibble]: bucket bits */
} Prefixes;

/* The candidates in the 64 * ``steps`` bytes at p (read up to three bytes past them), as offsets
 * from p in ascending order, into ``at``, each with the buckets that may stand there in ``bits``
 * (all ones where the scan has no buckets); how many. */
typedef int (*CandidatesFn)(const unsigned char *p, Py_ssize_t steps, const Prefixes *t, unsigned short *at, unsigned char *bits);

static int candidates_sse2(const unsigned char *p, Py_ssize_t steps, const Prefixes *t, unsigned short *at, unsigned char *bits) {
    int n = 0;
    for (Py_ssize_t s = 0; s < steps; s++)
        for (unsigned long long mask = pair_mask(p + 64 * s, &t->pairs); mask; mask &= mask - 1) {
            bits[n] = 0xFF;
            at[n++] = (unsigned short)(64 * s + __builtin_ctzll(mask));
        }
    return n;
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define KB_AVX2 1
/* The candidates of step ``s`` (a bit each in ``mask``), appended at ``n`` of ``at`` with their
 * buckets (``buckets``: the step's bucket bytes); the new count. */
static inline int listed(unsigned long long mask, const unsigned char *buckets, Py_ssize_t s, unsigned short *at, unsigned char *bits, int n) {
    for (; mask; mask &= mask - 1) {
        int k = __builtin_ctzll(mask);
        bits[n] = buckets[k];
        at[n++] = (unsigned short)(64 * s + k);
    }
    return n;
}

/* Compiled for AVX2 by itself alone, so that the module still loads, and runs the SSE2 scan,
 * on a processor without it. */
__attribute__((target("avx2"))) static int candidates_avx2(const unsigned char *p, Py_ssize_t steps, const Prefixes *t, unsigned short *at, unsigned char *bits) {
    __m256i lo[4], hi[4];
    for (int j = 0; j < 4; j++) {
        lo[j] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)t->lo[j]));
        hi[j] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)t->hi[j]));
    }
    const __m256i nibble = _mm256_set1_epi8(0x0f), zero = _mm256_setzero_si256();
    int n = 0;
    for (Py_ssize_t s = 0; s < steps; s++) {
        const unsigned char *q = p + 64 * s;
        __m256i m0 = _mm256_set1_epi8(-1), m1 = m0;
        for (int j = 0; j < 4; j++) {
            __m256i v0 = _mm256_loadu_si256((const __m256i *)(q + j)), v1 = _mm256_loadu_si256((const __m256i *)(q + 32 + j));
            m0 = _mm256_and_si256(m0, _mm256_and_si256(_mm256_shuffle_epi8(lo[j], _mm256_and_si256(v0, nibble)),
                                                         _mm256_shuffle_epi8(hi[j], _mm256_and_si256(_mm256_srli_epi16(v0, 4), nibble))));
            m1 = _mm256_and_si256(m1, _mm256_and_si256(_mm256_shuffle_epi8(lo[j], _mm256_and_si256(v1, nibble)),
                                                         _mm256_shuffle_epi8(hi[j], _mm256_and_si256(_mm256_srli_epi16(v1, 4), nibble))));
        }
        unsigned long long none = (unsigned long long)(unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(m0, zero)) |
                                  (unsigned long long)(unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(m1, zero)) << 32;
        unsigned long long mask = ~none;
        if (mask) {
            unsigned char buckets[64];
            _mm256_storeu_si256((__m256i *)buckets, m0);
            _mm256_storeu_si256((__m256i *)(buckets + 32), m1);
            n = listed(mask, buckets, s, at, bits, n);
        }
    }
    return n;
}

/* The same scan on processors with AVX-512BW: one register holds the whole step of 64 bytes,
 * so a step takes half the loads, shifts and shuffles of the AVX2 scan, and its candidates come
 * as a mask (no compare with zero and two movemasks). On workload B's records in the cache,
 * count_starts went from 3.2 to 4.6 GB/s and the leak anchors' leftmost_starts from 4.0 to 6.6;
 * verify B on one job from 1.37 to 1.26 s of CPU (medians of ten, alternating). Where the
 * scans are a small part of the work (workloads A and C), the two ran alike. */
__attribute__((target("avx512f,avx512bw"))) static int candidates_avx512(const unsigned char *p, Py_ssize_t steps, const Prefixes *t, unsigned short *at, unsigned char *bits) {
    __m512i lo[4], hi[4];
    for (int j = 0; j < 4; j++) {
        lo[j] = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)t->lo[j]));
        hi[j] = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)t->hi[j]));
    }
    const __m512i nibble = _mm512_set1_epi8(0x0f);
    int n = 0;
    for (Py_ssize_t s = 0; s < steps; s++) {
        const unsigned char *q = p + 64 * s;
        __m512i m = _mm512_set1_epi8(-1);
        for (int j = 0; j < 4; j++) {
            __m512i v = _mm512_loadu_si512((const void *)(q + j));
            m = _mm512_and_si512(m, _mm512_and_si512(_mm512_shuffle_epi8(lo[j], _mm512_and_si512(v, nibble)),
                                                     _mm512_shuffle_epi8(hi[j], _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble))));
        }
        unsigned long long mask = _mm512_test_epi8_mask(m, m);
        if (mask) {
            unsigned char buckets[64];
            _mm512_storeu_si512((void *)buckets, m);
            n = listed(mask, buckets, s, at, bits, n);
        }
    }
    return n;
}
#endif

static CandidatesFn candidates = candidates_sse2;

#ifdef KB_AVX2
/* Which needles share a bucket decides how many false candidates a scan meets: a bucket's table
 * takes, at each of the four positions, any byte whose low nibble is one of its needles' low
 * nibbles and whose high nibble is one of their high ones, and any byte at all past its
 * shortest needle's end. The leak anchors, split in order of their bytes as they once were,
 * put "10." (any fourth byte) with "172.", "192.168." and ":/Users": that bucket took '1',
 * then any of "079/ '", then any of ".2>U%^...", at about 300 positions of each of workload
 * B's records (one in 1,500), where hex digits and numbers abound. Each was tried against all
 * fifteen anchors, and the anchors came to a fifth of the record walk's time (361 ms/GB, 280
 * without them); with /mnt/ left out, the split met 2,400 a record and the walk took 502.
 *
 * So the needles are put where a model of that cost is least: a bucket's cost is the share of
 * positions its table takes, the product over the four positions of the weight of the bytes it
 * takes there over all bytes' weight; the weights (init_weights) say roughly how often a byte
 * stands in a record (JSON of paths, names, numbers and digests). Starting from the split in
 * order of bytes, a needle moves to another bucket, or two needles trade buckets, while that
 * lowers the sum over the buckets. The result depends on the needles alone, and is kept (see
 * buckets_of) for the next search with the same ones. */
static double WEIGHT_TOTAL;
/* TAKEN[h][half][lo]: the weight of the bytes with high nibble h and a low nibble in ``lo``,
 * the low nibbles 0-7 (half 0) or 8-15 (half 1) as a byte of bits: a table's take at one
 * position is then two look-ups for each of its high nibbles, not one for each byte. */
static unsigned short TAKEN[16][2][256];

/* A byte's weight: how often it stands in a record, roughly. Digits weigh most and the hex
 * letters next, as records print digests, numbers and times: with every letter and digit alike,
 * the model kept "10." with "172." and "192.168.", a bucket that then took "102", "172", "192"
 * and the like in the hex of B's records (246 positions a record), and the walk took 320 ms/GB
 * against 274 with "10." in a bucket alone (the fastest of 20 rounds, file by file). */
static void init_weights(void) {
    unsigned weight[256];
    double total = 0;
    for (int c = 0; c < 256; c++) {
        weight[c] = c >= 0x80 ? 1 : c < 0x20 ? (c == '\n' || c == '\t' || c == '\r' ? 8 : 1) : 8;
        if (c >= '0' && c <= '9')
            weight[c] = 96;
        else if (c >= 'a' && c <= 'f')
            weight[c] = 48;
        else if (c >= 'a' && c <= 'z')
            weight[c] = 32;
        else if (c != 0 && strchr("\",:/.-_ ", c) != NULL)
            weight[c] = 24;
        total += weight[c];
    }
    WEIGHT_TOTAL = total;
    for (int h = 0; h < 16; h++)
        for (int half = 0; half < 2; half++)
            for (int bits = 0; bits < 256; bits++) {
                unsigned sum = 0;
                for (int l = 0; l < 8; l++)
                    if (bits & (1 << l))
                        sum += weight[h << 4 | (8 * half + l)];
                TAKEN[h][half][bits] = (unsigned short)sum; /* at most 8 * 96 */
            }
}

/* The nibbles a bucket's table takes at each position, a bit each (all: past a needle's end). */
typedef struct {
    unsigned short lo[4], hi[4];
} Takes;

static void takes_add(Takes *a, const unsigned char *bytes, Py_ssize_t len) {
    for (int j = 0; j < 4; j++) {
        a->lo[j] |= j < len ? (unsigned short)(1u << (bytes[j] & 15)) : 0xFFFF;
        a->hi[j] |= j < len ? (unsigned short)(1u << (bytes[j] >> 4)) : 0xFFFF;
    }
}

/* The model's share of positions where the bucket whose needles are ``of[k] == b`` takes a
 * candidate (0 for a bucket without needles). */
static double bucket_cost(const Needles *w, const unsigned char *of, int b) {
    Takes a = {{0}, {0}};
    for (int k = 0; k < w->count; k++)
        if (of[k] == b)
            takes_add(&a, w->bytes[k], w->lens[k]);
    double cost = a.lo[0] ? 1.0 : 0.0;
    for (int j = 0; j < 4 && cost > 0; j++) {
        if (a.lo[j] == 0xFFFF && a.hi[j] == 0xFFFF)
            continue; /* any byte */
        unsigned sum = 0, lo = a.lo[j];
        for (unsigned h = a.hi[j]; h; h &= h - 1)
            sum += TAKEN[__builtin_ctz(h)][0][lo & 0xFF] + TAKEN[__builtin_ctz(h)][1][lo >> 8];
        cost *= sum / WEIGHT_TOTAL;
    }
    return cost;
}

/* A move or a trade is taken only if it lowers the sum by more than this share of it: the model
 * is rough, and a search that chased rounding would only take longer. */
#define BUCKET_GAIN 1e-6

/* For each needle of ``w``, its bucket among ``count`` (see the comment above init_weights). */
static void assign_buckets(const Needles *w, int count, unsigned char *of) {
    /* The split in order of bytes: needles sharing a bucket share their first bytes. */
    int order[MAX_NEEDLES];
    for (int k = 0; k < w->count; k++) {
        int at = k;
        while (at > 0) {
            int o = order[at - 1];
            Py_ssize_t common = w->lens[o] < w->lens[k] ? w->lens[o] : w->lens[k];
            int c = memcmp(w->bytes[o], w->bytes[k], (size_t)common);
            if (c < 0 || (c == 0 && w->lens[o] <= w->lens[k]))
                break;
            order[at] = o;
            at--;
        }
        order[at] = k;
    }
    int per = (w->count + count - 1) / count;
    for (int r = 0; r < w->count; r++)
        of[order[r]] = (unsigned char)(r / per);
    if (w->count <= count || count <= 1)
        return; /* a bucket each, or one for all: nothing to choose */
    double cost[8];
    for (int b = 0; b < count; b++)
        cost[b] = bucket_cost(w, of, b);
    /* Each pass takes the best move or trade there is; every one lowers the sum, so the passes
     * end (and at most 64 run, whatever the rounding). */
    for (int pass = 0; pass < 64; pass++) {
        double total = 0, best = 0;
        for (int b = 0; b < count; b++)
            total += cost[b];
        int bk = -1, bb = -1, bt = -1;
        for (int k = 0; k < w->count; k++) {
            int from = of[k];
            for (int b = 0; b < count; b++) {
                if (b == from)
                    continue;
                of[k] = (unsigned char)b;
                double gain = cost[from] + cost[b] - bucket_cost(w, of, from) - bucket_cost(w, of, b);
                if (gain > best)
                    best = gain, bk = k, bb = b, bt = -1;
                for (int t = 0; t < w->count; t++) {
                    if (of[t] != b || t == k)
                        continue;
                    of[t] = (unsigned char)from;
                    gain = cost[from] + cost[b] - bucket_cost(w, of, from) - bucket_cost(w, of, b);
                    if (gain > best)
                        best = gain, bk = k, bb = b, bt = t;
                    of[t] = (unsigned char)b;
                }
                of[k] = (unsigned char)from;
            }
        }
        if (bk < 0 || best <= BUCKET_GAIN * total)
            break;
        int from = of[bk];
        of[bk] = (unsigned char)bb;
        if (bt >= 0)
            of[bt] = (unsigned char)from;
        cost[from] = bucket_cost(w, of, from);
        cost[bb] = bucket_cost(w, of, bb);
    }
}

/* The assignments made in this thread, looked up by their needles' first four bytes (all that
 * the tables read), those needles' lengths up to four, and the count of buckets: every search
 * of a set of needles runs with the same ones, once per file or per block, and making one takes
 * tens of microseconds (a record walk over a file of 400 KiB, about 150). A plan of 1,000 box
 * names counts them in 63 sets of 16, every file; so the keeping holds 256, four for each of
 * 64 slots chosen by the key's hash, each slot's oldest replaced first. (Thread-local: the
 * searches run without the GIL.) */
#define ASSIGNMENT_SLOTS 64
#define ASSIGNMENT_WAYS 4
typedef struct {
    int count, needles;
    unsigned char lens[MAX_NEEDLES], bytes[MAX_NEEDLES][4];
} AssignmentKey;
typedef struct {
    AssignmentKey key;
    unsigned char of[MAX_NEEDLES];
} Assignment;
static _Thread_local Assignment assignments[ASSIGNMENT_SLOTS][ASSIGNMENT_WAYS];
static _Thread_local unsigned char assignments_next[ASSIGNMENT_SLOTS];

/* The key of ``w``'s needles spread over ``count`` buckets: what their tables depend on. */
static void key_of(const Needles *w, int count, AssignmentKey *key) {
    memset(key, 0, sizeof *key);
    key->count = count, key->needles = w->count;
    for (int k = 0; k < w->count; k++) {
        key->lens[k] = (unsigned char)(w->lens[k] < 4 ? w->lens[k] : 4);
        memcpy(key->bytes[k], w->bytes[k], key->lens[k]);
    }
}

static void buckets_of(const Needles *w, const AssignmentKey *key, unsigned char *of) {
    uint32_t hash = 2166136261u; /* FNV-1a over the key's bytes */
    for (size_t i = 0; i < sizeof *key; i++)
        hash = (hash ^ ((const unsigned char *)key)[i]) * 16777619u;
    Assignment *slot = assignments[hash % ASSIGNMENT_SLOTS];
    for (int i = 0; i < ASSIGNMENT_WAYS; i++)
        if (slot[i].key.count != 0 && memcmp(&slot[i].key, key, sizeof *key) == 0) {
            memcpy(of, slot[i].of, (size_t)w->count);
            return;
        }
    assign_buckets(w, key->count, of);
    unsigned char *next = &assignments_next[hash % ASSIGNMENT_SLOTS];
    slot[*next].key = *key; /* (count is 1 at least: a slot never filled has 0) */
    memcpy(slot[*next].of, of, (size_t)w->count);
    *next = (unsigned char)((*next + 1) % ASSIGNMENT_WAYS);
}

/* The tables last made in this thread, whole: the same few sets of needles search file after
 * file, and for a file of 2 KiB, hashing the key to find the buckets (above) and filling the
 * tables from them cost more than the search: a tenth of verify C's CPU, most of it in the
 * worker of its head start, which asks quiet() of three sets for each file. These few are
 * compared whole, most often at once; a set not among them takes the way above. */
#define MADE_KEPT 8
typedef struct {
    AssignmentKey key;
    int first;
    unsigned char of[MAX_NEEDLES];
    unsigned char lo[4][16], hi[4][16]; /* the bits of these buckets alone */
} MadeTables;
static _Thread_local MadeTables made[MADE_KEPT];
static _Thread_local int made_next;

/* w's needles into the ``count`` buckets from ``first`` on, added to t's nibble tables. */
static void bucket_tables(Needles *w, Prefixes *t, int first, int count) {
    AssignmentKey key;
    key_of(w, count, &key);
    MadeTables *m = NULL;
    for (int i = 0; i < MADE_KEPT && m == NULL; i++)
        if (made[i].first == first && memcmp(&made[i].key, &key, sizeof key) == 0) /* (one never made has count 0) */
            m = &made[i];
    if (m == NULL) {
        m = &made[made_next];
        made_next = (made_next + 1) % MADE_KEPT;
        m->key = key;
        m->first = first;
        buckets_of(w, &key, m->of);
        memset(m->lo, 0, sizeof m->lo);
        memset(m->hi, 0, sizeof m->hi);
        for (int k = 0; k < w->count; k++) {
            unsigned char bit = (unsigned char)(1u << (first + m->of[k]));
            for (int j = 0; j < 4; j++)
                for (int x = 0; x < 16; x++) {
                    /* Past a short needle's end, any byte will do. */
                    if (j >= w->lens[k] || (w->bytes[k][j] & 15) == x)
                        m->lo[j][x] |= bit;
                    if (j >= w->lens[k] || (w->bytes[k][j] >> 4) == x)
                        m->hi[j][x] |= bit;
                }
        }
    }
    for (int k = 0; k < w->count; k++)
        w->bucket[k] = (unsigned char)(1u << (first + m->of[k]));
    for (int j = 0; j < 4; j++)
        for (int x = 0; x < 16; x++) {
            t->lo[j][x] |= m->lo[j][x];
            t->hi[j][x] |= m->hi[j][x];
        }
}
#endif

/* The tables ``use`` reads (the scan is read once per search: kernel() may change it between). */
static void prefixes_of(Needles *w, Prefixes *t, CandidatesFn use) {
#ifdef KB_AVX2
    if (use == candidates_avx2 || use == candidates_avx512) {
        memset(t->lo, 0, sizeof t->lo);
        memset(t->hi, 0, sizeof t->hi);
        bucket_tables(w, t, 0, 8);
        return;
    }
#endif
    (void)use;
    for (int k = 0; k < w->count; k++)
        w->bucket[k] = 0xFF;
    pairs_of(w, &t->pairs);
}

/* Candidates are collected this many bytes at a time, then confirmed. */
#define SPAN 2048

/* The next span of whole steps at d[i] (see FOR_CANDIDATES): where to read it (``*p``, which is
 * ``pad`` for the last positions), how many steps, and the offsets below ``*upto`` that are
 * candidates here; how far the walk moves on. */
static inline Py_ssize_t next_span(const unsigned char *d, Py_ssize_t i, Py_ssize_t limit, Py_ssize_t end, unsigned char pad[128],
                                   const unsigned char **p, Py_ssize_t *steps, Py_ssize_t *upto) {
    Py_ssize_t room = limit - i < end - i - 3 ? limit - i : end - i - 3;
    *steps = room >= 64 ? (room / 64 < SPAN / 64 ? room / 64 : SPAN / 64) : 0;
    *p = d + i;
    *upto = 64 * *steps;
    if (*steps > 0)
        return *upto;
    Py_ssize_t have = end - i < 67 ? end - i : 67;
    memset(pad, 0, 128);
    memcpy(pad, d + i, (size_t)have);
    *p = pad;
    *steps = 1;
    *upto = limit - i < 64 ? limit - i : 64;
    return 64;
}

/* The candidates among the positions [i, limit) of d, with every byte read below ``end``
 * (limit <= end), handed to ``confirm`` in ascending order: a macro, so that the compiler
 * inlines each caller's confirmation into the loop. Whole steps are read in place; the last
 * positions, whose steps would read past ``end``, from a copy padded with zeros (a false
 * candidate there is refused by the confirmation, which reads only d). */
#define FOR_CANDIDATES(d, i, limit, end, use, t, confirm, stop_early)                            \
    do {                                                                                         \
        unsigned short at_[SPAN];                                                                \
        unsigned char bits_[SPAN];                                                               \
        unsigned char pad_[128];                                                                 \
        while ((i) < (limit)) {                                                                  \
            const unsigned char *p_;                                                             \
            Py_ssize_t steps_, upto_;                                                            \
            Py_ssize_t span_ = next_span((d), (i), (limit), (end), pad_, &p_, &steps_, &upto_);  \
            int found_ = (use)(p_, steps_, (t), at_, bits_);                                     \
            for (int j_ = 0; j_ < found_ && at_[j_] < upto_; j_++)                               \
                confirm((i) + at_[j_], bits_[j_]);                                               \
            if (stop_early)                                                                      \
                break;                                                                           \
            (i) += span_;                                                                        \
        }                                                                                        \
    } while (0)
#endif

/* Needle k at d[i], if it stands there whole and does not overlap its last counted occurrence. */
static inline void count_one(const unsigned char *d, Py_ssize_t n, Py_ssize_t i, Needles *w, int k, unsigned char bits) {
    Py_ssize_t len = w->lens[k];
    if ((bits & w->bucket[k]) && i >= w->next[k] && len <= n - i && d[i] == w->bytes[k][0] && memcmp(d + i, w->bytes[k], (size_t)len) == 0) {
        w->found[k]++;
        w->next[k] = i + len;
    }
}

/* Every needle at d[i] among those of the buckets in ``bits``. */
static inline void count_at(const unsigned char *d, Py_ssize_t n, Py_ssize_t i, Needles *w, unsigned char bits) {
    for (int k = 0; k < w->count; k++)
        count_one(d, n, i, w, k, bits);
}

#ifdef KB_SSE2
/* Each bucket's needles, a bit each. */
static void needles_by_bucket(const Needles *w, unsigned short *own) {
    for (int j = 0; j < 8; j++)
        own[j] = 0;
    for (int k = 0; k < w->count; k++)
        for (int j = 0; j < 8; j++)
            if (w->bucket[k] & (1u << j))
                own[j] |= (unsigned short)(1u << k);
}

/* The needles of the buckets in ``bits`` (most often one). */
static inline unsigned needles_in(unsigned bits, const unsigned short *own) {
    unsigned which = 0;
    for (; bits; bits &= bits - 1)
        which |= own[__builtin_ctz(bits)];
    return which;
}

/* A needle's first (up to) 8 bytes as one word, and the mask of those bytes in a word loaded
 * from the data: one compare instead of a call to memcmp for the whole of a short needle. (The
 * mask keeps a word's low bytes, its first on x86, the only processors this code is built for.) */
static void needle_words(Needles *w, unsigned long long *word, unsigned long long *mask) {
    for (int k = 0; k < w->count; k++) {
        size_t m = w->lens[k] < 8 ? (size_t)w->lens[k] : 8;
        word[k] = 0;
        memcpy(&word[k], w->bytes[k], m);
        mask[k] = m == 8 ? ~0ULL : (1ULL << (8 * m)) - 1;
    }
}

/* The 8 bytes at d[i] as a word, in ``v``, if the data holds them before ``stop`` (whether it
 * does: stands_at's ``whole``). */
static inline int word_at(const unsigned char *d, Py_ssize_t i, Py_ssize_t stop, unsigned long long *v) {
    if (stop - i < 8)
        return 0;
    memcpy(v, d + i, 8);
    return 1;
}

static inline unsigned long long word_of(const unsigned char *p) {
    unsigned long long v;
    memcpy(&v, p, 8);
    return v;
}

/* Whether needle k stands whole at d[i] and ends by ``stop``: its first 8 bytes compared as one
 * word (``v``, the 8 bytes at d[i], when ``whole``: the data holds them before ``stop``), then,
 * for a longer needle, its last 8 bytes and (past 16) the 8 after its first as words too, so
 * that a needle of up to 24 bytes needs no call to memcmp: with the words the rules wrote in
 * workload B's records ("withheld-2026-09-29", "earlier-run/"), the record walk took 357 ms/GB
 * with memcmp for the rest and 320 without (the fastest of 20 rounds each, alternating), and
 * verify B 0.484 s against 0.489 (medians of 16). */
static inline int stands_at(const unsigned char *d, Py_ssize_t i, Py_ssize_t stop, const Needles *w, int k, unsigned long long v, int whole,
                            const unsigned long long *word, const unsigned long long *mask) {
    Py_ssize_t len = w->lens[k];
    if (len > stop - i)
        return 0;
    if (!whole)
        return memcmp(d + i, w->bytes[k], (size_t)len) == 0;
    if ((v & mask[k]) != word[k])
        return 0;
    if (len <= 8)
        return 1;
    /* (Past the first 8 bytes the needle and the data both hold ``len`` of them.) */
    const unsigned char *b = w->bytes[k];
    if (word_of(d + i + len - 8) != word_of(b + len - 8))
        return 0;
    if (len <= 16)
        return 1;
    if (len <= 24)
        return word_of(d + i + 8) == word_of(b + 8);
    return memcmp(d + i + 8, b + 8, (size_t)(len - 16)) == 0;
}

/* count_one for the needles in ``which`` (a bit each), compared a word at a time where the data
 * holds 8 bytes at i. On workload B's records a candidate stands every 80 bytes or so, nearly
 * every one a whole word the rules wrote: the test of every needle's bucket at each, and a call
 * to memcmp for each, were most of what a count cost there. */
static inline void count_which(const unsigned char *d, Py_ssize_t n, Py_ssize_t i, Needles *w, unsigned which,
                               const unsigned long long *word, const unsigned long long *mask) {
    unsigned long long v = 0;
    int whole = word_at(d, i, n, &v);
    for (; which; which &= which - 1) {
        int k = __builtin_ctz(which);
        if (i >= w->next[k] && stands_at(d, i, n, w, k, v, whole, word, mask)) {
            w->found[k]++;
            w->next[k] = i + w->lens[k];
        }
    }
}

/* The needles in ``which`` (a bit each) that stand at d[p] and end by ``stop``, pushed in index
 * order. Only the needles of a candidate's buckets are tried, a word at a time: trying each of
 * the leak anchors in turn, with a call to memcmp for those whose first byte matched, cost the
 * record walk 40 to 100 ns a candidate. */
static inline void confirm_which(const unsigned char *d, Py_ssize_t p, Py_ssize_t stop, const Needles *w, unsigned which,
                                 const unsigned long long *word, const unsigned long long *mask, Offsets *out) {
    unsigned long long v = 0;
    int whole = word_at(d, p, stop, &v);
    for (; which; which &= which - 1) {
        int k = __builtin_ctz(which);
        if (stands_at(d, p, stop, w, k, v, whole, word, mask)) {
            offsets_push(out, p);
            offsets_push(out, k);
        }
    }
}
#endif

static void scan_needles(const unsigned char *d, Py_ssize_t n, Py_ssize_t start, Py_ssize_t stop, Needles *w) {
    Py_ssize_t i = start;
#ifdef KB_SSE2
    if (w->count == 1 && w->lens[0] == 1) {
        /* One byte alone (line ends): its occurrences cannot overlap, so each step's matches
         * are counted at once, in 16 byte-wide counters (a match subtracts -1), summed every
         * 255 steps before one can wrap: twice as fast as a popcount per step. */
        __m128i byte = _mm_set1_epi8((char)w->bytes[0][0]), zero = _mm_setzero_si128();
        while (stop - i >= 16) {
            Py_ssize_t steps = (stop - i) / 16 < 255 ? (stop - i) / 16 : 255;
            __m128i counts = zero;
            for (Py_ssize_t end = i + 16 * steps; i < end; i += 16)
                counts = _mm_sub_epi8(counts, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(d + i)), byte));
            __m128i sums = _mm_sad_epu8(counts, zero); /* two 64-bit lanes, each a sum of 8 bytes */
            w->found[0] += _mm_cvtsi128_si32(sums) + _mm_extract_epi16(sums, 4);
        }
        for (; i < stop; i++)
            w->found[0] += d[i] == w->bytes[0][0];
        return;
    }
    /* The candidates (see Prefixes), each counted for every needle that stands there whole. */
    CandidatesFn use = candidates;
    Prefixes t;
    prefixes_of(w, &t, use);
    unsigned short own[8];
    unsigned long long word[MAX_NEEDLES], mask[MAX_NEEDLES];
    needles_by_bucket(w, own);
    needle_words(w, word, mask);
#define COUNT_AT(p, bits) count_which(d, n, (p), w, needles_in((bits), own), word, mask)
    FOR_CANDIDATES(d, i, stop, n, use, &t, COUNT_AT, 0);
#undef COUNT_AT
#else
    for (int k = 0; k < w->count; k++)
        w->bucket[k] = 0xFF;
    for (; i < stop; i++)
        count_at(d, n, i, w, 0xFF);
#endif
}

/* A tuple of at most MAX_NEEDLES non-empty bytes into ``w``. 0, or -1 with an error set. */
static int needles_of(PyObject *needles, Needles *w) {
    /* A tuple, not any sequence: the walk runs without the GIL and keeps pointers into the
     * needles, which a list could drop under it. */
    if (!PyTuple_Check(needles)) {
        PyErr_SetString(PyExc_TypeError, "needles must be a tuple of bytes");
        return -1;
    }
    Py_ssize_t many = PyTuple_GET_SIZE(needles);
    if (many > MAX_NEEDLES) {
        PyErr_Format(PyExc_ValueError, "at most %d needles", MAX_NEEDLES);
        return -1;
    }
    for (Py_ssize_t k = 0; k < many; k++) {
        PyObject *item = PyTuple_GET_ITEM(needles, k);
        if (!PyBytes_Check(item) || PyBytes_GET_SIZE(item) == 0) {
            PyErr_SetString(PyExc_ValueError, "each needle must be non-empty bytes");
            return -1;
        }
        w->bytes[k] = (const unsigned char *)PyBytes_AS_STRING(item);
        w->lens[k] = PyBytes_GET_SIZE(item);
    }
    w->count = (int)many;
    return 0;
}

/* The arguments (data, needles, start, stop) that count_starts and find_starts share: the
 * needles into ``w``, the buffer into ``view`` (the caller releases it), and the bounds clamped
 * to it as slicing does. 0, or -1 with an error set. */
static int needle_args(PyObject *const *args, Py_ssize_t nargs, const char *usage, Needles *w, Py_buffer *view,
                       Py_ssize_t *start, Py_ssize_t *stop) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    if (needles_of(args[1], w) < 0)
        return -1;
    if ((*start = PyLong_AsSsize_t(args[2])) == -1 && PyErr_Occurred())
        return -1;
    if ((*stop = PyLong_AsSsize_t(args[3])) == -1 && PyErr_Occurred())
        return -1;
    if (PyObject_GetBuffer(args[0], view, PyBUF_SIMPLE) < 0)
        return -1;
    clamp(view->len, start, stop);
    return 0;
}

static PyObject *count_starts(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_buffer view;
    Needles w = {0};
    Py_ssize_t start, stop;
    (void)self;
    if (needle_args(args, nargs, "count_starts(data, needles, start, stop)", &w, &view, &start, &stop) < 0)
        return NULL;
    for (int k = 0; k < w.count; k++)
        w.next[k] = start;
    Py_BEGIN_ALLOW_THREADS
    scan_needles((const unsigned char *)view.buf, view.len, start, stop, &w);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    PyObject *out = PyList_New(w.count);
    if (out == NULL)
        return NULL;
    for (int k = 0; k < w.count; k++) {
        PyObject *v = PyLong_FromSsize_t(w.found[k]);
        if (v == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, k, v);
    }
    return out;
}

/* Every occurrence of every needle that lies wholly in d[start:stop), overlapping ones too,
 * pushed as (offset, needle index) pairs: by offset, then by index, because positions are
 * walked in order and the needles at one position tested in order.
 *
 * Unlike count_starts, which tests each needle apart, this walk tests all needles at once: the
 * leak gate's 12 anchors ('/home/', '\/home\/', '/Users/', ':\Users', 'file://' ...) begin
 * with 4 distinct bytes, so a step compares the 16 bytes with each distinct first byte once and
 * the 16 after them with the second bytes that follow it, 12 compares where a test per needle
 * takes 24. In random bytes a pair stands at one position in thousands; only those are
 * compared whole. */

#ifndef KB_SSE2
/* The needles that stand at d[p] and end by ``stop``, pushed in index order. */
static inline void confirm_at(const unsigned char *d, Py_ssize_t p, Py_ssize_t stop, const Needles *w, Offsets *out, unsigned char bits) {
    for (int k = 0; k < w->count; k++) {
        Py_ssize_t len = w->lens[k];
        if ((bits & w->bucket[k]) && len <= stop - p && d[p] == w->bytes[k][0] && memcmp(d + p, w->bytes[k], (size_t)len) == 0) {
            offsets_push(out, p);
            offsets_push(out, k);
        }
    }
}
#endif

/* With ``first`` set, the search stops once it has found something (a test for any at all). */
static void find_needles(const unsigned char *d, Py_ssize_t start, Py_ssize_t stop, Needles *w, Offsets *out, int first) {
    Py_ssize_t i = start;
#ifdef KB_SSE2
    CandidatesFn use = candidates;
    Prefixes t;
    prefixes_of(w, &t, use);
    unsigned short own[8];
    unsigned long long word[MAX_NEEDLES], mask[MAX_NEEDLES];
    needles_by_bucket(w, own);
    needle_words(w, word, mask);
    /* Every load stays inside data[start:stop). */
#define CONFIRM_AT(p, bits) confirm_which(d, (p), stop, w, needles_in((bits), own), word, mask, out)
    FOR_CANDIDATES(d, i, stop, stop, use, &t, CONFIRM_AT, first && out->len);
#undef CONFIRM_AT
#else
    unsigned char lead[256] = {0};
    for (int k = 0; k < w->count; k++) {
        lead[w->bytes[k][0]] = 1;
        w->bucket[k] = 0xFF;
    }
    for (; i < stop; i++)
        if (lead[d[i]])
            confirm_at(d, i, stop, w, out, 0xFF);
    (void)first;
#endif
}

static PyObject *find_starts(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_buffer view;
    Needles w = {0};
    Offsets out = {0};
    Py_ssize_t start, stop;
    (void)self;
    if (needle_args(args, nargs, "find_starts(data, needles, start, stop)", &w, &view, &start, &stop) < 0)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    find_needles((const unsigned char *)view.buf, start, stop, &w, &out, 0);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return offsets_list(&out, 2);
}

/* The guards of leftmost_starts as byte tables, one pair per guarded needle. */
typedef struct {
    unsigned char refuse[MAX_NEEDLES][256], allow[MAX_NEEDLES][256];
    int guarded[MAX_NEEDLES];
} Guards;

/* ``guards`` (a tuple: None or (before, after) for each of the ``count`` needles) into ``g``.
 * 0, or -1 with an error set. */
static int guards_of(PyObject *guards, int count, const char *usage, Guards *g) {
    if (!PyTuple_Check(guards)) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    if (PyTuple_GET_SIZE(guards) != count) {
        PyErr_SetString(PyExc_ValueError, "leftmost_starts: one guard (or None) for each needle");
        return -1;
    }
    for (int k = 0; k < count; k++) {
        PyObject *one = PyTuple_GET_ITEM(guards, k);
        g->guarded[k] = 0;
        if (one == Py_None)
            continue;
        if (!PyTuple_Check(one) || PyTuple_GET_SIZE(one) != 2 || !PyBytes_Check(PyTuple_GET_ITEM(one, 0)) || !PyBytes_Check(PyTuple_GET_ITEM(one, 1))) {
            PyErr_SetString(PyExc_TypeError, usage);
            return -1;
        }
        g->guarded[k] = 1;
        memset(g->refuse[k], 0, 256);
        memset(g->allow[k], 0, 256);
        for (int side = 0; side < 2; side++) {
            PyObject *bytes = PyTuple_GET_ITEM(one, side);
            for (Py_ssize_t i = 0; i < PyBytes_GET_SIZE(bytes); i++)
                (side ? g->allow : g->refuse)[k][(unsigned char)PyBytes_AS_STRING(bytes)[i]] = 1;
        }
    }
    return 0;
}

/* Keep, of every occurrence in ``out`` ((offset, needle) pairs as find_needles pushes them), the
 * leftmost-first, non-overlapping ones their guards let stand. */
static void keep_leftmost(const unsigned char *d, Py_ssize_t n, const Needles *w, const Guards *g, Offsets *out) {
    if (out->failed)
        return;
    Py_ssize_t kept = 0, taken_to = -1;
    for (Py_ssize_t i = 0; i < out->len; i += 2) {
        Py_ssize_t at = out->items[i], k = out->items[i + 1], end = at + w->lens[k];
        if (at < taken_to)
            continue;
        taken_to = end;
        if (g->guarded[k] && ((at > 0 && g->refuse[k][d[at - 1]]) || end >= n || !g->allow[k][d[end]]))
            continue;
        out->items[kept++] = at;
        out->items[kept++] = k;
    }
    out->len = kept;
}

/* leftmost_starts(data, needles, guards): the occurrences an Aho-Corasick search for the
 * needles in leftmost-first order gives over all of data (from the left, none overlapping one
 * taken before it, and at one offset the needle listed first: list the longest first for
 * leftmost-longest), as (offset, needle index) pairs; then those that fail their needle's guard
 * are dropped. ``guards`` holds, for each needle, None or (before, after): the needle is kept
 * only where no byte of ``before`` precedes it (nothing precedes one at offset 0) and a byte of
 * ``after`` follows it (one that ends the data fails).
 *
 * These are the leak shapes' anchors as kitbuild.leaks.ShapeFinder takes them: '10.' of a
 * private IPv4 address stands in the hex of most of workload B's records, where its guard
 * refuses it; one by one in Python, those refusals were a fifth of verify's leak scan. */
static PyObject *leftmost_starts(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    const char *usage = "leftmost_starts(data, needles, guards: tuple of None or (before: bytes, after: bytes))";
    if (nargs != 3 || !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, usage);
        return NULL;
    }
    Py_buffer view;
    Needles w = {0};
    Offsets out = {0};
    Guards g;
    if (needles_of(args[1], &w) < 0 || guards_of(args[2], w.count, usage, &g) < 0 || PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *d = (const unsigned char *)view.buf;
    Py_ssize_t n = view.len;
    Py_BEGIN_ALLOW_THREADS
    find_needles(d, 0, n, &w, &out, 0);
    keep_leftmost(d, n, &w, &g, &out);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return offsets_list(&out, 2);
}

/* domain_after past its first byte, a label's (at d[i]). */
static int domain_from(const unsigned char *d, Py_ssize_t n, Py_ssize_t i) {
    for (;;) {
        while (i < n && LABEL[d[i]])
            i++;
        if (i >= n || d[i] != '.')
            return 0;
        /* A dot that ends a non-empty label: two letters after it end the match. */
        if (i + 2 < n && ALPHA[d[i + 1]] && ALPHA[d[i + 2]])
            return 1;
        if (i + 1 >= n || !LABEL[d[i + 1]])
            return 0;
        i++;
    }
}

/* True when the bytes after an '@' at d[at] start a domain: labels of [A-Za-z0-9-], separated
 * by single dots, and a dot followed by two letters somewhere after the first label. This is
 * exactly when ``@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`` matches at ``at``.
 *
 * Inline, the two tests that turn most '@' away: a domain starts with a label, and a label of one
 * byte must be followed by a dot (workload B's records print "any@5" twice a line). As a call
 * each, they cost the record walk 249 ms/GB on forty of B's records; inline, 237. */
static inline int domain_after(const unsigned char *d, Py_ssize_t n, Py_ssize_t at) {
    Py_ssize_t i = at + 1;
    if (i >= n || !LABEL[d[i]] || (i + 1 < n && !LABEL[d[i + 1]] && d[i + 1] != '.'))
        return 0;
    return domain_from(d, n, i);
}

/* Each '@' in d[start:end) that a domain follows, pushed (email_ats without the GIL). */
static void email_walk(const unsigned char *d, Py_ssize_t n, Py_ssize_t start, Py_ssize_t end, Offsets *out) {
    Py_ssize_t i = start;
    while (i < end) {
        const unsigned char *at = memchr(d + i, '@', (size_t)(end - i));
        if (at == NULL)
            break;
        i = at - d;
        if (domain_after(d, n, i))
            offsets_push(out, i);
        i++;
    }
}

static PyObject *email_ats(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    Py_buffer view;
    Offsets out = {0};
    Py_ssize_t start = 0, end = PY_SSIZE_T_MAX;
    if (nargs < 1 || nargs > 3) {
        PyErr_SetString(PyExc_TypeError, "email_ats(data[, start[, end]])");
        return NULL;
    }
    if (nargs > 1 && (start = PyLong_AsSsize_t(args[1])) == -1 && PyErr_Occurred())
        return NULL;
    if (nargs > 2 && (end = PyLong_AsSsize_t(args[2])) == -1 && PyErr_Occurred())
        return NULL;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    clamp(view.len, &start, &end);
    Py_BEGIN_ALLOW_THREADS
    email_walk((const unsigned char *)view.buf, view.len, start, end, &out);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return offsets_list(&out, 1);
}

#ifdef KB_AVX2
/* record_walk's four searches in one walk over the data, where the candidate scan is AVX2's or
 * AVX-512's: each step of 64 bytes is loaded, and its nibbles split, once for the needles' table
 * (below), the '@' test and the hex digits; each search's candidates are confirmed span by span as the
 * separate searches confirm them, and the hex runs are followed from step to step (a run of a
 * digest's length or more is found where it ends, as scan_hex_runs finds it). A record read whole
 * is then walked once by its searches. With AVX-512, on sixteen of workload B's records in turn,
 * the words, anchors and '@' took the time of 2.76 GB/s in three walks and of 3.78 GB/s in one
 * (medians of 25), and verify B on one job went from 1.29 to 1.17 s of CPU; the census, in the
 * same walk since, took a few per cent more off (verify B, alternating: 0.925 -> 0.90 s and 1.12
 * -> 0.955 s on one job, 0.57 -> 0.555 s and 0.54 -> 0.53 s on two). With the SSE2 scan,
 * record_walk runs the four searches in turn.
 *
 * The two sets of needles share one set of nibble tables, the words' needles taking buckets of
 * their own (see walk_start): the words the rules wrote stand everywhere in a record, the leak
 * anchors almost nowhere, and a bucket that held both would confirm anchors at every word. One
 * table, not two, halves the shuffles of a step: on 32 of workload B's records with the AVX2
 * scan, the four searches in turn took 465 ms/GB, one walk with two tables about as long (the
 * medians 694 and 670 ms/GB), and one walk with one table 362 (the fastest of 15 rounds each,
 * alternating); verify B on two jobs went from 0.88 to 0.79 s (medians of eight, alternating).
 * With AVX-512 the one table has not been timed.
 *
 * A Walk is what the two vector walks share: the span's candidates, and the hex run carried from
 * step to step; each walk's own part is turning a step's bytes into masks. */
typedef struct {
    Needles *wc, *wa;
    Offsets *found, *ats, *runs;
    Prefixes t;
    unsigned counted; /* the bucket bits of wc's needles; wa's are the others */
    unsigned short own[8], own_a[8];
    unsigned long long word[MAX_NEEDLES], mask[MAX_NEEDLES], word_a[MAX_NEEDLES], mask_a[MAX_NEEDLES];
    /* The hex digits that run up to the walk's position: a run of DIGEST_LENGTH or more is
     * pushed where it ends, as scan_hex_runs finds it. */
    Py_ssize_t run;
    int nk, ne;
    unsigned short at_k[SPAN], at_e[SPAN];
    /* The span's bucket bytes, stored by each step that has a candidate, read by walk_confirm at
     * each candidate's offset. (A copy of a candidate's byte, taken in the step from the vector
     * just stored, waited for that store each time: see walk_confirm.) */
    unsigned char bits[SPAN];
    /* For each words' bucket that holds a single needle of at most 24 bytes: that needle, else
     * -1; and each such needle as three words with their masks (zero past its end). */
    signed char single[8];
    unsigned long long word3[3][MAX_NEEDLES], mask3[3][MAX_NEEDLES];
} Walk;

/* The needles that walk_confirm tests in one expression (see Walk.single). */
static void walk_singles(Walk *w) {
    const Needles *wc = w->wc;
    for (int b = 0; b < 8; b++) {
        unsigned own = w->own[b];
        int k = own ? __builtin_ctz(own) : 0;
        w->single[b] = (signed char)((w->counted >> b & 1) && own && !(own & (own - 1)) && wc->lens[k] <= 24 ? k : -1);
    }
    for (int k = 0; k < wc->count; k++)
        for (int j = 0; j < 3; j++) {
            Py_ssize_t have = wc->lens[k] - 8 * j;
            have = have < 0 ? 0 : have > 8 ? 8 : have;
            w->word3[j][k] = 0;
            if (have > 0)
                memcpy(&w->word3[j][k], wc->bytes[k] + 8 * j, (size_t)have);
            w->mask3[j][k] = have == 8 ? ~0ULL : (1ULL << (8 * have)) - 1;
        }
}

/* Whether single needle k (see Walk.single) stands at d[p], with 24 bytes there to read. */
static inline int stands3(const Walk *w, const unsigned char *d, Py_ssize_t p, int k) {
    return (((word_of(d + p) ^ w->word3[0][k]) & w->mask3[0][k]) | ((word_of(d + p + 8) ^ w->word3[1][k]) & w->mask3[1][k]) |
            ((word_of(d + p + 16) ^ w->word3[2][k]) & w->mask3[2][k])) == 0;
}

/* A walk that has found nothing yet, with its tables: the words' needles get a bucket each, up
 * to half of the eight, and the anchors the rest (with none of either, the other gets all). */
static void walk_start(Walk *w, Needles *wc, Needles *wa, Offsets *found, Offsets *ats, Offsets *runs) {
    w->wc = wc, w->wa = wa, w->found = found, w->ats = ats, w->runs = runs;
    int words = wa->count == 0 ? 8 : wc->count < 4 ? wc->count : 4;
    memset(w->t.lo, 0, sizeof w->t.lo);
    memset(w->t.hi, 0, sizeof w->t.hi);
    if (words > 0) /* (none: wc has no needles; eight: wa has none) */
        bucket_tables(wc, &w->t, 0, words);
    if (words < 8)
        bucket_tables(wa, &w->t, words, 8 - words);
    w->counted = (1u << words) - 1;
    needles_by_bucket(wc, w->own);
    needle_words(wc, w->word, w->mask);
    needles_by_bucket(wa, w->own_a);
    needle_words(wa, w->word_a, w->mask_a);
    walk_singles(w);
    w->run = 0;
    w->nk = w->ne = 0;
}

/* Step ``s`` of the span, at offset ``at`` of the data: ``hx`` has a bit for each hex digit of its
 * 64 bytes, ``k`` one for each candidate (their buckets stored in ``w->bits``), ``ke`` one for
 * each '@'. */
static inline void walk_step(Walk *w, Py_ssize_t s, Py_ssize_t at, unsigned long long hx, unsigned long long k, unsigned long long ke) {
    /* (A step that ends before 64 bytes is the padded last one: past its end come the padding's
     * zeros, which are no hex digits and end any run there.) */
    if (hx == ~0ULL) {
        w->run += 64;
    } else {
        Py_ssize_t lead = (Py_ssize_t)__builtin_ctzll(~hx);
        if (w->run + lead >= DIGEST_LENGTH) {
            offsets_push(w->runs, at - w->run);
            offsets_push(w->runs, at + lead);
        }
        /* A run inside the step is shorter than a digest; the one it ends with goes on. */
        w->run = (Py_ssize_t)__builtin_clzll(~hx);
    }
    for (; k; k &= k - 1)
        w->at_k[w->nk++] = (unsigned short)(64 * s + __builtin_ctzll(k));
    for (; ke; ke &= ke - 1)
        w->at_e[w->ne++] = (unsigned short)(64 * s + __builtin_ctzll(ke));
}

/* The span at d[i]'s candidates below ``upto``, confirmed; the next span starts with none.
 *
 * A candidate of one words' bucket whose needle is single there (Walk.single), with 24 bytes to
 * read, is tested in one expression: its three words masked, with no branch on the needle's
 * length, which changes from candidate to candidate (in workload B's records, four words every
 * 85 bytes). With that, and each candidate's buckets read from the span's stored bytes instead of
 * copied in the step, the walk took 237 ms/GB on forty of workload B's records against 263 (the
 * fastest of 25 rounds each, alternating, the same answers). */
static inline void walk_confirm(Walk *w, const unsigned char *d, Py_ssize_t n, Py_ssize_t i, Py_ssize_t upto) {
    Needles *wc = w->wc;
    for (int j = 0; j < w->nk && w->at_k[j] < upto; j++) {
        unsigned bits = w->bits[w->at_k[j]], counted = bits & w->counted;
        Py_ssize_t p = i + w->at_k[j];
        int k;
        if (counted && !(counted & (counted - 1)) && (k = w->single[__builtin_ctz(counted)]) >= 0 && n - p >= 24) {
            if (p >= wc->next[k] && stands3(w, d, p, k)) {
                wc->found[k]++;
                wc->next[k] = p + wc->lens[k];
            }
        } else if (counted)
            count_which(d, n, p, wc, needles_in(counted, w->own), w->word, w->mask);
        if (bits & ~w->counted)
            confirm_which(d, p, n, w->wa, needles_in(bits & ~w->counted, w->own_a), w->word_a, w->mask_a, w->found);
    }
    for (int j = 0; j < w->ne && w->at_e[j] < upto; j++)
        if (domain_after(d, n, i + w->at_e[j]))
            offsets_push(w->ats, i + w->at_e[j]);
    w->nk = w->ne = 0;
}

static void walk_end(Walk *w, Py_ssize_t n) {
    if (w->run >= DIGEST_LENGTH) {
        offsets_push(w->runs, n - w->run);
        offsets_push(w->runs, n);
    }
}

/* The loop both walks run: span by span (whole steps in place, reading three bytes past each, and
 * the last positions from a copy padded with zeros, as FOR_CANDIDATES walks), STEP(q, s) turning
 * each step's bytes at q into walk_step's masks, and the span's candidates confirmed after it. */
#define WALK(d, n, w, STEP)                                                                             \
    do {                                                                                                \
        unsigned char pad_[128];                                                                        \
        Py_ssize_t i_ = 0;                                                                              \
        while (i_ < (n)) {                                                                              \
            const unsigned char *p_;                                                                    \
            Py_ssize_t steps_, upto_, span_ = next_span((d), i_, (n), (n), pad_, &p_, &steps_, &upto_); \
            for (Py_ssize_t s_ = 0; s_ < steps_; s_++)                                                  \
                STEP(p_ + 64 * s_, s_, i_ + 64 * s_);                                                   \
            walk_confirm((w), (d), (n), i_, upto_);                                                     \
            i_ += span_;                                                                                \
        }                                                                                               \
        walk_end((w), (n));                                                                             \
    } while (0)

/* A 32-byte half of an AVX2 step: its bucket bytes, and its '@' and hex digits. ``ascii``: the
 * low nibbles of the first three positions go to the shuffles as the bytes themselves (see
 * walk_avx2). */
#define AVX2_HALF(q, m, me, hx, ascii)                                                                                      \
    do {                                                                                                                    \
        for (int j = 0; j < 4; j++) {                                                                                       \
            __m256i v = _mm256_loadu_si256((const __m256i *)((q) + j));                                                     \
            __m256i lo = (ascii) && j < 3 ? v : _mm256_and_si256(v, nibble);                                                 \
            __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);                                                 \
            m = _mm256_and_si256(m, _mm256_and_si256(_mm256_shuffle_epi8(tlo[j], lo), _mm256_shuffle_epi8(thi[j], hi)));    \
            if (j == 0) {                                                                                                   \
                __m256i kind = _mm256_and_si256(_mm256_shuffle_epi8(kind_lo, v), _mm256_shuffle_epi8(kind_hi, hi));         \
                me = (unsigned)_mm256_movemask_epi8(kind);                                                                  \
                hx = (unsigned)_mm256_movemask_epi8(_mm256_cmpgt_epi8(kind, zero));                                         \
            }                                                                                                               \
        }                                                                                                                   \
    } while (0)

/* The walk with AVX2's scan: a step is two halves of 32 bytes.
 *
 * The step's constants must stay in its sixteen vector registers: the eight nibble tables, and
 * what the '@' and hex digits are told by. A range test of the hex digits by adds and compares
 * took five constants, and with '@' and the nibble mask they no longer fitted: the compiler
 * kept three tables on the stack and made three constants anew at every step. The '@' and the
 * hex digits are now told by the byte's nibbles through two tables of their own, as the needles
 * are, from the nibbles the first position splits anyway.
 *
 * vpshufb reads a byte's low nibble by itself, but gives zero for a byte of 0x80 or more. Where
 * every needle has a byte below 0x80 at each of the first three positions (no needle shorter than
 * three bytes, and none with a byte above 0x7F there), zero is what the tables would give such a
 * byte there anyway, so ``ascii`` skips masking the low nibble at those positions. On 48 of
 * workload B's records (the fastest of 20 rounds, alternating), the two changes took the walk
 * from 316 to 305 and then 297 ms/GB. */
__attribute__((target("avx2"), always_inline)) static inline void walk_avx2(const unsigned char *d, Py_ssize_t n, Walk *w, const int ascii) {
    __m256i tlo[4], thi[4];
    for (int j = 0; j < 4; j++) {
        tlo[j] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)w->t.lo[j]));
        thi[j] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)w->t.hi[j]));
    }
    const __m256i nibble = _mm256_set1_epi8(0x0f), zero = _mm256_setzero_si256();
    /* A byte's kind by its nibbles, each table giving the kinds its nibble allows: 0x01 a digit
     * (high 3, low 0-9), 0x02 a hex letter of either case (high 4 or 6, low 1-6), 0x80 '@' (high
     * 4, low 0). A hex digit is then a positive kind, '@' a negative one; a byte of 0x80 or more
     * has none (the low table's shuffle gives it zero). */
    const __m256i kind_lo = _mm256_broadcastsi128_si256(_mm_setr_epi8((char)0x81, 3, 3, 3, 3, 3, 3, 1, 1, 1, 0, 0, 0, 0, 0, 0));
    const __m256i kind_hi = _mm256_broadcastsi128_si256(_mm_setr_epi8(0, 0, 0, 1, (char)0x82, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0));
#define AVX2_STEP(q, s, at)                                                                                            \
    do {                                                                                                               \
        __m256i m0 = _mm256_set1_epi8(-1), m1 = m0;                                                                    \
        unsigned long long e0, e1, h0, h1;                                                                             \
        AVX2_HALF((q), m0, e0, h0, ascii);                                                                             \
        AVX2_HALF((q) + 32, m1, e1, h1, ascii);                                                                        \
        unsigned long long k = ~((unsigned long long)(unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(m0, zero)) |    \
                                 (unsigned long long)(unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(m1, zero)) << 32); \
        if (k) {                                                                                                       \
            _mm256_storeu_si256((__m256i *)(w->bits + 64 * (s)), m0);                                                  \
            _mm256_storeu_si256((__m256i *)(w->bits + 64 * (s) + 32), m1);                                             \
        }                                                                                                              \
        walk_step(w, (s), (at), h0 | h1 << 32, k, e0 | e1 << 32);                                                      \
    } while (0)
    WALK(d, n, w, AVX2_STEP);
#undef AVX2_STEP
}

/* Whether each of w's needles has at least three bytes, the first three below 0x80 (see walk_avx2). */
static int ascii_leads(const Needles *w) {
    for (int k = 0; k < w->count; k++)
        if (w->lens[k] < 3 || w->bytes[k][0] >= 0x80 || w->bytes[k][1] >= 0x80 || w->bytes[k][2] >= 0x80)
            return 0;
    return 1;
}

__attribute__((target("avx2"))) static void record_walk_avx2(const unsigned char *d, Py_ssize_t n, Needles *wc, Needles *wa, Offsets *found, Offsets *ats, Offsets *runs) {
    Walk walk, *w = &walk;
    walk_start(w, wc, wa, found, ats, runs);
    if (ascii_leads(wc) && ascii_leads(wa))
        walk_avx2(d, n, w, 1);
    else
        walk_avx2(d, n, w, 0);
}

/* The walk with AVX-512's scan: one register holds the whole step. */
__attribute__((target("avx512f,avx512bw"))) static void record_walk_avx512(const unsigned char *d, Py_ssize_t n, Needles *wc, Needles *wa, Offsets *found, Offsets *ats, Offsets *runs) {
    Walk walk, *w = &walk;
    walk_start(w, wc, wa, found, ats, runs);
    __m512i tlo[4], thi[4];
    for (int j = 0; j < 4; j++) {
        tlo[j] = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)w->t.lo[j]));
        thi[j] = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)w->t.hi[j]));
    }
    const __m512i nibble = _mm512_set1_epi8(0x0f), at_sign = _mm512_set1_epi8('@');
    const __m512i zero_char = _mm512_set1_epi8('0'), nine = _mm512_set1_epi8(9), lower = _mm512_set1_epi8(0x20);
    const __m512i a_char = _mm512_set1_epi8('a'), five = _mm512_set1_epi8(5);
#define AVX512_STEP(q, s, at)                                                                                              \
    do {                                                                                                                   \
        __m512i m = _mm512_set1_epi8(-1);                                                                                  \
        __mmask64 me = 0, hex = 0;                                                                                         \
        for (int j = 0; j < 4; j++) {                                                                                      \
            __m512i v = _mm512_loadu_si512((const void *)((q) + j));                                                       \
            __m512i lo = _mm512_and_si512(v, nibble), hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble);              \
            m = _mm512_and_si512(m, _mm512_and_si512(_mm512_shuffle_epi8(tlo[j], lo), _mm512_shuffle_epi8(thi[j], hi)));   \
            if (j == 0) {                                                                                                  \
                me = _mm512_cmpeq_epi8_mask(v, at_sign);                                                                   \
                hex = _mm512_cmple_epu8_mask(_mm512_sub_epi8(v, zero_char), nine) |                                        \
                      _mm512_cmple_epu8_mask(_mm512_sub_epi8(_mm512_or_si512(v, lower), a_char), five);                   \
            }                                                                                                              \
        }                                                                                                                  \
        unsigned long long k = _mm512_test_epi8_mask(m, m);                                                                \
        if (k)                                                                                                             \
            _mm512_storeu_si512((void *)(w->bits + 64 * (s)), m);                                                          \
        walk_step(w, (s), (at), (unsigned long long)hex, k, (unsigned long long)me);                                      \
    } while (0)
    WALK(d, n, w, AVX512_STEP);
#undef AVX512_STEP
}
#endif

/* The hex runs of a buffer, found without the GIL; -1 with MemoryError set if they did not fit. */
static int find_runs(Py_buffer *view, Offsets *runs) {
    Py_BEGIN_ALLOW_THREADS
    scan_hex_runs((const unsigned char *)view->buf, view->len, runs, 0);
    Py_END_ALLOW_THREADS
    if (runs->failed) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* 0 when ``counts`` can hold a census (a dict); -1 with TypeError set. */
static int census_counts(PyObject *counts) {
    if (PyDict_Check(counts))
        return 0;
    PyErr_SetString(PyExc_TypeError, "counts must be a dict");
    return -1;
}

/* The census of ``runs`` (hex runs of d, as scan_hex_runs finds them): see census. The new
 * list of the digests' offsets, or NULL with an error set. With the GIL. */
static PyObject *census_of(const char *d, const Offsets *runs, Py_ssize_t start, Py_ssize_t stop, Py_ssize_t base, PyObject *counts) {
    if (runs->failed) {
        PyErr_NoMemory();
        return NULL;
    }
    PyObject *starts = PyList_New(0);
    if (starts == NULL)
        return NULL;
    for (Py_ssize_t k = 0; k + 1 < runs->len; k += 2) {
        Py_ssize_t s = runs->items[k], e = runs->items[k + 1];
        if (e - s != DIGEST_LENGTH || s < start)
            continue;
        if (s >= stop)
            break;
        PyObject *at = PyLong_FromSsize_t(s);
        if (at == NULL || PyList_Append(starts, at) < 0) {
            Py_XDECREF(at);
            goto fail;
        }
        Py_DECREF(at);
        PyObject *key = PyBytes_FromStringAndSize(d + s, DIGEST_LENGTH);
        if (key == NULL)
            goto fail;
        PyObject *seen = PyDict_GetItemWithError(counts, key); /* borrowed */
        int failed = 0;
        if (seen == NULL) {
            PyObject *entry = PyErr_Occurred() ? NULL : Py_BuildValue("[nn]", (Py_ssize_t)1, base + s);
            failed = entry == NULL || PyDict_SetItem(counts, key, entry) < 0;
            Py_XDECREF(entry);
        } else if (PyList_Check(seen) && PyList_GET_SIZE(seen) == 2) {
            Py_ssize_t n = PyLong_AsSsize_t(PyList_GET_ITEM(seen, 0));
            PyObject *more = (n == -1 && PyErr_Occurred()) ? NULL : PyLong_FromSsize_t(n + 1);
            failed = more == NULL || PyList_SetItem(seen, 0, more) < 0;
        } else {
            PyErr_SetString(PyExc_TypeError, "each value of counts must be a list [count, first]");
            failed = 1;
        }
        Py_DECREF(key);
        if (failed)
            goto fail;
    }
    return starts;
fail:
    Py_DECREF(starts);
    return NULL;
}

/* The runs of exactly DIGEST_LENGTH hex digits whose start is in [start, stop): a census.
 * Each is counted in ``counts`` under its bytes as printed ([count, base + offset of the first]),
 * and the list of their offsets is returned. The scan runs without the GIL; the counting, a
 * dict update per digest, with it. */
static PyObject *census(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_buffer view;
    Offsets runs = {0};
    Py_ssize_t start, stop, base;
    PyObject *starts = NULL;
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "census(data, start, stop, base, counts)");
        return NULL;
    }
    if ((start = PyLong_AsSsize_t(args[1])) == -1 && PyErr_Occurred())
        return NULL;
    if ((stop = PyLong_AsSsize_t(args[2])) == -1 && PyErr_Occurred())
        return NULL;
    if ((base = PyLong_AsSsize_t(args[3])) == -1 && PyErr_Occurred())
        return NULL;
    if (census_counts(args[4]) < 0 || PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    clamp(view.len, &start, &stop);
    if (find_runs(&view, &runs) == 0)
        starts = census_of((const char *)view.buf, &runs, start, stop, base, args[4]);
    free(runs.items);
    PyBuffer_Release(&view);
    return starts;
}

/* record_walk(data, counted, anchors, guards, counts): what census(data, 0, len, 0, counts),
 * count_starts(data, counted, 0, len), leftmost_starts(data, anchors, guards) and
 * email_ats(data) give, as a tuple of the four, in one call: everything verify searches a record
 * read whole for (with the AVX2 or AVX-512 scan, in one walk: see Walk). */
static PyObject *record_walk(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    const char *usage = "record_walk(data, counted, anchors, guards: tuple of None or (before: bytes, after: bytes), counts: dict)";
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, usage);
        return NULL;
    }
    Py_buffer view;
    Needles wc = {0}, wa = {0};
    Offsets found = {0}, ats = {0}, runs = {0};
    Guards g;
    if (needles_of(args[1], &wc) < 0 || needles_of(args[2], &wa) < 0 || guards_of(args[3], wa.count, usage, &g) < 0 ||
        census_counts(args[4]) < 0 || PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *d = (const unsigned char *)view.buf;
    Py_ssize_t n = view.len;
    Py_BEGIN_ALLOW_THREADS
#ifdef KB_AVX2
    if (candidates == candidates_avx512)
        record_walk_avx512(d, n, &wc, &wa, &found, &ats, &runs);
    else if (candidates == candidates_avx2)
        record_walk_avx2(d, n, &wc, &wa, &found, &ats, &runs);
    else
#endif
    {
        scan_hex_runs(d, n, &runs, 0);
        for (int k = 0; k < wc.count; k++)
            wc.next[k] = 0;
        scan_needles(d, n, 0, n, &wc);
        find_needles(d, 0, n, &wa, &found, 0);
        email_walk(d, n, 0, n, &ats);
    }
    keep_leftmost(d, n, &wa, &g, &found);
    Py_END_ALLOW_THREADS
    PyObject *starts = census_of((const char *)d, &runs, 0, n, 0, args[4]);
    PyBuffer_Release(&view);
    PyObject *counts = NULL, *pairs = NULL, *emails = NULL, *out = NULL;
    if (starts == NULL || (counts = PyList_New(wc.count)) == NULL)
        goto done;
    for (int k = 0; k < wc.count; k++) {
        PyObject *v = PyLong_FromSsize_t(wc.found[k]);
        if (v == NULL)
            goto done;
        PyList_SET_ITEM(counts, k, v);
    }
    if ((pairs = offsets_list(&found, 2)) == NULL || (emails = offsets_list(&ats, 1)) == NULL)
        goto done;
    out = PyTuple_Pack(4, starts, counts, pairs, emails);
done:
    free(found.items);
    free(ats.items);
    free(runs.items);
    Py_XDECREF(starts);
    Py_XDECREF(counts);
    Py_XDECREF(pairs);
    Py_XDECREF(emails);
    return out;
}

/* (start, end) of each printed digest (a run of exactly DIGEST_LENGTH hex digits) whose
 * lower-case bytes are in ``withheld`` (a set or frozenset of bytes); ``start`` is before a
 * ``sha256:`` prefix where one stands. */
static PyObject *withheld_spans(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_buffer view;
    Offsets runs = {0};
    PyObject *withheld, *out = NULL;
    static const char prefix[] = "sha256:";
    const Py_ssize_t plen = (Py_ssize_t)(sizeof(prefix) - 1);
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "withheld_spans(data, withheld)");
        return NULL;
    }
    withheld = args[1];
    if (!PyAnySet_Check(withheld)) {
        PyErr_SetString(PyExc_TypeError, "withheld must be a set of bytes");
        return NULL;
    }
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const char *d = (const char *)view.buf;
    if (find_runs(&view, &runs) < 0 || (out = PyList_New(0)) == NULL)
        goto done;
    for (Py_ssize_t k = 0; k + 1 < runs.len; k += 2) {
        Py_ssize_t s = runs.items[k], e = runs.items[k + 1];
        if (e - s != DIGEST_LENGTH)
            continue;
        char lower[DIGEST_LENGTH];
        for (int i = 0; i < DIGEST_LENGTH; i++) {
            char c = d[s + i];
            lower[i] = (c >= 'A' && c <= 'F') ? (char)(c + 32) : c;
        }
        PyObject *key = PyBytes_FromStringAndSize(lower, DIGEST_LENGTH);
        if (key == NULL)
            goto fail;
        int hit = PySet_Contains(withheld, key);
        Py_DECREF(key);
        if (hit < 0)
            goto fail;
        if (!hit)
            continue;
        Py_ssize_t head = (s >= plen && memcmp(d + s - plen, prefix, (size_t)plen) == 0) ? s - plen : s;
        PyObject *span = Py_BuildValue("(nn)", head, e);
        if (span == NULL || PyList_Append(out, span) < 0) {
            Py_XDECREF(span);
            goto fail;
        }
        Py_DECREF(span);
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    free(runs.items);
    PyBuffer_Release(&view);
    return out;
}

/* Where ``needle`` (m >= 1 bytes) first stands in d[0:n], or NULL. The C library's memmem is
 * several times faster than a byte-at-a-time search; where it is missing (or KB_NO_MEMMEM asks
 * to try the fallback), each occurrence of the first byte is found with memchr and the rest
 * compared. */
#if !defined(KB_NO_MEMMEM) && ((defined(__GLIBC__) && defined(_GNU_SOURCE)) || defined(__APPLE__))
#define KB_MEMMEM 1
#endif

static const unsigned char *find_bytes(const unsigned char *d, Py_ssize_t n, const unsigned char *needle, Py_ssize_t m) {
#ifdef KB_MEMMEM
    return memmem(d, (size_t)n, needle, (size_t)m);
#else
    if (m > n)
        return NULL;
    const unsigned char *p = d, *last = d + (n - m);
    while (p <= last) {
        p = memchr(p, needle[0], (size_t)(last - p) + 1);
        if (p == NULL)
            return NULL;
        if (memcmp(p + 1, needle + 1, (size_t)(m - 1)) == 0)
            return p;
        p++;
    }
    return NULL;
#endif
}

enum { BOUNDARY_NONE = 0, BOUNDARY_PATH = 1, BOUNDARY_NAME = 2 };

/* Whether d[s:e] stands at a boundary of ``kind``: the lookarounds that kitbuild.speedups'
 * bounded_pattern puts around a literal. The start of data is a boundary; so is its end (\Z). */
static inline int at_boundary(const unsigned char *d, Py_ssize_t n, Py_ssize_t s, Py_ssize_t e, int kind) {
    if (kind == BOUNDARY_PATH) {
        if (s > 0 && PATH_BEFORE[d[s - 1]])
            return 0;
        return e >= n || PATH_END[d[e]];
    }
    if (kind == BOUNDARY_NAME) {
        if (s > 0 && NAME_BEFORE[d[s - 1]])
            return 0;
        if (e >= n)
            return 1;
        if (NAME_CHAR[d[e]])
            return 0;
        /* A full stop ends a sentence, unless a further label follows it. */
        return !(d[e] == '.' && e + 1 < n && ALNUM[d[e + 1]]);
    }
    return 1;
}

/* The starts of the non-overlapping occurrences of lit (m >= 1 bytes) at a boundary of
 * ``kind``, found from the left. An occurrence that fails the test is skipped by one byte, not
 * by its length, as re's search resumes: "aa" may still stand at a boundary one byte on. */
static void find_bounded(const unsigned char *d, Py_ssize_t n, const unsigned char *lit, Py_ssize_t m, int kind, Offsets *out) {
    Py_ssize_t i = 0;
    while (n - i >= m) {
        const unsigned char *p = find_bytes(d + i, n - i, lit, m);
        if (p == NULL)
            return;
        Py_ssize_t s = p - d;
        if (at_boundary(d, n, s, s + m, kind)) {
            offsets_push(out, s);
            i = s + m;
        } else {
            i = s + 1;
        }
    }
}

/* d with the m bytes at each of ``starts`` replaced by rep, written into dst. */
static void splice(char *dst, const char *d, Py_ssize_t n, const Offsets *starts, Py_ssize_t m, const char *rep, Py_ssize_t rlen) {
    Py_ssize_t last = 0;
    for (Py_ssize_t k = 0; k < starts->len; k++) {
        Py_ssize_t s = starts->items[k];
        memcpy(dst, d + last, (size_t)(s - last));
        dst += s - last;
        memcpy(dst, rep, (size_t)rlen);
        dst += rlen;
        last = s + m;
    }
    memcpy(dst, d + last, (size_t)(n - last));
}

static PyObject *replace_bounded(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_buffer view;
    Offsets starts = {0};
    PyObject *result = NULL, *out = NULL;
    (void)self;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "replace_bounded(data, literal, replacement, boundary)");
        return NULL;
    }
    PyObject *literal = args[1], *replacement = args[2];
    if (!PyBytes_Check(literal) || PyBytes_GET_SIZE(literal) == 0) {
        PyErr_SetString(PyExc_ValueError, "the literal must be non-empty bytes");
        return NULL;
    }
    if (!PyBytes_Check(replacement)) {
        PyErr_SetString(PyExc_TypeError, "the replacement must be bytes");
        return NULL;
    }
    long kind = PyLong_AsLong(args[3]);
    if (kind == -1 && PyErr_Occurred())
        return NULL;
    if (kind < BOUNDARY_NONE || kind > BOUNDARY_NAME) {
        PyErr_Format(PyExc_ValueError, "unknown boundary %ld", kind);
        return NULL;
    }
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const char *d = (const char *)view.buf, *lit = PyBytes_AS_STRING(literal), *rep = PyBytes_AS_STRING(replacement);
    Py_ssize_t n = view.len, m = PyBytes_GET_SIZE(literal), rlen = PyBytes_GET_SIZE(replacement);
    Py_BEGIN_ALLOW_THREADS
    find_bounded((const unsigned char *)d, n, (const unsigned char *)lit, m, (int)kind, &starts);
    Py_END_ALLOW_THREADS
    if (starts.failed) {
        PyErr_NoMemory();
        goto done;
    }
    if (starts.len == 0) {
        /* Nothing fired: the caller may tell so by identity, and nothing is copied. */
        out = PyBytes_CheckExact(args[0]) ? Py_NewRef(args[0]) : PyBytes_FromStringAndSize(d, n);
    } else {
        if (rlen > m && starts.len > (PY_SSIZE_T_MAX - n) / (rlen - m)) {
            PyErr_NoMemory();
            goto done;
        }
        out = PyBytes_FromStringAndSize(NULL, n + starts.len * (rlen - m));
        if (out == NULL)
            goto done;
        char *dst = PyBytes_AS_STRING(out);
        Py_BEGIN_ALLOW_THREADS
        splice(dst, d, n, &starts, m, rep, rlen);
        Py_END_ALLOW_THREADS
    }
    if (out != NULL)
        result = Py_BuildValue("(Nn)", out, starts.len);
done:
    free(starts.items);
    PyBuffer_Release(&view);
    return result;
}

/* JSON values written right after ``marker`` ('"field":"', which starts with a quote), each
 * replaced by safes[value] where the value (up to the next quote) is a key of safes. A quote
 * ends a value and a marker starts with one, so no marker starts inside a value and the values
 * are found from the left, one after another: what splitting the data at each marker and
 * looking up each piece up to its first quote gives, without a bytes object per piece. */
static PyObject *replace_values(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_buffer view;
    Offsets spans = {0}; /* (value start, value end, borrowed replacement) per firing */
    PyObject *unmatched = NULL, *out = NULL, *result = NULL;
    (void)self;
    if (nargs != 3 || !PyBytes_Check(args[1]) || !PyDict_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "replace_values(data, marker: bytes, safes: dict)");
        return NULL;
    }
    PyObject *safes = args[2];
    Py_ssize_t m = PyBytes_GET_SIZE(args[1]);
    const unsigned char *marker = (const unsigned char *)PyBytes_AS_STRING(args[1]);
    if (m == 0 || marker[0] != '"') {
        PyErr_SetString(PyExc_ValueError, "the marker must start with a quote");
        return NULL;
    }
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *d = (const unsigned char *)view.buf;
    Py_ssize_t n = view.len, i = 0, found = 0, size = n;
    int unread = 0;
    unmatched = PySet_New(NULL);
    if (unmatched == NULL)
        goto done;
    while (n - i >= m) {
        const unsigned char *p = find_bytes(d + i, n - i, marker, m);
        if (p == NULL)
            break;
        found++;
        Py_ssize_t v = (p - d) + m;
        const unsigned char *quote = memchr(d + v, '"', (size_t)(n - v));
        if (quote == NULL) {
            unread = 1; /* no value ends here, and no marker follows */
            break;
        }
        Py_ssize_t q = quote - d;
        i = v;
        if ((q > v && d[q - 1] == '\\') || (n - q >= m && memcmp(d + q, marker, (size_t)m) == 0)) {
            /* An escaped quote: the value goes on past it. Or the quote starts the next marker,
             * which leaves this piece without an end (not JSON): left to the field pattern. */
            unread = 1;
            continue;
        }
        PyObject *value = PyBytes_FromStringAndSize((const char *)d + v, q - v);
        if (value == NULL)
            goto done;
        PyObject *safe = PyDict_GetItemWithError(safes, value);
        if (safe == NULL) {
            int failed = PyErr_Occurred() != NULL || PySet_Add(unmatched, value) < 0;
            Py_DECREF(value);
            if (failed)
                goto done;
            continue;
        }
        Py_DECREF(value);
        if (!PyBytes_Check(safe)) {
            PyErr_SetString(PyExc_TypeError, "safes must map bytes to bytes");
            goto done;
        }
        offsets_push(&spans, v);
        offsets_push(&spans, q);
        offsets_push(&spans, (Py_ssize_t)(intptr_t)safe);
        size += PyBytes_GET_SIZE(safe) - (q - v);
    }
    if (spans.failed) {
        PyErr_NoMemory();
        goto done;
    }
    if (spans.len == 0) {
        out = PyBytes_CheckExact(args[0]) ? Py_NewRef(args[0]) : PyBytes_FromStringAndSize((const char *)d, n);
    } else {
        out = PyBytes_FromStringAndSize(NULL, size);
        if (out == NULL)
            goto done;
        char *dst = PyBytes_AS_STRING(out);
        Py_ssize_t last = 0;
        for (Py_ssize_t k = 0; k < spans.len; k += 3) {
            Py_ssize_t v = spans.items[k], q = spans.items[k + 1];
            PyObject *safe = (PyObject *)(intptr_t)spans.items[k + 2];
            memcpy(dst, d + last, (size_t)(v - last));
            dst += v - last;
            memcpy(dst, PyBytes_AS_STRING(safe), (size_t)PyBytes_GET_SIZE(safe));
            dst += PyBytes_GET_SIZE(safe);
            last = q;
        }
        memcpy(dst, d + last, (size_t)(n - last));
    }
    result = Py_BuildValue("(NnnON)", out, found, spans.len / 3, unread ? Py_True : Py_False, unmatched);
    out = unmatched = NULL;
done:
    Py_XDECREF(out);
    Py_XDECREF(unmatched);
    free(spans.items);
    PyBuffer_Release(&view);
    return result;
}

static PyObject *contains(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_buffer view;
    const unsigned char *at;
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "contains(data, needle)");
        return NULL;
    }
    if (!PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "the needle must be bytes");
        return NULL;
    }
    Py_ssize_t m = PyBytes_GET_SIZE(args[1]);
    if (m == 0)
        Py_RETURN_TRUE; /* as ``b"" in data`` */
    const unsigned char *needle = (const unsigned char *)PyBytes_AS_STRING(args[1]);
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    at = find_bytes((const unsigned char *)view.buf, view.len, needle, m);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&view);
    return PyBool_FromLong(at != NULL);
}

/* Whether data holds nothing a file's scan reports on: no run of DIGEST_LENGTH or more hex
 * digits, no '@' that a domain follows, and none of the needles (``groups``: a tuple of tuples
 * of at most MAX_NEEDLES non-empty bytes each). Most files of a big kit hold none of these; for
 * them this one call stands for the census, the counts and the leak searches: 1.3 µs for a file
 * of 2 KiB, where those calls and their lists took 3 µs. */
static PyObject *quiet(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2 || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "quiet(data, groups: tuple of tuples of bytes)");
        return NULL;
    }
    PyObject *groups = args[1];
    Py_ssize_t many = PyTuple_GET_SIZE(groups);
    for (Py_ssize_t g = 0; g < many; g++) {
        PyObject *group = PyTuple_GET_ITEM(groups, g);
        if (!PyTuple_Check(group)) {
            PyErr_SetString(PyExc_TypeError, "quiet(data, groups: tuple of tuples of bytes)");
            return NULL;
        }
        if (PyTuple_GET_SIZE(group) > MAX_NEEDLES) {
            PyErr_Format(PyExc_ValueError, "at most %d needles in a group", MAX_NEEDLES);
            return NULL;
        }
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(group); k++) {
            PyObject *item = PyTuple_GET_ITEM(group, k);
            if (!PyBytes_Check(item) || PyBytes_GET_SIZE(item) == 0) {
                PyErr_SetString(PyExc_ValueError, "each needle must be non-empty bytes");
                return NULL;
            }
        }
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *d = (const unsigned char *)view.buf;
    Py_ssize_t n = view.len;
    int calm = 1;
    Offsets runs = {0};
    Py_BEGIN_ALLOW_THREADS
    /* Each search stops at its first find, and those most often found come first: a rewritten
     * record mostly holds a placeholder or a rule's word early on, then a digest. The tuples are
     * the caller's and cannot change: the needles stay put without the GIL. */
    for (Py_ssize_t g = 0; calm && g < many; g++) {
        PyObject *group = PyTuple_GET_ITEM(groups, g);
        Needles w = {0};
        w.count = (int)PyTuple_GET_SIZE(group);
        for (int k = 0; k < w.count; k++) {
            PyObject *item = PyTuple_GET_ITEM(group, k);
            w.bytes[k] = (const unsigned char *)PyBytes_AS_STRING(item);
            w.lens[k] = PyBytes_GET_SIZE(item);
        }
        Offsets found = {0};
        find_needles(d, 0, n, &w, &found, 1);
        calm = found.len == 0 && !found.failed;
        free(found.items);
    }
    if (calm) {
        scan_hex_runs(d, n, &runs, 1);
        calm = runs.len == 0 && !runs.failed;
    }
    for (const unsigned char *at = calm ? memchr(d, '@', (size_t)n) : NULL; calm && at != NULL;
         at = at + 1 < d + n ? memchr(at + 1, '@', (size_t)(d + n - at - 1)) : NULL)
        calm = !domain_after(d, n, at - d);
    Py_END_ALLOW_THREADS
    free(runs.items);
    PyBuffer_Release(&view);
    return PyBool_FromLong(calm); /* (a search that ran out of memory leaves it false: never a wrong yes) */
}

/* A streaming scan's window, refilled in place: ``buf[keep:]`` (what the scan still needs) moves
 * to the front and up to ``size`` bytes are read from ``fd`` straight after it; the number read
 * is returned (0 at the end). Reading into the window itself spares a copy of every block from
 * a read buffer into the window, and the bytearray keeps its allocation from block to block
 * (deleting from its front and appending, it was freed and allocated again, fresh pages and
 * all, for every block). */
static PyObject *refill(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 4 || !PyByteArray_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "refill(fd, buf: bytearray, keep, size)");
        return NULL;
    }
    PyObject *buf = args[1];
    long fd = PyLong_AsLong(args[0]);
    Py_ssize_t keep = PyLong_AsSsize_t(args[2]);
    Py_ssize_t size = PyLong_AsSsize_t(args[3]);
    if (PyErr_Occurred())
        return NULL;
    Py_ssize_t len = PyByteArray_GET_SIZE(buf);
    if (fd < 0 || fd > INT_MAX || keep < 0 || keep > len || size < 0 || size > PY_SSIZE_T_MAX - len) {
        PyErr_SetString(PyExc_ValueError, "refill: fd, keep or size out of range");
        return NULL;
    }
    if (((PyByteArrayObject *)buf)->ob_exports > 0) {
        /* Its size could not be changed after the read: refused before anything is read. */
        PyErr_SetString(PyExc_BufferError, "refill: the window has a view on it");
        return NULL;
    }
    Py_ssize_t carry = len - keep;
    if (PyByteArray_Resize(buf, len > carry + size ? len : carry + size) < 0)
        return NULL;
    char *d = PyByteArray_AS_STRING(buf);
    memmove(d, d + keep, (size_t)carry);
    Py_ssize_t got;
    int err = 0;
    for (;;) {
        Py_BEGIN_ALLOW_THREADS
        got = KB_READ((int)fd, d + carry, size);
        err = errno;
        Py_END_ALLOW_THREADS
        if (got >= 0 || err != EINTR)
            break;
        if (PyErr_CheckSignals() < 0) {
            got = -2;
            break;
        }
    }
    if (got < 0) {
        if (got == -1) {
            errno = err;
            PyErr_SetFromErrno(PyExc_OSError);
        }
        PyByteArray_Resize(buf, carry); /* what was kept stays, at the front */
        return NULL;
    }
    if (PyByteArray_Resize(buf, carry + got) < 0)
        return NULL;
    return PyLong_FromSsize_t(got);
}

/* The candidate scan in use (see Prefixes): "avx512", "avx2", "sse2" or, without vector
 * compares, "bytes"; given one of those names, that scan is used from then on, if this processor
 * runs it.
 * Tests use it to check each scan against the twins on a machine that would pick only one. */
/* buckets(needles, count) -> list: the bucket (0 to count - 1) that the vector scans put each
 * needle in when they have ``count`` of them (see assign_buckets); for the tests and for a look
 * at a set of needles. None where the vector scans are not built. */
static PyObject *buckets(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    Needles w = {0};
    int count;
    if (nargs != 2 || !PyLong_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "buckets(needles: tuple of bytes, count: int)");
        return NULL;
    }
    if (needles_of(args[0], &w) < 0 || ((count = PyLong_AsLong(args[1])) == -1 && PyErr_Occurred()))
        return NULL;
    if (count < 1 || count > 8) {
        PyErr_SetString(PyExc_ValueError, "buckets: count must be 1 to 8");
        return NULL;
    }
#ifdef KB_AVX2
    unsigned char of[MAX_NEEDLES];
    AssignmentKey key;
    key_of(&w, count, &key);
    buckets_of(&w, &key, of);
    PyObject *out = PyList_New(w.count);
    for (int k = 0; out != NULL && k < w.count; k++)
        PyList_SET_ITEM(out, k, PyLong_FromLong(of[k]));
    return out;
#else
    Py_RETURN_NONE;
#endif
}

static PyObject *kernel(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs > 1 || (nargs == 1 && !PyUnicode_Check(args[0]))) {
        PyErr_SetString(PyExc_TypeError, "kernel([name])");
        return NULL;
    }
#ifdef KB_SSE2
    if (nargs == 1) {
        if (PyUnicode_CompareWithASCIIString(args[0], "sse2") == 0)
            candidates = candidates_sse2;
#ifdef KB_AVX2
        else if (PyUnicode_CompareWithASCIIString(args[0], "avx2") == 0 && __builtin_cpu_supports("avx2"))
            candidates = candidates_avx2;
        else if (PyUnicode_CompareWithASCIIString(args[0], "avx512") == 0 && __builtin_cpu_supports("avx512bw"))
            candidates = candidates_avx512;
#endif
        else {
            PyErr_Format(PyExc_ValueError, "kernel %R is not known or not run by this processor", args[0]);
            return NULL;
        }
    }
#ifdef KB_AVX2
    if (candidates == candidates_avx2)
        return PyUnicode_FromString("avx2");
    if (candidates == candidates_avx512)
        return PyUnicode_FromString("avx512");
#endif
    return PyUnicode_FromString("sse2");
#else
    if (nargs == 1 && PyUnicode_CompareWithASCIIString(args[0], "bytes") != 0) {
        PyErr_Format(PyExc_ValueError, "kernel %R is not known or not run by this processor", args[0]);
        return NULL;
    }
    return PyUnicode_FromString("bytes");
#endif
}

static PyMethodDef methods[] = {
    {"buckets", (PyCFunction)(void (*)(void))buckets, METH_FASTCALL, "The vector scans' bucket for each needle, given the count of buckets."},
    {"hex_runs", hex_runs, METH_O, "(start, end) of every run of at least 64 hex digits, in order."},
    {"count_starts", (PyCFunction)(void (*)(void))count_starts, METH_FASTCALL,
     "For each needle, its non-overlapping occurrences that start in data[start:stop]."},
    {"find_starts", (PyCFunction)(void (*)(void))find_starts, METH_FASTCALL,
     "(offset, needle index) of every occurrence of every needle inside data[start:stop], sorted."},
    {"email_ats", (PyCFunction)(void (*)(void))email_ats, METH_FASTCALL,
     "Offsets of each '@' in data[start:end] that a domain follows (see kitbuild.speedups)."},
    {"census", (PyCFunction)(void (*)(void))census, METH_FASTCALL,
     "Count each digest printed in data[start:stop] in counts; return their offsets."},
    {"withheld_spans", (PyCFunction)(void (*)(void))withheld_spans, METH_FASTCALL,
     "(start, end) of each printed digest whose lower-case bytes are in withheld."},
    {"replace_bounded", (PyCFunction)(void (*)(void))replace_bounded, METH_FASTCALL,
     "(data with each occurrence of literal at a boundary replaced, how many); data itself if none."},
    {"replace_values", (PyCFunction)(void (*)(void))replace_values, METH_FASTCALL,
     "(data with each value after marker that safes names replaced, markers found, replaced, any unread, unmatched values)."},
    {"contains", (PyCFunction)(void (*)(void))contains, METH_FASTCALL, "Whether needle occurs in data."},
    {"quiet", (PyCFunction)(void (*)(void))quiet, METH_FASTCALL,
     "Whether data holds no digest-long hex run, no e-mail '@' and none of the needles in groups."},
    {"leftmost_starts", (PyCFunction)(void (*)(void))leftmost_starts, METH_FASTCALL,
     "Leftmost-first, non-overlapping occurrences of the needles in all of data, less those their guards refuse."},
    {"record_walk", (PyCFunction)(void (*)(void))record_walk, METH_FASTCALL,
     "(census, count_starts of counted, leftmost_starts of anchors, email_ats) over all of data, in one call."},
    {"kernel", (PyCFunction)(void (*)(void))kernel, METH_FASTCALL,
     "The vector scan that finds needles' candidates; with a name, use that one instead."},
    {"refill", (PyCFunction)(void (*)(void))refill, METH_FASTCALL,
     "Move buf[keep:] to the front of buf, read up to size bytes from fd after it; how many."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "kitbuild._speedups", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__speedups(void) {
    init_tables();
#ifdef KB_AVX2
    init_weights();
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512bw"))
        candidates = candidates_avx512;
    else if (__builtin_cpu_supports("avx2"))
        candidates = candidates_avx2;
#endif
    return PyModule_Create(&module);
}
