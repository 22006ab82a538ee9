/* benchtui.parsers._fio_json_pass: an interval's buckets from two of fio json+'s cumulative
 * ``bins`` objects in one compiled pass (the optional accelerator of _fio_json_walked.py;
 * pure Python, _fio_json_probed.py, does the same where it is not built).
 *
 * walk(raw, prev_counts, prev_keys, cuts) goes once over a dump's ``bins`` (a dict as orjson
 * decodes it, in fio's order) beside the previous dump's counts (int64, packed by the walk
 * that read it) and keys: it subtracts each bucket's count and keeps the interval's running
 * sums (int64, in a bytes object), and packs the dump's counts for the next walk. Where fio
 * added buckets it merges the two dumps' keys and carries the previous dump's blocks
 * (``cuts``: where each ends) to the current dump's positions, as
 * _fio_json_probed._carried does (PyDict_Next, not PyDict_Keys/Values: on 3.11 these walk
 * the dict with it too, and make a list each). find(keys, sums, qs) gives each percentile, in
 * seconds.
 *
 * Both answer None for anything they do not take as fio prints it (a count that is not a
 * plain int from 0 to 2**53, a count going down, a bucket gone, keys out of order on a first
 * dump, arguments of another kind): the caller then takes the pure-Python path, which
 * decides what such input means. No I/O, no state; no Python code runs while they do (they
 * read exact ints, strs, lists and dicts only, and allocate nothing the garbage collector
 * tracks inside the walk).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Counts and their running sums stay at or under 2**53: a float holds them exactly, so a
 * percentile's target (ceil(q * total)) is the very one Python computes. */
#define MAX_COUNT ((int64_t)1 << 53)
/* fio's bucket keys are ns values; 18 digits stay far within int64. */
#define MAX_KEY_DIGITS 18

/* A plain int in [0, MAX_COUNT] into *out: 1; anything else 0 (no exception set). */
static inline int
count_of(PyObject *v, int64_t *out)
{
    if (!PyLong_CheckExact(v))
        return 0;
#if PY_VERSION_HEX >= 0x030C0000
    if (PyUnstable_Long_IsCompact((PyLongObject *)v)) {
        Py_ssize_t x = PyUnstable_Long_CompactValue((PyLongObject *)v);
        *out = (int64_t)x;
        return x >= 0;
    }
#else
    Py_ssize_t size = Py_SIZE(v);  /* (a count of fio's is mostly one 30-bit digit) */
    if (size == 0 || size == 1) {
        *out = size ? (int64_t)((PyLongObject *)v)->ob_digit[0] : 0;
        return 1;
    }
#endif
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return 0;
    }
    if (x < 0 || x > MAX_COUNT)
        return 0;
    *out = (int64_t)x;
    return 1;
}

/* An ASCII-digit key's value into *out: 1; any other key 0. */
static int
key_value(PyObject *k, int64_t *out)
{
    if (!PyUnicode_CheckExact(k) || !PyUnicode_IS_ASCII(k))
        return 0;
    Py_ssize_t n = PyUnicode_GET_LENGTH(k);
    if (n < 1 || n > MAX_KEY_DIGITS)
        return 0;
    const char *s = (const char *)PyUnicode_DATA(k);
    int64_t x = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        x = x * 10 + (s[i] - '0');
    }
    *out = x;
    return 1;
}

/* Whether two keys are the same text (mostly the very same object: orjson caches keys). */
static int
same_key(PyObject *a, PyObject *b)
{
    if (a == b)
        return 1;
    if (!PyUnicode_CheckExact(a) || !PyUnicode_CheckExact(b))
        return 0;
    Py_ssize_t n = PyUnicode_GET_LENGTH(a);
    return n == PyUnicode_GET_LENGTH(b) && PyUnicode_KIND(a) == PyUnicode_KIND(b)
           && memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b),
                     (size_t)n * PyUnicode_KIND(a)) == 0;
}

/* One walk over a dump (raw) against the previous one (its counts packed, prev, and its
 * keys, prev_keys; prev NULL for a first dump): each count packed into counts[], the
 * interval's running sums into sums[], raw's keys into *keys (prev_keys itself when they are
 * the same), prev's blocks (ending at at[0..ncuts)) carried into *carried where buckets were
 * added. 1; 0 when not taken (no exception), -1 on an error (set). */
