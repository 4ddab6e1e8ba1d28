/* XLA FFI custom-call handlers registered with a PJRT plugin's FFI extension.
 *
 * Two targets, both typed FFI (custom calls with api_version = 4):
 *   xjax_host_callback  calls back into Python: the `callback_id` (i64) attribute picks the
 *                       function; the Python dispatcher (set by xjax.runtime.ffi) receives
 *                       (id, args, rets), each arg/ret an (ffi dtype, address|None, dims)
 *                       triple, and fills the rets. Token operands/results pass as None.
 *   xjax_lapack_getrf   LU with partial pivoting by LAPACK ?getrf from the OpenBLAS that
 *                       numpy bundles (ILP64, `scipy_` prefix), dlopened on request; no
 *                       Python and no GIL. Operand and `lu` are column-major (the lowering
 *                       asks XLA for that layout); results: lu, pivots (i32, 0-based) and
 *                       the permutation (i32).
 *   xjax_blas_trsm      triangular solve by BLAS ?trsm from the same library: operands a and
 *                       b, result x, all column-major; i64 attributes left, lower, trans
 *                       (0 none, 1 transpose, 2 adjoint) and unit.
 *   xjax_lapack_geev    eigendecomposition of general matrices by ?geev: operand a, i64
 *                       attributes left and right; results w, then vl and/or vr as asked,
 *                       all complex and column-major (real geev's packed conjugate pairs
 *                       unpacked, as JAX's kernel does).
 *   xjax_lapack_gees    Schur decomposition by ?gees (no eigenvalue ordering): operand a,
 *                       i64 attribute vectors; results T, then Z when asked, column-major.
 *                       geev and gees give NaN outputs for a matrix with a non-finite entry
 *                       or on a LAPACK failure (JAX: info != 0 -> NaN).
 *
 * The structs below are the leading fields of XLA's FFI C API (xla/ffi/api/c_api.h) and of
 * the PJRT FFI extension (xla/pjrt/c/pjrt_c_api_ffi_extension.h), written here because the
 * plugin wheel ships only pjrt_c_api.h. Every struct starts with its size, which is checked
 * before fields past the common prefix are read.
 *
 * Threads and the GIL: XLA runs handlers on its own threads (or the caller's). execute()
 * releases the GIL around PJRT's Execute and every wait on an event releases it, so a
 * handler can take it with PyGILState_Ensure. With `_set_release_gil(False)` (a measurement
 * switch) a host callback on an XLA worker thread would deadlock; don't combine the two.
 */
#include <dlfcn.h>
#include <math.h>

#include "_pjrt.h"

/* ------------------------------------------------------- XLA FFI C API prefix */

typedef struct FfiExtBase {
  size_t struct_size;
  int type; /* 1: metadata */
  struct FfiExtBase *next;
} FfiExtBase;

typedef struct {
  size_t struct_size;
  FfiExtBase *extension_start;
  int major_version;
  int minor_version;
} FfiApiVersion;

typedef struct {
  size_t struct_size;
  FfiApiVersion api_version;
  uint32_t traits;
} FfiMetadata;

typedef struct {
  FfiExtBase extension_base;
  FfiMetadata *metadata;
} FfiMetadataExtension;

typedef struct {
  size_t struct_size;
  FfiExtBase *extension_start;
  int dtype;
  void *data;
  int64_t rank;
  int64_t *dims;
} FfiBuffer;

typedef struct {
  size_t struct_size;
  FfiExtBase *extension_start;
  int64_t size;
  int *types; /* 1: buffer */
  void **values;
} FfiList; /* XLA_FFI_Args and XLA_FFI_Rets have this layout */

typedef struct {
  const char *ptr;
  size_t len;
} FfiByteSpan;

typedef struct {
  int dtype;
  void *value;
} FfiScalar;

typedef struct {
  size_t struct_size;
  FfiExtBase *extension_start;
  int64_t size;
  int *types; /* 3: scalar */
  FfiByteSpan **names;
  void **attrs;
} FfiAttrs;

typedef struct {
  size_t struct_size;
  FfiExtBase *extension_start;
  const char *message;
  int errc;
} FfiErrorCreateArgs;

typedef void *(*FfiErrorCreate)(FfiErrorCreateArgs *);

typedef struct {
  size_t struct_size;
  FfiExtBase *extension_start;
  FfiApiVersion api_version;
  void *internal_api;
  FfiErrorCreate error_create;
} FfiApi;

typedef struct {
  size_t struct_size;
  FfiExtBase *extension_start;
  const FfiApi *api;
  void *ctx;
  int stage;
  FfiList args;
  FfiList rets;
  FfiAttrs attrs;
} FfiCallFrame;

enum {
  FFI_EXTENSION_METADATA = 1,
  FFI_BUFFER = 1,
  FFI_ATTR_SCALAR = 3,
  FFI_ERR_INVALID_ARGUMENT = 3,
  FFI_ERR_INTERNAL = 13,
  FFI_ERR_UNIMPLEMENTED = 12,
  FFI_S32 = 4, FFI_S64 = 5, FFI_U64 = 9, FFI_F32 = 11, FFI_F64 = 12, FFI_C64 = 15,
  FFI_TOKEN = 17, FFI_C128 = 18,
};

