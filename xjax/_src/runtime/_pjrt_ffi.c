/* XLA FFI custom-call handlers registered with a PJRT plugin's FFI extension (the LAPACK
 * and BLAS ones are in _pjrt_lapack.c; the FFI structures in _pjrt_ffi.h).
 *
 * The targets, all typed FFI (custom calls with api_version = 4):
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
 *   xjax_sort           stable sort along one dimension by the first operand, as a radix
 *                       sort (_pjrt_sort.c); no Python and no GIL.
 *
 * Threads and the GIL: XLA runs handlers on its own threads (or the caller's). execute()
 * releases the GIL around PJRT's Execute and every wait on an event releases it, so a
 * handler can take it with PyGILState_Ensure. With `_set_release_gil(False)` (a measurement
 * switch) a host callback on an XLA worker thread would deadlock; don't combine the two.
 */
#include "_pjrt_ffi.h"

/* ----------------------------------------------------------------- helpers */

/* Answers XLA's metadata query (made once, at registration): the FFI API version the
 * handler was written against (0.1, the oldest XLA accepts) and no traits. */
int answer_metadata(FfiCallFrame *frame) {
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

void *ffi_error(FfiCallFrame *frame, int code, const char *message) {
  const FfiApi *api = frame->api;
  if (api == NULL || api->struct_size < offsetof(FfiApi, error_create) + sizeof(void *) ||
      api->error_create == NULL)
    return NULL; /* cannot happen with a conforming XLA; nothing better to do */
  FfiErrorCreateArgs a = {.struct_size = sizeof(FfiErrorCreateArgs), .message = message,
                          .errc = code};
  return api->error_create(&a);
}

int frame_ok(FfiCallFrame *frame) {
  return frame->struct_size >= offsetof(FfiCallFrame, attrs) + sizeof(FfiAttrs);
}

int find_i64_attr(FfiCallFrame *frame, const char *name, int64_t *out) {
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
        PyObject *size = PyLong_FromLongLong(b->dims[d]);
        if (size == NULL) {
          Py_DECREF(dims);
          goto fail;
        }
        PyTuple_SET_ITEM(dims, d, size);
      }
      PyObject *mem;
      if (b->data == NULL || count == 0) {
        mem = Py_None;
        Py_INCREF(mem);
      } else {
        mem = PyLong_FromVoidPtr(b->data);
      }
      if (mem == NULL) {
        Py_DECREF(dims);
        goto fail;
      }
      item = Py_BuildValue("(iNN)", b->dtype, mem, dims); /* takes both, even on failure */
      if (item == NULL) goto fail;
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
  } else if (strcmp(name, "xjax_sort") == 0) {
    handler = (void *)sort_handler;
  } else if (strcmp(name, "xjax_blas_trsm") == 0) {
    if (!lapack_has("trsm")) {
      PyErr_SetString(PyExc_RuntimeError, "load a BLAS with ?trsm first (ffi_load_lapack)");
      return NULL;
    }
    handler = (void *)blas_trsm_handler;
  } else if (strcmp(name, "xjax_lapack_getrf") == 0) {
    if (!lapack_has("getrf")) {
      PyErr_SetString(PyExc_RuntimeError, "load LAPACK first (ffi_load_lapack)");
      return NULL;
    }
    handler = (void *)lapack_getrf_handler;
  } else if (strcmp(name, "xjax_lapack_geev") == 0 || strcmp(name, "xjax_lapack_gees") == 0) {
    int is_geev = strcmp(name, "xjax_lapack_geev") == 0;
    if (!lapack_has(is_geev ? "geev" : "gees")) {
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
