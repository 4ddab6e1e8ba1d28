/* LAPACK and BLAS custom-call handlers (targets xjax_lapack_getrf, xjax_blas_trsm,
 * xjax_lapack_geev, xjax_lapack_gees: see _pjrt_ffi.c's header comment for their operands and
 * attributes), calling the OpenBLAS that NumPy bundles (ILP64), dlopened by ffi_load_lapack.
 * No Python and no GIL in the handlers.
 */
#include <dlfcn.h>
#include <math.h>

#include "_pjrt_ffi.h"

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

void *lapack_getrf_handler(FfiCallFrame *frame) {
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

void *blas_trsm_handler(FfiCallFrame *frame) {
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
void *lapack_geev_handler(FfiCallFrame *frame) {
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
void *lapack_gees_handler(FfiCallFrame *frame) {
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

/* ------------------------------------------------------------ loading */
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

int lapack_has(const char *routine) {
  if (strcmp(routine, "getrf") == 0) return getrf[0] != NULL;
  if (strcmp(routine, "trsm") == 0) return trsm[0] != NULL;
  if (strcmp(routine, "geev") == 0) return geev[0] != NULL;
  if (strcmp(routine, "gees") == 0) return gees[0] != NULL;
  return 0;
}