static int
walk_dump(PyObject *raw, const int64_t *prev, PyObject *prev_keys, const int64_t *at,
          Py_ssize_t ncuts, int64_t *counts, int64_t *sums, PyObject **keys,
          PyObject **carried)
{
    Py_ssize_t n = PyDict_GET_SIZE(raw), m = prev ? PyList_GET_SIZE(prev_keys) : 0;
    int same = prev != NULL && n == m;  /* the same buckets: prev's keys checked, kept */
    if (!same && (*keys = PyList_New(n)) == NULL)
        return -1;
    if (prev != NULL && !same && (*carried = PyList_New(ncuts)) == NULL)
        return -1;
    Py_ssize_t pos = 0, i = 0, j = 0, b = 0;
    PyObject *k, *v;
    int64_t run = 0, last = -1;
    while (PyDict_Next(raw, &pos, &k, &v)) {
        int64_t c, p = 0;
        if (i >= n || !count_of(v, &c))  /* (i >= n: the dict grew: not fio's) */
            return 0;
        if (prev == NULL) {  /* a first dump: keys ascending */
            int64_t ns;
            if (!key_value(k, &ns) || ns <= last)
                return 0;
            last = ns;
        }
        else if (j < m && same_key(k, PyList_GET_ITEM(prev_keys, j))) {
            p = prev[j];
            if (c < p)  /* a count went down */
                return 0;
            if (!same && ++j == at[b]) {  /* the end of one of prev's blocks */
                PyObject *end = PyLong_FromSsize_t(b + 1 < ncuts ? i + 1 : n);
                if (end == NULL)
                    return -1;
                PyList_SET_ITEM(*carried, b, end);
                b++;
            }
            else if (same)
                j++;
        }
        else if (same)  /* not prev's keys */
            return 0;
        if (!same)
            PyList_SET_ITEM(*keys, i, Py_NewRef(k));
        run += c - p;
        if (run > MAX_COUNT)
            return 0;
        counts[i] = c;
        sums[i++] = run;
    }
    if (i != n || (prev != NULL && j < m))  /* a bucket of prev went away (or moved) */
        return 0;
    if (same)
        *keys = Py_NewRef(prev_keys);
    return 1;
}

/* cuts (strictly ascending ints, the last == m) into a new C array; NULL when they are not
 * that (no exception) or on no memory (MemoryError set). */
static int64_t *
read_cuts(PyObject *cuts, Py_ssize_t m, Py_ssize_t *ncuts)
{
    if (!PyList_CheckExact(cuts) || PyList_GET_SIZE(cuts) < 1)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(cuts);
    int64_t *at = PyMem_New(int64_t, n), last = 0;
    if (at == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t b = 0; b < n; b++) {
        if (!count_of(PyList_GET_ITEM(cuts, b), &at[b]) || at[b] <= last || at[b] > m) {
            PyMem_Free(at);
            return NULL;
        }
        last = at[b];
    }
    if (last != m) {
        PyMem_Free(at);
        return NULL;
    }
    *ncuts = n;
    return at;
}

/* walk(raw, prev_counts, prev_keys, cuts) -> (total, sums, counts, keys, carried) or None:
 * raw's counts packed, its keys listed (prev_keys itself when they are the same), the
 * running sums of the interval, prev's blocks carried where buckets were added (else None).
 * prev_counts (packed, as a walk gave them), prev_keys and cuts: None for a first dump. */