/* ------------------------------------------------ PJRT FFI extension prefix */

typedef struct {
  size_t struct_size;
  const char *target_name;
  size_t target_name_size;
  void *handler;
  const char *platform_name;
  size_t platform_name_size;
  int traits;
} RegisterHandlerArgs;

#define REGISTER_HANDLER_ARGS_SIZE (offsetof(RegisterHandlerArgs, traits) + sizeof(int))

typedef struct {
  PJRT_Extension_Base base;
  void *type_register;
  void *user_data_add;
  PJRT_Error *(*register_handler)(RegisterHandlerArgs *);
} FfiExtension;

/* ----------------------------------------------------------------- helpers */

/* Answers XLA's metadata query (made once, at registration): the FFI API version the
 * handler was written against (0.1, the oldest XLA accepts) and no traits. */
static int answer_metadata(FfiCallFrame *frame) {
  for (FfiExtBase *ext = frame->extension_start; ext != NULL; ext = ext->next) {
    if (ext->type != FFI_EXTENSION_METADATA) continue;
    FfiMetadata *md = ((FfiMetadataExtension *)ext)->metadata;
    if (md != NULL) {
      md->api_version.major_version = 0;
      md->api_version.minor_version = 1;
      md->traits = 0;
    }
    return 1;
  }
  return 0;
}

static void *ffi_error(FfiCallFrame *frame, int code, const char *message) {
  const FfiApi *api = frame->api;
  if (api == NULL || api->struct_size < offsetof(FfiApi, error_create) + sizeof(void *) ||
      api->error_create == NULL)
    return NULL; /* cannot happen with a conforming XLA; nothing better to do */
  FfiErrorCreateArgs a = {.struct_size = sizeof(FfiErrorCreateArgs), .message = message,
                          .errc = code};
  return api->error_create(&a);
}

static int frame_ok(FfiCallFrame *frame) {
  return frame->struct_size >= offsetof(FfiCallFrame, attrs) + sizeof(FfiAttrs);
}

static int find_i64_attr(FfiCallFrame *frame, const char *name, int64_t *out) {
  size_t len = strlen(name);
  for (int64_t i = 0; i < frame->attrs.size; i++) {
    FfiByteSpan *n = frame->attrs.names[i];
    if (n->len != len || memcmp(n->ptr, name, len) != 0) continue;
    if (frame->attrs.types[i] != FFI_ATTR_SCALAR) return 0;
    FfiScalar *s = (FfiScalar *)frame->attrs.attrs[i];
    if (s->dtype == FFI_S64 || s->dtype == FFI_U64) *out = *(int64_t *)s->value;
    else if (s->dtype == FFI_S32) *out = *(int32_t *)s->value;
    else return 0;
    return 1;
  }
  return 0;
}

/* ------------------------------------------------------------ host callback */

static char *copy_string(const char *s) { /* strdup is not C11 */
  size_t n = strlen(s) + 1;
  char *out = malloc(n);
  if (out != NULL) memcpy(out, s, n);
  return out;
}

static PyObject *dispatcher; /* set by set_callback_dispatcher; never released */

/* (dtype, address or None, dims) for each buffer of `list`; None for tokens. The
 * addresses are valid only during the call: Python copies arguments out of them. */
static PyObject *describe_buffers(FfiList *list) {
  PyObject *out = PyList_New(list->size);
  if (out == NULL) return NULL;
  for (int64_t i = 0; i < list->size; i++) {
    FfiBuffer *b = (FfiBuffer *)list->values[i];
    PyObject *item;
    if (list->types[i] != FFI_BUFFER || b->dtype == FFI_TOKEN) {
      item = Py_None;
      Py_INCREF(item);
    } else {
      PyObject *dims = PyTuple_New(b->rank);
      if (dims == NULL) goto fail;
      Py_ssize_t count = 1;
      for (int64_t d = 0; d < b->rank; d++) {
        count *= (Py_ssize_t)b->dims[d];
        PyTuple_SET_ITEM(dims, d, PyLong_FromLongLong(b->dims[d]));
      }
      PyObject *mem;
      if (b->data == NULL || count == 0) {
        mem = Py_None;
        Py_INCREF(mem);
      } else {
        mem = PyLong_FromVoidPtr(b->data);
      }
      item = mem ? Py_BuildValue("(iNN)", b->dtype, mem, dims) : NULL;
      if (item == NULL) {
        Py_XDECREF(mem);
        Py_DECREF(dims);
        goto fail;
      }
    }
    PyList_SET_ITEM(out, i, item);
  }
  return out;
fail:
  Py_DECREF(out);
  return NULL;
}

