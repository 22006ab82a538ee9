/* benchtui.parsers._fio_json_pass: an interval's buckets from two of fio json+'s cumulative
 * ``bins`` objects in one compiled pass (the optional accelerator of _fio_json_walked.py).
 *
 * walk(raw, prev, cuts) walks the current dump's dict and the previous one's (or none) side
 * by side, subtracts each bucket's count, keeps the interval's running sums (int64, in a
 * bytes object) and carries the previous dump's blocks (``cuts``: where each ends) to the
 * current dump's positions, as _fio_json_probed._carried does. find(raw, sums, qs) gives the
 * bucket key holding each percentile. Both answer None for anything they do not take as fio
 * prints it (a key or a count that is not a plain str or int, a count out of range or going
 * down, a bucket gone, keys out of order on a first dump): the caller then takes the
 * pure-Python path, which decides what such input means. No I/O, no state.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Counts and their running sums stay at or under 2**53: a float holds them exactly, so a
 * percentile's target (ceil(q * total)) is the very one Python computes. */
#define MAX_COUNT ((int64_t)1 << 53)
/* fio's bucket keys are ns values; 18 digits stay far within int64. */
#define MAX_KEY_DIGITS 18

/* A plain int in [0, MAX_COUNT] into *out: 1; anything else 0 (no exception set). */
static int
count_of(PyObject *v, int64_t *out)
{
    if (!PyLong_CheckExact(v))
        return 0;
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

/* ``cuts`` (a list of ints, strictly ascending, the last == m) into a new C array of
 * *ncuts; NULL when it is not that (no exception) or on no memory (MemoryError set). */
static Py_ssize_t *
read_cuts(PyObject *cuts, Py_ssize_t m, Py_ssize_t *ncuts)
{
    if (!PyList_CheckExact(cuts))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(cuts);
    if (n < 1)
        return NULL;
    Py_ssize_t *out = PyMem_New(Py_ssize_t, n);
    if (out == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    Py_ssize_t last = 0;
    for (Py_ssize_t b = 0; b < n; b++) {
        int64_t x;
        if (!count_of(PyList_GET_ITEM(cuts, b), &x) || x <= last || x > m) {
            PyMem_Free(out);
            return NULL;
        }
        out[b] = last = (Py_ssize_t)x;
    }
    if (last != m) {
        PyMem_Free(out);
        return NULL;
    }
    *ncuts = n;
    return out;
}

/* The running sums of a first dump's counts (keys strictly ascending): 1, 0 when not
 * taken. */
static int
walk_first(PyObject *raw, int64_t *sums)
{
    Py_ssize_t pos = 0, i = 0;
    PyObject *k, *v;
    int64_t run = 0, last = -1;
    while (PyDict_Next(raw, &pos, &k, &v)) {
        int64_t c, ns;
        if (!count_of(v, &c) || !key_value(k, &ns) || ns <= last)
            return 0;
        last = ns;
        run += c;
        if (run > MAX_COUNT)
            return 0;
        sums[i++] = run;
    }
    return 1;
}

/* The running sums of raw less prev, prev's blocks carried into *out (NULL when raw has
 * prev's buckets alone: the blocks are the same): 1; 0 when not taken (no exception), -1 on
 * an error (set). */
static int
walk_from(PyObject *raw, PyObject *prev, PyObject *cuts, int64_t *sums, PyObject **out)
{
    Py_ssize_t n = PyDict_GET_SIZE(raw), m = PyDict_GET_SIZE(prev), ncuts = 0;
    Py_ssize_t *at = read_cuts(cuts, m, &ncuts);
    if (at == NULL)
        return PyErr_Occurred() ? -1 : 0;
    PyObject *carried = NULL;
    if (n != m && (carried = PyList_New(ncuts)) == NULL) {
        PyMem_Free(at);
        return -1;
    }
    Py_ssize_t pos = 0, ppos = 0, i = 0, j = 0, b = 0;
    PyObject *k, *v, *pk = NULL, *pv = NULL;
    int64_t run = 0;
    int taken = 0;
    if (m > 0)
        PyDict_Next(prev, &ppos, &pk, &pv);
    while (PyDict_Next(raw, &pos, &k, &v)) {
        int64_t c, p = 0;
        if (!count_of(v, &c))
            goto done;
        if (j < m && same_key(k, pk)) {
            if (!count_of(pv, &p) || c < p)  /* a count went down: fio restarted? */
                goto done;
            if (++j == at[b]) {
                if (carried != NULL) {
                    PyObject *end = PyLong_FromSsize_t(i + 1);
                    if (end == NULL) {
                        taken = -1;
                        goto done;
                    }
                    PyList_SET_ITEM(carried, b, end);
                }
                b++;
            }
            if (j < m)
                PyDict_Next(prev, &ppos, &pk, &pv);
        }
        else if (n == m) {  /* not the previous dump's keys */
            goto done;
        }
        run += c - p;
        if (run > MAX_COUNT)
            goto done;
        sums[i++] = run;
    }
    if (j < m)  /* a bucket of prev went away */
        goto done;
    if (carried != NULL) {  /* the buckets past prev's last go to the last block */
        PyObject *end = PyLong_FromSsize_t(n);
        if (end == NULL) {
            taken = -1;
            goto done;
        }
        Py_SETREF(PyList_GET_ITEM(carried, ncuts - 1), end);
    }
    taken = 1;
done:
    PyMem_Free(at);
    if (taken == 1)
        *out = carried;
    else
        Py_XDECREF(carried);
    return taken;
}

static PyObject *
walk(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "walk(raw, prev, cuts) takes 3 arguments");
        return NULL;
    }
    PyObject *raw = args[0], *prev = args[1], *cuts = args[2];
    if (!PyDict_CheckExact(raw) || (prev != Py_None && !PyDict_CheckExact(prev)))
        Py_RETURN_NONE;
    Py_ssize_t n = PyDict_GET_SIZE(raw);
    if (n < 1 || n > PY_SSIZE_T_MAX / 8)
        Py_RETURN_NONE;
    PyObject *sums = PyBytes_FromStringAndSize(NULL, n * 8);
    if (sums == NULL)
        return NULL;
    int64_t *cum = (int64_t *)PyBytes_AS_STRING(sums);
    PyObject *carried = NULL;
    int taken = prev == Py_None ? walk_first(raw, cum)
                                : walk_from(raw, prev, cuts, cum, &carried);
    /* (a dict changed while walked is not fio's: PyDict_Next saw fewer items) */
    if (taken == 1 && PyDict_GET_SIZE(raw) != n) {
        Py_XDECREF(carried);
        taken = 0;
    }
    if (taken != 1) {
        Py_DECREF(sums);
        if (taken < 0)
            return NULL;
        Py_RETURN_NONE;
    }
    PyObject *total = PyLong_FromLongLong(cum[n - 1]);
    if (total == NULL) {
        Py_DECREF(sums);
        Py_XDECREF(carried);
        return NULL;
    }
    if (carried == NULL)
        carried = Py_NewRef(Py_None);
    return Py_BuildValue("(NNN)", total, sums, carried);
}

