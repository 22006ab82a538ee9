/* benchtui.export._jsonl_lines: JSON Lines written by compiled code, the optional accelerator
 * of export/formats.py's JsonlWriter (whose pure-Python path writes the same bytes).
 *
 * It writes the line of each sample with no histogram whose numbers are plain floats, ints
 * within int64 or None (``value`` not), whose strings are plain strs and labels a dict of
 * them: orjson's line of ``Sample.to_dict()``. orjson formats the numbers, all at once, so
 * that their text is orjson's by construction (not Python's repr: ``1e-7``, ``0.00001``):
 * numbers(samples) lists them in the order the lines use them (``t`` and ``elapsed`` only
 * where they differ from the previous line's, whose text is then copied) with the indices
 * of the other samples; lines(samples, orjson's text of them, the others' lines or None)
 * walks the samples again, deciding alike, and answers (the lines as one str, how many),
 * or raises if the text and the lines are not used exactly.
 *
 * bind(cls) first reads where the ``Sample`` class keeps its slots; an instance of another
 * class (a subclass too) is one of the others. No I/O; no Python code runs during a walk
 * (exact types only: slots, strs, dicts, floats and ints are read directly).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#if PY_VERSION_HEX >= 0x030C0000
#define OBJECT_SLOT Py_T_OBJECT_EX
#else
#include <structmember.h>
#define OBJECT_SLOT T_OBJECT_EX
#endif

/* The Sample fields read here, in this order (bind's names). */
enum { F_T, F_ELAPSED, F_HOST, F_TOOL, F_KIND, F_METRIC, F_VALUE, F_LABELS, F_HISTOGRAM,
       F_DURATION, N_FIELDS };
static const char *const FIELD_NAMES[N_FIELDS] = {
    "t", "elapsed", "host", "tool", "kind", "metric", "value", "labels", "histogram",
    "duration",
};

/* The bound class (a strong reference) and its slots' offsets. */
static PyTypeObject *sample_type = NULL;
static Py_ssize_t offsets[N_FIELDS];

/* A usual sample's fields (borrowed). */
typedef struct {
    PyObject *f[N_FIELDS];
} Fields;

static PyObject *
bind(PyObject *self, PyObject *cls)
{
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "bind() takes the Sample class");
        return NULL;
    }
    PyTypeObject *type = (PyTypeObject *)cls;
    Py_ssize_t found[N_FIELDS];
    for (int i = 0; i < N_FIELDS; i++) {
        PyObject *descr = PyObject_GetAttrString(cls, FIELD_NAMES[i]);
        if (descr == NULL)
            return NULL;
        int ok = PyObject_TypeCheck(descr, &PyMemberDescr_Type);
        Py_ssize_t offset = 0;
        if (ok) {
            PyMemberDef *m = ((PyMemberDescrObject *)descr)->d_member;
            offset = m->offset;
            ok = m->type == OBJECT_SLOT && offset >= (Py_ssize_t)sizeof(PyObject)
                 && offset + (Py_ssize_t)sizeof(PyObject *) <= type->tp_basicsize;
        }
        Py_DECREF(descr);
        if (!ok) {
            PyErr_Format(PyExc_TypeError, "bind(): %s.%s is not an object slot",
                         type->tp_name, FIELD_NAMES[i]);
            return NULL;
        }
        found[i] = offset;
    }
    memcpy(offsets, found, sizeof(offsets));
    Py_INCREF(cls);
    Py_XSETREF(sample_type, type);
    Py_RETURN_NONE;
}

/* A str orjson writes as this module does: 1 (its UTF-8 is then cached in it); 0 for any
 * other object or a str with lone surrogates (no exception set). */
static int
plain_str(PyObject *s)
{
    if (!PyUnicode_CheckExact(s))
        return 0;
    if (PyUnicode_IS_ASCII(s))
        return 1;
    if (PyUnicode_AsUTF8AndSize(s, NULL) == NULL) {
        PyErr_Clear();
        return 0;
    }
    return 1;
}