/* The exception's "Type: message" and traceback, as XLA's error message. */
static char *format_exception(void) {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  char *msg = NULL;
  PyObject *text = NULL;
  PyObject *mod = PyImport_ImportModule("traceback");
  if (mod != NULL) {
    PyObject *lines = PyObject_CallMethod(mod, "format_exception", "OOO",
                                          type ? type : Py_None, value ? value : Py_None,
                                          tb ? tb : Py_None);
    if (lines != NULL) {
      PyObject *empty = PyUnicode_FromString("");
      if (empty != NULL) text = PyUnicode_Join(empty, lines);
      Py_XDECREF(empty);
      Py_DECREF(lines);
    }
    Py_DECREF(mod);
  }
  if (text == NULL) {
    PyErr_Clear();
    text = value ? PyObject_Str(value) : NULL;
  }
  if (text != NULL) {
    const char *s = PyUnicode_AsUTF8(text);
    if (s != NULL) msg = copy_string(s);
    Py_DECREF(text);
  }
  PyErr_Clear();
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  return msg;
}

static void *host_callback_handler(FfiCallFrame *frame) {
  if (answer_metadata(frame)) return NULL;
  if (!frame_ok(frame))
    return ffi_error(frame, FFI_ERR_INVALID_ARGUMENT, "xjax_host_callback: old FFI call frame");
  int64_t id;
  if (!find_i64_attr(frame, "callback_id", &id))
    return ffi_error(frame, FFI_ERR_INVALID_ARGUMENT,
                     "xjax_host_callback: missing i64 attribute callback_id");
  if (!Py_IsInitialized())
    return ffi_error(frame, FFI_ERR_INTERNAL, "xjax_host_callback: Python is finalizing");
  PyGILState_STATE gil = PyGILState_Ensure();
  char *message = NULL;
  PyObject *args = NULL, *rets = NULL, *res = NULL;
  if (dispatcher == NULL) {
    message = copy_string("xjax_host_callback: no Python dispatcher is installed");
    goto done;
  }
  args = describe_buffers(&frame->args);
  rets = args ? describe_buffers(&frame->rets) : NULL;
  if (rets != NULL) res = PyObject_CallFunction(dispatcher, "LOO", (long long)id, args, rets);
  if (res == NULL) {
    char *exc = format_exception();
    const char *head = "xjax host callback failed: ";
    size_t n = strlen(head) + (exc ? strlen(exc) : 7) + 1;
    message = malloc(n);
    if (message != NULL) snprintf(message, n, "%s%s", head, exc ? exc : "unknown");
    free(exc);
  }
done:
  Py_XDECREF(res);
  Py_XDECREF(args);
  Py_XDECREF(rets);
  PyGILState_Release(gil);
  if (message == NULL) return NULL;
  void *err = ffi_error(frame, FFI_ERR_INTERNAL, message);
  free(message);
  return err;
}

/* --------------------------------------------------------------- LAPACK LU */

typedef void (*getrf_fn)(const int64_t *m, const int64_t *n, void *a, const int64_t *lda,
                         int64_t *ipiv, int64_t *info);
static getrf_fn getrf[4]; /* s, d, c, z */

static int getrf_index(int dtype) {
  switch (dtype) {
    case FFI_F32: return 0;
    case FFI_F64: return 1;
    case FFI_C64: return 2;
    case FFI_C128: return 3;
    default: return -1;
  }
}

static const size_t getrf_itemsize[4] = {4, 8, 8, 16};

static void *lapack_getrf_handler(FfiCallFrame *frame) {
  if (answer_metadata(frame)) return NULL;
  if (!frame_ok(frame) || frame->args.size != 1 || frame->rets.size != 3)
    return ffi_error(frame, FFI_ERR_INVALID_ARGUMENT,
                     "xjax_lapack_getrf takes 1 operand and makes 3 results");
  FfiBuffer *a = (FfiBuffer *)frame->args.values[0];
  FfiBuffer *lu = (FfiBuffer *)frame->rets.values[0];
  FfiBuffer *piv = (FfiBuffer *)frame->rets.values[1];
  FfiBuffer *perm = (FfiBuffer *)frame->rets.values[2];
  int k = getrf_index(a->dtype);
  if (k < 0 || getrf[k] == NULL || a->rank < 2 || lu->dtype != a->dtype ||
      piv->dtype != FFI_S32 || perm->dtype != FFI_S32)
    return ffi_error(frame, FFI_ERR_UNIMPLEMENTED, "xjax_lapack_getrf: unsupported operand");
  int64_t m = a->dims[a->rank - 2], n = a->dims[a->rank - 1];
  int64_t mn = m < n ? m : n, batch = 1;
  for (int64_t d = 0; d < a->rank - 2; d++) batch *= a->dims[d];
  size_t bytes = (size_t)(m * n) * getrf_itemsize[k];
  if (batch == 0 || bytes == 0) {
    /* nothing to factor; identity permutation for m > 0 */
    for (int64_t b = 0; b < batch; b++)
      for (int64_t i = 0; i < m; i++) ((int32_t *)perm->data)[b * m + i] = (int32_t)i;
    return NULL;
  }
  if (lu->data != a->data) memcpy(lu->data, a->data, bytes * (size_t)batch);
  int64_t *ipiv = malloc(sizeof(int64_t) * (size_t)(mn > 0 ? mn : 1));
  if (ipiv == NULL) return ffi_error(frame, FFI_ERR_INTERNAL, "xjax_lapack_getrf: no memory");
  for (int64_t b = 0; b < batch; b++) {
    int64_t info = 0, lda = m > 1 ? m : 1;
    getrf[k](&m, &n, (char *)lu->data + (size_t)b * bytes, &lda, ipiv, &info);
    /* info > 0: exactly singular U; the factors are still returned (as JAX does). */
    int32_t *p = (int32_t *)piv->data + b * mn;
    int32_t *q = (int32_t *)perm->data + b * m;
    for (int64_t i = 0; i < m; i++) q[i] = (int32_t)i;
    for (int64_t i = 0; i < mn; i++) {
      int64_t j = ipiv[i] - 1;
      p[i] = (int32_t)j;
      if (j >= 0 && j < m && j != i) {
        int32_t t = q[i];
        q[i] = q[j];
        q[j] = t;
      }
    }
  }
  free(ipiv);
  return NULL;
}