/* The first bucket whose running sum reaches target (sums ascending, the last >= it). */
static Py_ssize_t
first_reaching(const int64_t *sums, Py_ssize_t n, int64_t target)
{
    Py_ssize_t lo = 0, hi = n - 1;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (sums[mid] < target)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static PyObject *
find(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "find(raw, sums, qs) takes 3 arguments");
        return NULL;
    }
    PyObject *raw = args[0], *sums = args[1], *qs = args[2];
    if (!PyDict_CheckExact(raw) || !PyBytes_CheckExact(sums) || !PyList_CheckExact(qs))
        Py_RETURN_NONE;
    Py_ssize_t n = PyBytes_GET_SIZE(sums) / 8, nq = PyList_GET_SIZE(qs);
    if (n < 1 || PyBytes_GET_SIZE(sums) % 8 || PyDict_GET_SIZE(raw) != n)
        Py_RETURN_NONE;
    const int64_t *cum = (const int64_t *)PyBytes_AS_STRING(sums);
    int64_t total = cum[n - 1];
    if (total <= 0)
        Py_RETURN_NONE;
    PyObject *out = PyList_New(nq);
    if (out == NULL)
        return NULL;
    Py_ssize_t pos = 0, i = -1;
    PyObject *k = NULL, *v;
    for (Py_ssize_t t = 0; t < nq; t++) {
        PyObject *pair = PyList_GET_ITEM(qs, t);
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) < 1
            || !PyFloat_CheckExact(PyTuple_GET_ITEM(pair, 0)))
            goto not_taken;
        double q = PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(pair, 0));
        if (!(q > 0.0 && q <= 1.0))
            goto not_taken;
        /* (q * total <= total: the target is reached within the buckets) */
        Py_ssize_t want = first_reaching(cum, n, (int64_t)ceil(q * (double)total));
        if (want < i) {  /* (percentiles not ascending: from the start again) */
            pos = 0;
            i = -1;
        }
        while (i < want) {
            if (!PyDict_Next(raw, &pos, &k, &v))
                goto not_taken;  /* (the dict changed: not fio's) */
            i++;
        }
        PyList_SET_ITEM(out, t, Py_NewRef(k));
    }
    return out;
not_taken:
    Py_DECREF(out);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"walk", (PyCFunction)(void (*)(void))walk, METH_FASTCALL,
     "walk(raw, prev, cuts) -> (total, sums, carried cuts or None) or None"},
    {"find", (PyCFunction)(void (*)(void))find, METH_FASTCALL,
     "find(raw, sums, qs) -> the bucket key of each (q, label) of qs, or None"},
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