/* A number orjson writes as itself: a float, an int within int64, or None where allowed. */
static int
plain_number(PyObject *v, int none_ok)
{
    if (PyFloat_CheckExact(v))
        return 1;
    if (v == Py_None)
        return none_ok;
    if (!PyLong_CheckExact(v))
        return 0;
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (x == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return overflow == 0;
}

/* The usual sample's fields into *out: 1; 0 for any other sample. */
static int
usual(PyObject *s, Fields *out)
{
    if (Py_TYPE(s) != sample_type)
        return 0;
    for (int i = 0; i < N_FIELDS; i++) {
        PyObject *v = *(PyObject **)((char *)s + offsets[i]);
        if (v == NULL)  /* (a slot never set) */
            return 0;
        out->f[i] = v;
    }
    if (out->f[F_HISTOGRAM] != Py_None)
        return 0;
    if (!plain_number(out->f[F_T], 1) || !plain_number(out->f[F_ELAPSED], 1)
            || !plain_number(out->f[F_DURATION], 1) || !plain_number(out->f[F_VALUE], 0))
        return 0;
    for (int i = F_HOST; i <= F_METRIC; i++)
        if (!plain_str(out->f[i]))
            return 0;
    PyObject *labels = out->f[F_LABELS];
    if (!PyDict_CheckExact(labels))
        return 0;
    Py_ssize_t pos = 0;
    PyObject *k, *v;
    while (PyDict_Next(labels, &pos, &k, &v))
        if (!plain_str(k) || !plain_str(v))
            return 0;
    return 1;
}

/* Whether a number's text is the previous one's: the same object, or floats of the same
 * bits (-0.0 is not 0.0), or both None. */
static int
same_number(PyObject *a, PyObject *b)
{
    if (a == b)
        return 1;
    if (a == NULL || b == NULL || !PyFloat_CheckExact(a) || !PyFloat_CheckExact(b))
        return 0;
    double x = PyFloat_AS_DOUBLE(a), y = PyFloat_AS_DOUBLE(b);
    return memcmp(&x, &y, sizeof x) == 0;
}

static PyObject *
numbers(PyObject *self, PyObject *samples)
{
    if (sample_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "numbers() before bind()");
        return NULL;
    }
    if (!PyList_CheckExact(samples)) {
        PyErr_SetString(PyExc_TypeError, "numbers() takes a list of samples");
        return NULL;
    }
    PyObject *nums = PyList_New(0);
    PyObject *others = PyList_New(0);
    if (nums == NULL || others == NULL)
        goto error;
    PyObject *prev_t = NULL, *prev_elapsed = NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(samples); i++) {
        Fields fs;
        if (!usual(PyList_GET_ITEM(samples, i), &fs)) {
            PyObject *index = PyLong_FromSsize_t(i);
            int failed = index == NULL || PyList_Append(others, index) < 0;
            Py_XDECREF(index);
            if (failed)
                goto error;
            continue;
        }
        if (!same_number(fs.f[F_T], prev_t) && PyList_Append(nums, fs.f[F_T]) < 0)
            goto error;
        prev_t = fs.f[F_T];
        if (fs.f[F_ELAPSED] != Py_None) {
            if (!same_number(fs.f[F_ELAPSED], prev_elapsed)
                    && PyList_Append(nums, fs.f[F_ELAPSED]) < 0)
                goto error;
            prev_elapsed = fs.f[F_ELAPSED];
        }
        if (fs.f[F_DURATION] != Py_None && PyList_Append(nums, fs.f[F_DURATION]) < 0)
            goto error;
        if (PyList_Append(nums, fs.f[F_VALUE]) < 0)
            goto error;
    }
    PyObject *out = PyTuple_Pack(2, nums, others);
    Py_DECREF(nums);
    Py_DECREF(others);
    return out;
error:
    Py_XDECREF(nums);
    Py_XDECREF(others);
    return NULL;
}

/* The lines being written: a buffer that grows (PyMem), and where the numbers' text is. */
typedef struct {
    char *data;
    Py_ssize_t len, cap;
    const char *num, *num_end;  /* the numbers' text left, after its '[' */
    int ascii;                  /* whether every byte written is ASCII */
} Out;