/* ------------------------------------------------------------ BLAS trsm */

typedef void (*trsm_fn)(const char *side, const char *uplo, const char *transa,
                        const char *diag, const int64_t *m, const int64_t *n,
                        const void *alpha, const void *a, const int64_t *lda, void *b,
                        const int64_t *ldb, size_t, size_t, size_t, size_t);
static trsm_fn trsm[4]; /* s, d, c, z; NULL when the library lacks them */

static void *blas_trsm_handler(FfiCallFrame *frame) {
  if (answer_metadata(frame)) return NULL;
  if (!frame_ok(frame) || frame->args.size != 2 || frame->rets.size != 1)
    return ffi_error(frame, FFI_ERR_INVALID_ARGUMENT,
                     "xjax_blas_trsm takes 2 operands and makes 1 result");
  FfiBuffer *a = (FfiBuffer *)frame->args.values[0];
  FfiBuffer *b = (FfiBuffer *)frame->args.values[1];
  FfiBuffer *x = (FfiBuffer *)frame->rets.values[0];
  int k = getrf_index(a->dtype);
  int64_t left, lower, trans, unit;
  if (k < 0 || trsm[k] == NULL || b->dtype != a->dtype || x->dtype != a->dtype ||
      a->rank != b->rank || b->rank < 2 || !find_i64_attr(frame, "left", &left) ||
      !find_i64_attr(frame, "lower", &lower) || !find_i64_attr(frame, "trans", &trans) ||
      !find_i64_attr(frame, "unit", &unit) || trans < 0 || trans > 2)
    return ffi_error(frame, FFI_ERR_UNIMPLEMENTED, "xjax_blas_trsm: unsupported operands");
  int64_t m = b->dims[b->rank - 2], n = b->dims[b->rank - 1];
  int64_t am = a->dims[a->rank - 1], batch = 1;
  for (int64_t d = 0; d < b->rank - 2; d++) batch *= b->dims[d];
  size_t b_bytes = (size_t)(m * n) * getrf_itemsize[k];
  size_t a_bytes = (size_t)(am * am) * getrf_itemsize[k];
  if (b_bytes == 0 || batch == 0) return NULL;
  if (x->data != b->data) memcpy(x->data, b->data, b_bytes * (size_t)batch);
  const double one[2] = {1.0, 0.0};
  const float onef[2] = {1.0f, 0.0f};
  const void *alpha = (k == 0 || k == 2) ? (const void *)onef : (const void *)one;
  const char side = left ? 'L' : 'R', uplo = lower ? 'L' : 'U', diag = unit ? 'U' : 'N';
  const char transa = trans == 0 ? 'N' : trans == 1 ? 'T' : 'C';
  int64_t lda = am > 1 ? am : 1, ldb = m > 1 ? m : 1;
  for (int64_t i = 0; i < batch; i++)
    trsm[k](&side, &uplo, &transa, &diag, &m, &n, alpha, (char *)a->data + (size_t)i * a_bytes,
            &lda, (char *)x->data + (size_t)i * b_bytes, &ldb, 1, 1, 1, 1);
  return NULL;
}

/* ------------------------------------------------- LAPACK geev and gees */

/* ILP64 prototypes; the trailing size_t are gfortran's hidden lengths of the CHARACTER
 * arguments. The real and complex variants differ in their eigenvalue and workspace
 * arguments, so each kind is stored as a plain pointer and cast at the call. */
typedef void (*geev_real_fn)(const char *, const char *, const int64_t *n, void *a,
                             const int64_t *lda, void *wr, void *wi, void *vl,
                             const int64_t *ldvl, void *vr, const int64_t *ldvr, void *work,
                             const int64_t *lwork, int64_t *info, size_t, size_t);