static PyObject *
walk(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError,
                        "walk(raw, prev_counts, prev_keys, cuts) takes 4 arguments");
        return NULL;
    }
    PyObject *raw = args[0], *prev = args[1], *prev_keys = args[2];
    Py_ssize_t n = PyDict_CheckExact(raw) ? PyDict_GET_SIZE(raw) : 0, m = 0, ncuts = 0;
    if (n < 1 || n > PY_SSIZE_T_MAX / 8)
        Py_RETURN_NONE;
    int64_t *at = NULL;
    if (prev != Py_None) {
        if (!PyBytes_CheckExact(prev) || !PyList_CheckExact(prev_keys)
            || (m = PyList_GET_SIZE(prev_keys)) < 1 || PyBytes_GET_SIZE(prev) != m * 8)
            Py_RETURN_NONE;
        if (m != n && (at = read_cuts(args[3], m, &ncuts)) == NULL) {
            if (PyErr_Occurred())
                return NULL;
            Py_RETURN_NONE;
        }
    }
    PyObject *keys = NULL, *carried = NULL, *total = NULL, *out = NULL;
    PyObject *counts = PyBytes_FromStringAndSize(NULL, n * 8);
    PyObject *sums = counts ? PyBytes_FromStringAndSize(NULL, n * 8) : NULL;
    if (sums != NULL) {
        int taken = walk_dump(
            raw, prev == Py_None ? NULL : (const int64_t *)PyBytes_AS_STRING(prev), prev_keys,
            at, ncuts, (int64_t *)PyBytes_AS_STRING(counts),
            (int64_t *)PyBytes_AS_STRING(sums), &keys, &carried);
        if (taken == 0)
            out = Py_NewRef(Py_None);
        else if (taken > 0
                 && (total = PyLong_FromLongLong(((int64_t *)PyBytes_AS_STRING(sums))[n - 1])))
            out = PyTuple_Pack(5, total, sums, counts, keys, carried ? carried : Py_None);
    }
    PyMem_Free(at);
    Py_XDECREF(counts);
    Py_XDECREF(sums);
    Py_XDECREF(keys);
    Py_XDECREF(carried);
    Py_XDECREF(total);
    return out;
}

/* find(keys, sums, qs) -> [(label, seconds)] or None: for each (q, label) of qs, the bucket
 * (its key in ns, as seconds) of the first running sum that reaches ceil(q * total), as
 * Python finds it (``BIN_KEYS[key] / NS_PER_SECOND``: one float division of two exact
 * doubles, for keys up to 2**53). */
static PyObject *
find(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "find(keys, sums, qs) takes 3 arguments");
        return NULL;
    }
    PyObject *keys = args[0], *sums = args[1], *qs = args[2];
    if (!PyList_CheckExact(keys) || !PyBytes_CheckExact(sums) || !PyList_CheckExact(qs))
        Py_RETURN_NONE;
    Py_ssize_t n = PyBytes_GET_SIZE(sums) / 8, nq = PyList_GET_SIZE(qs);
    if (n < 1 || PyBytes_GET_SIZE(sums) % 8 || PyList_GET_SIZE(keys) != n)
        Py_RETURN_NONE;
    const int64_t *cum = (const int64_t *)PyBytes_AS_STRING(sums);
    int64_t total = cum[n - 1];
    if (total <= 0 || total > MAX_COUNT)
        Py_RETURN_NONE;
    PyObject *out = PyList_New(nq);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t t = 0; t < nq; t++) {
        PyObject *pair = PyList_GET_ITEM(qs, t);
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2
            || !PyFloat_CheckExact(PyTuple_GET_ITEM(pair, 0)))
            goto not_taken;
        double q = PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(pair, 0));
        if (!(q > 0.0 && q <= 1.0))
            goto not_taken;
        /* the first bucket whose running sum reaches ceil(q * total) (<= total: found) */
        int64_t target = (int64_t)ceil(q * (double)total), ns;
        Py_ssize_t lo = 0, hi = n - 1;
        while (lo < hi) {
            Py_ssize_t mid = lo + (hi - lo) / 2;
            if (cum[mid] < target)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (!key_value(PyList_GET_ITEM(keys, lo), &ns) || ns > MAX_COUNT)
            goto not_taken;
        PyObject *seconds = PyFloat_FromDouble((double)ns / 1e9);
        PyObject *found = seconds ? PyTuple_Pack(2, PyTuple_GET_ITEM(pair, 1), seconds) : NULL;
        Py_XDECREF(seconds);
        if (found == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, t, found);
    }
    return out;
not_taken:
    Py_DECREF(out);
    Py_RETURN_NONE;
}

/* pick(sums, ends) -> tuple or None: the running sums (int64, as walk made them) at the
 * positions ``ends`` (a list of ints, each within the sums), as Python ints: an interval's
 * histogram at a coarser resolution, whose buckets' running sums are those at the last fine
 * bucket of each (model/histogram.py's plan gives the positions). None when the arguments are
 * not that. */