/* Room for ``more`` bytes: the buffer doubled as often as needed. */
static int
grow(Out *o, Py_ssize_t more)
{
    if (more > PY_SSIZE_T_MAX / 4 - o->len) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t cap = o->cap ? o->cap : 1 << 16;
    while (cap - o->len < more)
        cap *= 2;
    char *data = PyMem_Realloc(o->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    o->data = data;
    o->cap = cap;
    return 0;
}

static inline int
reserve(Out *o, Py_ssize_t more)
{
    return more <= o->cap - o->len ? 0 : grow(o, more);
}

static inline int
put(Out *o, const char *s, Py_ssize_t n)
{
    if (reserve(o, n) < 0)
        return -1;
    memcpy(o->data + o->len, s, (size_t)n);
    o->len += n;
    return 0;
}

#define PUT_LITERAL(o, s) put((o), (s), (Py_ssize_t)(sizeof(s) - 1))

/* How orjson escapes each byte of a string: 0 not (UTF-8 as it is: non-ASCII is not
 * escaped), else the letter after the backslash ('u': \u00XX, the other control bytes). */
static unsigned char ESCAPE[256];

static void
init_escapes(void)
{
    for (int c = 0; c < 0x20; c++)
        ESCAPE[c] = 'u';
    ESCAPE['"'] = '"';
    ESCAPE['\\'] = '\\';
    ESCAPE['\b'] = 'b';
    ESCAPE['\t'] = 't';
    ESCAPE['\n'] = 'n';
    ESCAPE['\f'] = 'f';
    ESCAPE['\r'] = 'r';
}

/* A byte orjson escapes, escaped at w; where the escape ends. */
static char *
escaped(char *w, unsigned char c)
{
    *w++ = '\\';
    *w++ = (char)ESCAPE[c];
    if (ESCAPE[c] == 'u') {
        *w++ = '0';
        *w++ = '0';
        *w++ = "0123456789abcdef"[c >> 4];
        *w++ = "0123456789abcdef"[c & 15];
    }
    return w;
}

/* A str (plain_str's) as a JSON string, quoted. */
static inline int
put_str(Out *o, PyObject *s)
{
    const unsigned char *p;
    Py_ssize_t n;
    if (PyUnicode_IS_ASCII(s)) {
        p = (const unsigned char *)PyUnicode_DATA(s);
        n = PyUnicode_GET_LENGTH(s);
    } else {
        p = (const unsigned char *)PyUnicode_AsUTF8AndSize(s, &n);  /* (cached by plain_str) */
        if (p == NULL)
            return -1;
        o->ascii = 0;
    }
    /* at most 6 bytes a byte (\u00XX), and the quotes */
    if (n > PY_SSIZE_T_MAX / 8) {
        PyErr_NoMemory();
        return -1;
    }
    if (reserve(o, 6 * n + 2) < 0)
        return -1;
    char *w = o->data + o->len;
    *w++ = '"';
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        if (ESCAPE[c])
            w = escaped(w, c);
        else
            *w++ = (char)c;
    }
    *w++ = '"';
    o->len = w - o->data;
    return 0;
}

/* The next number of the numbers' text (up to its ',' or ']'), copied. */
static int
put_number(Out *o)
{
    const char *start = o->num, *p = start;
    while (p < o->num_end && *p != ',' && *p != ']')
        p++;
    if (p == start || p == o->num_end) {
        PyErr_SetString(PyExc_ValueError, "lines(): the numbers' text ends before the samples");
        return -1;
    }
    o->num = p + 1;
    return put(o, start, p - start);
}

/* A number that may be the previous line's (``same``): its text copied from there, or the
 * next of the numbers' text; *at and *len then say where it is in the buffer. */
static int
put_kept(Out *o, int same, Py_ssize_t *at, Py_ssize_t *len)
{
    Py_ssize_t start = o->len;
    if (same) {
        if (reserve(o, *len) < 0)
            return -1;
        memcpy(o->data + o->len, o->data + *at, (size_t)*len);  /* (*at + *len <= o->len) */
        o->len += *len;
    } else if (put_number(o) < 0) {
        return -1;
    }
    *at = start;
    *len = o->len - start;
    return 0;
}