typedef void (*geev_complex_fn)(const char *, const char *, const int64_t *n, void *a,
                                const int64_t *lda, void *w, void *vl, const int64_t *ldvl,
                                void *vr, const int64_t *ldvr, void *work,
                                const int64_t *lwork, void *rwork, int64_t *info, size_t,
                                size_t);
typedef void (*gees_real_fn)(const char *, const char *, void *select, const int64_t *n,
                             void *a, const int64_t *lda, int64_t *sdim, void *wr, void *wi,
                             void *vs, const int64_t *ldvs, void *work, const int64_t *lwork,
                             int64_t *bwork, int64_t *info, size_t, size_t);
typedef void (*gees_complex_fn)(const char *, const char *, void *select, const int64_t *n,
                                void *a, const int64_t *lda, int64_t *sdim, void *w,
                                void *vs, const int64_t *ldvs, void *work,
                                const int64_t *lwork, void *rwork, int64_t *bwork,
                                int64_t *info, size_t, size_t);
static void *geev[4], *gees[4]; /* s, d, c, z; NULL when the library lacks them */

/* Element access for both precisions (float values pass through double exactly). */
static double get_real(const void *p, int64_t i, int dbl) {
  return dbl ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

static void put_real(void *p, int64_t i, double v, int dbl) {
  if (dbl) ((double *)p)[i] = v;
  else ((float *)p)[i] = (float)v;
}

/* count scalars (twice the elements for complex) all finite? */
static int all_finite(const void *p, int64_t count, int dbl) {
  for (int64_t i = 0; i < count; i++)
    if (!isfinite(get_real(p, i, dbl))) return 0;
  return 1;
}

static void fill_nan(void *p, int64_t count, int dbl) {
  for (int64_t i = 0; i < count; i++) put_real(p, i, NAN, dbl);
}

/* LAPACK's optimal workspace (in elements) from a query's first work entry. */
static int64_t optimal_lwork(const double *query, int dbl) {
  double v = dbl ? query[0] : (double)((const float *)query)[0];
  return v < 1 ? 1 : (int64_t)v;
}

/* A real geev's eigenvectors (column j; a complex pair j, j+1 stores re, im in columns j
 * and j+1) as complex columns, as JAX's kernel unpacks them. */
static void unpack_eigenvectors(int64_t n, const void *wi, const void *packed, void *out,
                                int dbl) {
  for (int64_t j = 0; j < n;) {
    double im_w = get_real(wi, j, dbl);
    if (im_w == 0 || isnan(im_w) || j + 1 == n) {
      for (int64_t i = 0; i < n; i++) {
        put_real(out, 2 * (j * n + i), get_real(packed, j * n + i, dbl), dbl);
        put_real(out, 2 * (j * n + i) + 1, 0, dbl);
      }
      j += 1;
    } else {
      for (int64_t i = 0; i < n; i++) {
        double re = get_real(packed, j * n + i, dbl), im = get_real(packed, (j + 1) * n + i, dbl);
        put_real(out, 2 * (j * n + i), re, dbl);
        put_real(out, 2 * (j * n + i) + 1, im, dbl);
        put_real(out, 2 * ((j + 1) * n + i), re, dbl);
        put_real(out, 2 * ((j + 1) * n + i) + 1, -im, dbl);
      }
      j += 2;
    }
  }
}

static int complex_of(int k) { return k == 0 || k == 2 ? FFI_C64 : FFI_C128; }

/* Batches of matrices in `a` (rank >= 2, square): the matrix order and the batch count. */
static int square_batch(const FfiBuffer *a, int64_t *n, int64_t *batch) {
  if (a->rank < 2 || a->dims[a->rank - 1] != a->dims[a->rank - 2]) return 0;
  *n = a->dims[a->rank - 1];
  *batch = 1;
  for (int64_t d = 0; d < a->rank - 2; d++) *batch *= a->dims[d];
  return 1;
}

/* xjax_lapack_geev: operand a; results w, then vl if `left`, then vr if `right` (all
 * complex; matrices column-major). A matrix with a non-finite entry, or whose geev fails,
 * gives NaN outputs (JAX's kernel and lowering do the same). */
static void *lapack_geev_handler(FfiCallFrame *frame) {
  if (answer_metadata(frame)) return NULL;
  int64_t left, right, n, batch;
  if (!frame_ok(frame) || frame->args.size != 1 || !find_i64_attr(frame, "left", &left) ||
      !find_i64_attr(frame, "right", &right) || frame->rets.size != 1 + !!left + !!right)
    return ffi_error(frame, FFI_ERR_INVALID_ARGUMENT,
                     "xjax_lapack_geev takes 1 operand, attributes left and right, and "
                     "makes 1 + left + right results");
  FfiBuffer *a = (FfiBuffer *)frame->args.values[0];
  FfiBuffer *w = (FfiBuffer *)frame->rets.values[0];
  FfiBuffer *vl = left ? (FfiBuffer *)frame->rets.values[1] : NULL;
  FfiBuffer *vr = right ? (FfiBuffer *)frame->rets.values[1 + !!left] : NULL;
  int k = getrf_index(a->dtype);
  if (k < 0 || geev[k] == NULL || !square_batch(a, &n, &batch) ||
      w->dtype != complex_of(k) || (vl && vl->dtype != w->dtype) ||
      (vr && vr->dtype != w->dtype))
    return ffi_error(frame, FFI_ERR_UNIMPLEMENTED, "xjax_lapack_geev: unsupported operand");
  if (n == 0 || batch == 0) return NULL;
  const int cplx = k >= 2, dbl = k == 1 || k == 3;
  const size_t real_size = dbl ? 8 : 4, item = cplx ? 2 * real_size : real_size;
  const size_t out_item = 2 * real_size, nn = (size_t)(n * n);
  const char jobvl = left ? 'V' : 'N', jobvr = right ? 'V' : 'N';
  const int64_t ld = n, ldvl = left ? n : 1, ldvr = right ? n : 1;
  double query[2] = {0, 0}, dummy[4] = {0, 0, 0, 0};
  int64_t lwork = -1, info = 0;
  /* scratch: the matrix (geev overwrites it), then real geev's wr, wi and packed vectors
   * or complex geev's rwork */
  size_t scratch_bytes = nn * item + (cplx ? 2 * (size_t)n * real_size
                                           : 2 * (size_t)n * real_size + 2 * nn * real_size);
  char *scratch = malloc(scratch_bytes);
  if (scratch == NULL) return ffi_error(frame, FFI_ERR_INTERNAL, "xjax_lapack_geev: no memory");
  char *mat = scratch, *extra = scratch + nn * item;
  char *wr = extra, *wi = extra + n * real_size, *pvl = extra + 2 * n * real_size,
       *pvr = pvl + nn * real_size;
  if (cplx)
    ((geev_complex_fn)geev[k])(&jobvl, &jobvr, &n, mat, &ld, dummy, dummy, &ldvl, dummy,
                               &ldvr, query, &lwork, extra, &info, 1, 1);
  else
    ((geev_real_fn)geev[k])(&jobvl, &jobvr, &n, mat, &ld, wr, wi, pvl, &ldvl, pvr, &ldvr,
                            query, &lwork, &info, 1, 1);
  lwork = optimal_lwork(query, dbl);
  void *work = malloc((size_t)lwork * item);
  if (work == NULL) {
    free(scratch);
    return ffi_error(frame, FFI_ERR_INTERNAL, "xjax_lapack_geev: no memory");
  }
  for (int64_t b = 0; b < batch; b++) {
    char *wb = (char *)w->data + (size_t)(b * n) * out_item;
    char *vlb = vl ? (char *)vl->data + (size_t)b * nn * out_item : NULL;
    char *vrb = vr ? (char *)vr->data + (size_t)b * nn * out_item : NULL;
    memcpy(mat, (char *)a->data + (size_t)b * nn * item, nn * item);
    info = all_finite(mat, (int64_t)(nn * item / real_size), dbl) ? 0 : -4;
    if (info == 0 && cplx)
      ((geev_complex_fn)geev[k])(&jobvl, &jobvr, &n, mat, &ld, wb, vlb ? vlb : (char *)dummy,
                                 &ldvl, vrb ? vrb : (char *)dummy, &ldvr, work, &lwork, extra,
                                 &info, 1, 1);
    else if (info == 0) {
      ((geev_real_fn)geev[k])(&jobvl, &jobvr, &n, mat, &ld, wr, wi, vl ? pvl : (char *)dummy,
                              &ldvl, vr ? pvr : (char *)dummy, &ldvr, work, &lwork, &info, 1,
                              1);
      if (info == 0) {
        for (int64_t i = 0; i < n; i++) {
          put_real(wb, 2 * i, get_real(wr, i, dbl), dbl);
          put_real(wb, 2 * i + 1, get_real(wi, i, dbl), dbl);
        }
        if (vlb) unpack_eigenvectors(n, wi, pvl, vlb, dbl);
        if (vrb) unpack_eigenvectors(n, wi, pvr, vrb, dbl);
      }
    }
    if (info != 0) {
      fill_nan(wb, 2 * n, dbl);
      if (vlb) fill_nan(vlb, 2 * (int64_t)nn, dbl);
      if (vrb) fill_nan(vrb, 2 * (int64_t)nn, dbl);
    }
  }
  free(work);
  free(scratch);
  return NULL;
}

/* xjax_lapack_gees: operand a; results the Schur form T, then the Schur vectors Z if
 * `vectors` (same dtype, column-major). No eigenvalue ordering (as JAX's kernel). A matrix
 * with a non-finite entry, or whose gees fails, gives NaN outputs. */
static void *lapack_gees_handler(FfiCallFrame *frame) {
  if (answer_metadata(frame)) return NULL;
  int64_t vectors, n, batch;
  if (!frame_ok(frame) || frame->args.size != 1 ||
      !find_i64_attr(frame, "vectors", &vectors) || frame->rets.size != 1 + !!vectors)
    return ffi_error(frame, FFI_ERR_INVALID_ARGUMENT,
                     "xjax_lapack_gees takes 1 operand, attribute vectors, and makes "
                     "1 + vectors results");
  FfiBuffer *a = (FfiBuffer *)frame->args.values[0];
  FfiBuffer *t = (FfiBuffer *)frame->rets.values[0];
  FfiBuffer *z = vectors ? (FfiBuffer *)frame->rets.values[1] : NULL;
  int k = getrf_index(a->dtype);
  if (k < 0 || gees[k] == NULL || !square_batch(a, &n, &batch) || t->dtype != a->dtype ||
      (z && z->dtype != a->dtype))
    return ffi_error(frame, FFI_ERR_UNIMPLEMENTED, "xjax_lapack_gees: unsupported operand");
  if (n == 0 || batch == 0) return NULL;
  const int cplx = k >= 2, dbl = k == 1 || k == 3;
  const size_t real_size = dbl ? 8 : 4, item = cplx ? 2 * real_size : real_size;
  const size_t nn = (size_t)(n * n);
  const char jobvs = vectors ? 'V' : 'N', sort = 'N';
  const int64_t ld = n, ldvs = vectors ? n : 1;
  double query[2] = {0, 0}, dummy[2] = {0, 0};
  int64_t lwork = -1, info = 0, sdim = 0, bwork[1] = {0};
  /* eigenvalues (wr, wi or w) and complex gees's rwork */
  char *extra = malloc((size_t)n * (cplx ? item + real_size : 2 * real_size));
  if (extra == NULL) return ffi_error(frame, FFI_ERR_INTERNAL, "xjax_lapack_gees: no memory");
  char *w2 = extra + (size_t)n * (cplx ? item : real_size); /* wi, or rwork */
  char *tb0 = (char *)t->data;
  if (cplx)
    ((gees_complex_fn)gees[k])(&jobvs, &sort, NULL, &n, tb0, &ld, &sdim, extra, dummy, &ldvs,
                               query, &lwork, w2, bwork, &info, 1, 1);
  else
    ((gees_real_fn)gees[k])(&jobvs, &sort, NULL, &n, tb0, &ld, &sdim, extra, w2, dummy,
                            &ldvs, query, &lwork, bwork, &info, 1, 1);
  lwork = optimal_lwork(query, dbl);
  void *work = malloc((size_t)lwork * item);
  if (work == NULL) {
    free(extra);
    return ffi_error(frame, FFI_ERR_INTERNAL, "xjax_lapack_gees: no memory");
  }
  if (t->data != a->data) memcpy(t->data, a->data, nn * item * (size_t)batch);
  for (int64_t b = 0; b < batch; b++) {
    char *tb = tb0 + (size_t)b * nn * item;
    char *zb = z ? (char *)z->data + (size_t)b * nn * item : (char *)dummy;
    info = all_finite(tb, (int64_t)(nn * item / real_size), dbl) ? 0 : -4;
    if (info == 0 && cplx)
      ((gees_complex_fn)gees[k])(&jobvs, &sort, NULL, &n, tb, &ld, &sdim, extra, zb, &ldvs,
                                 work, &lwork, w2, bwork, &info, 1, 1);
    else if (info == 0)
      ((gees_real_fn)gees[k])(&jobvs, &sort, NULL, &n, tb, &ld, &sdim, extra, w2, zb, &ldvs,
                              work, &lwork, bwork, &info, 1, 1);
    if (info != 0) {
      fill_nan(tb, (int64_t)(nn * item / real_size), dbl);
      if (z) fill_nan(zb, (int64_t)(nn * item / real_size), dbl);
    }
  }
  free(work);
  free(extra);
  return NULL;
}

/* ------------------------------------------------------------ Python entry */

static const FfiExtension *find_ffi_extension(const PJRT_Api *api) {
  if (api->struct_size < offsetof(PJRT_Api, extension_start) + sizeof(void *)) return NULL;
  for (PJRT_Extension_Base *e = api->extension_start; e != NULL; e = e->next) {
    if (e->type == PJRT_Extension_Type_FFI &&
        e->struct_size >= offsetof(FfiExtension, register_handler) + sizeof(void *))
      return (const FfiExtension *)e;
  }
  return NULL;
}

static PyObject *register_handler(PluginObject *plugin, const char *target, void *handler) {
  const FfiExtension *ext = find_ffi_extension(plugin->api);
  if (ext == NULL || ext->register_handler == NULL) {
    PyErr_SetString(PyExc_NotImplementedError,
                    "this PJRT plugin has no FFI extension: host callbacks are unavailable");
    return NULL;
  }
  static const char platform[] = "Host";
  RegisterHandlerArgs a = {.struct_size = REGISTER_HANDLER_ARGS_SIZE,
                           .target_name = target,
                           .target_name_size = strlen(target),
                           .handler = handler,
                           .platform_name = platform,
                           .platform_name_size = sizeof(platform) - 1,
                           .traits = 0};
  PJRT_Error *err = ext->register_handler(&a);
  if (err != NULL) return raise_error(plugin->api, err);
  Py_RETURN_NONE;
}

/* register_ffi_target(plugin, name): registers one of this module's handlers (by name) for
 * the plugin's host platform. XLA's registry is process-global; registering the same
 * handler again is accepted. */
PyObject *ffi_register_target(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *plugin;
  const char *name;
  if (!PyArg_ParseTuple(args, "O!s", &PluginType, &plugin, &name)) return NULL;
  void *handler;
  if (strcmp(name, "xjax_host_callback") == 0) {
    handler = (void *)host_callback_handler;
  } else if (strcmp(name, "xjax_blas_trsm") == 0) {
    if (trsm[0] == NULL) {
      PyErr_SetString(PyExc_RuntimeError, "load a BLAS with ?trsm first (ffi_load_lapack)");
      return NULL;
    }
    handler = (void *)blas_trsm_handler;
  } else if (strcmp(name, "xjax_lapack_getrf") == 0) {
    if (getrf[0] == NULL) {
      PyErr_SetString(PyExc_RuntimeError, "load LAPACK first (ffi_load_lapack)");
      return NULL;
    }
    handler = (void *)lapack_getrf_handler;
  } else if (strcmp(name, "xjax_lapack_geev") == 0 || strcmp(name, "xjax_lapack_gees") == 0) {
    int is_geev = strcmp(name, "xjax_lapack_geev") == 0;
    if ((is_geev ? geev : gees)[0] == NULL) {
      PyErr_Format(PyExc_RuntimeError, "load a LAPACK with ?%s first (ffi_load_lapack)",
                   name + 12);
      return NULL;
    }
    handler = is_geev ? (void *)lapack_geev_handler : (void *)lapack_gees_handler;
  } else {
    PyErr_Format(PyExc_ValueError, "no FFI handler named %s", name);
    return NULL;
  }
  return register_handler((PluginObject *)plugin, name, handler);
}

/* Finds LAPACK routine `routine` for all four types (s, d, c, z) in `lib`; 1 if all were. */
static int find_routines(void *lib, const char *prefix, const char *routine, const char *suffix,
                         void *out[4]) {
  static const char letters[4] = {'s', 'd', 'c', 'z'};
  void *found[4];
  for (int i = 0; i < 4; i++) {
    char name[128];
    snprintf(name, sizeof(name), "%s%c%s%s", prefix, letters[i], routine, suffix);
    found[i] = dlsym(lib, name);
    if (found[i] == NULL) return 0;
  }
  memcpy(out, found, sizeof(found));
  return 1;
}

/* ffi_load_lapack(path, prefix, suffix): dlopens the library and finds ?getrf (required)
 * and the optional ?trsm, ?geev and ?gees; returns the names of the optional routines
 * found, a tuple of str. */
PyObject *ffi_load_lapack(PyObject *mod, PyObject *args) {
  (void)mod;
  PyObject *path_obj;
  const char *prefix, *suffix;
  if (!PyArg_ParseTuple(args, "O&ss", PyUnicode_FSConverter, &path_obj, &prefix, &suffix))
    return NULL;
  /* Never dlclose'd: executables may call into it until the process ends. */
  void *lib = dlopen(PyBytes_AS_STRING(path_obj), RTLD_NOW | RTLD_LOCAL);
  Py_DECREF(path_obj);
  if (lib == NULL) {
    PyErr_Format(PyExc_OSError, "cannot load LAPACK: %s", dlerror());
    return NULL;
  }
  void *found[4];
  if (!find_routines(lib, prefix, "getrf", suffix, found)) {
    PyErr_Format(PyExc_OSError, "LAPACK library has no %sdgetrf%s (or another type's)", prefix,
                 suffix);
    return NULL;
  }
  memcpy(getrf, found, sizeof(getrf));
  /* the optional routines: without them those operations stay XLA's (or unavailable) */
  PyObject *names = PyList_New(0);
  if (names == NULL) return NULL;
  static const char *optional[3] = {"trsm", "geev", "gees"};
  void **tables[3] = {(void **)trsm, geev, gees};
  for (int r = 0; r < 3; r++) {
    if (!find_routines(lib, prefix, optional[r], suffix, tables[r])) continue;
    PyObject *name = PyUnicode_FromString(optional[r]);
    if (name == NULL || PyList_Append(names, name) < 0) {
      Py_XDECREF(name);
      Py_DECREF(names);
      return NULL;
    }
    Py_DECREF(name);
  }
  PyObject *out = PyList_AsTuple(names);
  Py_DECREF(names);
  return out;
}

PyObject *ffi_set_dispatcher(PyObject *mod, PyObject *fn) {
  (void)mod;
  if (!PyCallable_Check(fn)) {
    PyErr_SetString(PyExc_TypeError, "dispatcher must be callable");
    return NULL;
  }
  Py_INCREF(fn);
  Py_XSETREF(dispatcher, fn);
  Py_RETURN_NONE;
}