static PyObject *
pick(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "pick(sums, ends) takes 2 arguments");
        return NULL;
    }
    PyObject *sums = args[0], *ends = args[1];
    if (!PyBytes_CheckExact(sums) || !PyList_CheckExact(ends))
        Py_RETURN_NONE;
    Py_ssize_t n = PyBytes_GET_SIZE(sums) / 8, ne = PyList_GET_SIZE(ends);
    if (n < 1 || PyBytes_GET_SIZE(sums) % 8 || ne < 1)
        Py_RETURN_NONE;
    const int64_t *cum = (const int64_t *)PyBytes_AS_STRING(sums);
    PyObject *out = PyTuple_New(ne);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t t = 0; t < ne; t++) {
        int64_t at;
        /* (the list cannot change while this runs: no Python code runs here) */
        if (!count_of(PyList_GET_ITEM(ends, t), &at) || at >= n) {
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
        PyObject *sum = PyLong_FromLongLong(cum[at]);
        if (sum == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, t, sum);
    }
    return out;
}

/* The line ends in s[0..n): 16 bytes compared at a time where SSE2 is (every x86-64). */
static Py_ssize_t
count_newlines(const unsigned char *s, Py_ssize_t n)
{
    Py_ssize_t count = 0, i = 0;
#if defined(__SSE2__)
    const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    while (i + 16 <= n) {
        /* each byte of acc counts the line ends in its lane, for at most 255 rounds */
        __m128i acc = zero;
        for (int round = 0; round < 255 && i + 16 <= n; round++, i += 16)
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(
                _mm_loadu_si128((const __m128i *)(s + i)), nl));
        /* two sums of 8 lanes each (at most 2,040), in 16-bit words 0 and 4 */
        __m128i sums = _mm_sad_epu8(acc, zero);
        count += _mm_extract_epi16(sums, 0) + _mm_extract_epi16(sums, 4);
    }
#endif
    for (; i < n; i++)
        count += s[i] == '\n';
    return count;
}

/* newlines(data, start, end) -> int or None: data.count(b"\n", start, end) for bytes or a
 * bytearray and 0 <= start, end (end past the data: to its end), as a JSON stream counts its
 * lines (_json_documents.py); None for anything else (Python counts). The GIL is held: a
 * bytearray cannot change while it is read. */
static PyObject *
newlines(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "newlines(data, start, end) takes 3 arguments");
        return NULL;
    }
    PyObject *data = args[0];
    const char *s;
    Py_ssize_t n;
    if (PyBytes_CheckExact(data)) {
        s = PyBytes_AS_STRING(data);
        n = PyBytes_GET_SIZE(data);
    }
    else if (PyByteArray_CheckExact(data)) {
        s = PyByteArray_AS_STRING(data);
        n = PyByteArray_GET_SIZE(data);
    }
    else
        Py_RETURN_NONE;
    if (!PyLong_CheckExact(args[1]) || !PyLong_CheckExact(args[2]))
        Py_RETURN_NONE;
    Py_ssize_t start = PyLong_AsSsize_t(args[1]), end = PyLong_AsSsize_t(args[2]);
    if ((start == -1 || end == -1) && PyErr_Occurred()) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    if (start < 0 || end < 0)
        Py_RETURN_NONE;
    if (end > n)
        end = n;
    return PyLong_FromSsize_t(start < end
                              ? count_newlines((const unsigned char *)s + start, end - start)
                              : 0);
}

static PyMethodDef methods[] = {
    {"walk", (PyCFunction)(void (*)(void))walk, METH_FASTCALL,
     "walk(raw, prev_counts, prev_keys, cuts) -> (total, sums, counts, keys, carried cuts "
     "or None), or None"},
    {"find", (PyCFunction)(void (*)(void))find, METH_FASTCALL,
     "find(keys, sums, qs) -> (label, seconds) for each (q, label) of qs, or None"},
    {"pick", (PyCFunction)(void (*)(void))pick, METH_FASTCALL,
     "pick(sums, ends) -> the running sums at the positions ends, as a tuple, or None"},
    {"newlines", (PyCFunction)(void (*)(void))newlines, METH_FASTCALL,
     "newlines(data, start, end) -> data.count(b'\\n', start, end), or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_fio_json_pass",
    .m_doc = "fio json+ bins: an interval's running sums and percentiles in one compiled pass.",
    .m_size = 0,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__fio_json_pass(void)
{
    return PyModuleDef_Init(&module);
}