static PyObject *
lines(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyList_CheckExact(args[0]) || !PyBytes_CheckExact(args[1])
            || !PyList_CheckExact(args[2])) {
        PyErr_SetString(PyExc_TypeError, "lines(samples: list, text: bytes, written: list)");
        return NULL;
    }
    if (sample_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "lines() before bind()");
        return NULL;
    }
    PyObject *samples = args[0], *written = args[2];
    const char *text = PyBytes_AS_STRING(args[1]);
    Py_ssize_t text_len = PyBytes_GET_SIZE(args[1]);
    if (text_len < 2 || text[0] != '[' || text[text_len - 1] != ']') {
        PyErr_SetString(PyExc_ValueError, "lines(): the numbers' text is not a JSON array");
        return NULL;
    }
    Out o = {NULL, 0, 0, text + 1, text + text_len, 1};
    if (text_len == 2)  /* [] */
        o.num = o.num_end;
    /* where the previous line's t and elapsed texts are in the buffer */
    Py_ssize_t t_at = 0, t_len = 0, e_at = 0, e_len = 0;
    PyObject *prev_t = NULL, *prev_elapsed = NULL;
    Py_ssize_t next_other = 0, count = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(samples); i++) {
        Fields fs;
        if (!usual(PyList_GET_ITEM(samples, i), &fs)) {
            if (next_other >= PyList_GET_SIZE(written)) {
                PyErr_SetString(PyExc_ValueError, "lines(): fewer lines written than others");
                goto error;
            }
            PyObject *line = PyList_GET_ITEM(written, next_other++);
            if (line == Py_None)
                continue;
            if (!PyBytes_CheckExact(line)) {
                PyErr_SetString(PyExc_TypeError, "lines(): a written line is not bytes");
                goto error;
            }
            o.ascii = 0;  /* (maybe not: decoded as UTF-8 below) */
            if (put(&o, PyBytes_AS_STRING(line), PyBytes_GET_SIZE(line)) < 0
                    || PUT_LITERAL(&o, "\n") < 0)
                goto error;
            count++;
            continue;
        }
        if (PUT_LITERAL(&o, "{\"t\":") < 0
                || put_kept(&o, same_number(fs.f[F_T], prev_t), &t_at, &t_len) < 0)
            goto error;
        prev_t = fs.f[F_T];
        if (fs.f[F_ELAPSED] != Py_None) {
            if (PUT_LITERAL(&o, ",\"elapsed\":") < 0
                    || put_kept(&o, same_number(fs.f[F_ELAPSED], prev_elapsed), &e_at,
                                &e_len) < 0)
                goto error;
            prev_elapsed = fs.f[F_ELAPSED];
        }
        if (fs.f[F_DURATION] != Py_None
                && (PUT_LITERAL(&o, ",\"duration\":") < 0 || put_number(&o) < 0))
            goto error;
        if (PUT_LITERAL(&o, ",\"host\":") < 0 || put_str(&o, fs.f[F_HOST]) < 0
                || PUT_LITERAL(&o, ",\"tool\":") < 0 || put_str(&o, fs.f[F_TOOL]) < 0
                || PUT_LITERAL(&o, ",\"kind\":") < 0 || put_str(&o, fs.f[F_KIND]) < 0
                || PUT_LITERAL(&o, ",\"metric\":") < 0 || put_str(&o, fs.f[F_METRIC]) < 0
                || PUT_LITERAL(&o, ",\"value\":") < 0 || put_number(&o) < 0
                || PUT_LITERAL(&o, ",\"labels\":{") < 0)
            goto error;
        Py_ssize_t pos = 0;
        PyObject *k, *v;
        int first = 1;
        while (PyDict_Next(fs.f[F_LABELS], &pos, &k, &v)) {
            if ((!first && PUT_LITERAL(&o, ",") < 0) || put_str(&o, k) < 0
                    || PUT_LITERAL(&o, ":") < 0 || put_str(&o, v) < 0)
                goto error;
            first = 0;
        }
        if (PUT_LITERAL(&o, "}}\n") < 0)
            goto error;
        count++;
    }
    if (o.num != o.num_end || next_other != PyList_GET_SIZE(written)) {
        PyErr_SetString(PyExc_ValueError, "lines(): numbers or lines left over: the samples "
                        "are not those numbers() walked");
        goto error;
    }
    PyObject *str;
    if (o.ascii) {  /* (the usual case: a copy, not a decoding) */
        str = PyUnicode_New(o.len, 127);
        if (str != NULL && o.len)
            memcpy(PyUnicode_DATA(str), o.data, (size_t)o.len);
    } else {
        str = PyUnicode_DecodeUTF8(o.data ? o.data : "", o.len, NULL);
    }
    PyMem_Free(o.data);
    if (str == NULL)
        return NULL;
    PyObject *n = PyLong_FromSsize_t(count);
    PyObject *out = n ? PyTuple_Pack(2, str, n) : NULL;
    Py_DECREF(str);
    Py_XDECREF(n);
    return out;
error:
    PyMem_Free(o.data);
    return NULL;
}

static PyMethodDef methods[] = {
    {"bind", bind, METH_O, "bind(Sample): where the class keeps its fields"},
    {"numbers", numbers, METH_O,
     "numbers(samples) -> (the usual samples' numbers, the other samples' indices)"},
    {"lines", (PyCFunction)(void (*)(void))lines, METH_FASTCALL,
     "lines(samples, orjson.dumps(numbers), the others' lines or None) -> (text, count)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_jsonl_lines",
    .m_doc = "JSON Lines: the lines of the samples without a histogram, compiled.",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC
PyInit__jsonl_lines(void)
{
    init_escapes();
    return PyModule_Create(&module);
}
