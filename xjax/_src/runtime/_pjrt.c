/* xjax.runtime._pjrt: a thin, fast binding of the PJRT C API.
 *
 * Owns the hot path of xjax's runtime: turning numpy arrays into PJRT buffers,
 * executing compiled programs, and handing results back to numpy without copies
 * on the CPU. Everything policy-like (finding plugins, dtype tables, devices as
 * Python objects) lives in client.py and is injected here through `_configure`.
 *
 * Files: _pjrt.c (module, shared state, errors), _pjrt_client.c (plugins,
 * clients), _pjrt_buffer.c (DeviceBuffer, host<->device), _pjrt_executable.c
 * (compile, execute). Conventions: every PJRT args struct is zero-initialised
 * with its `*_STRUCT_SIZE`; the GIL is released around calls that may block
 * (compile, awaiting events, large copies); PJRT objects die in tp_dealloc.
 */
#include "_pjrt.h"

/* ------------------------------------------------------------------ globals */

PyObject *XlaRuntimeError;
PyTypeObject *ndarray_type;
PyObject *ptype_dtype[MAX_PTYPE];
Py_ssize_t ptype_itemsize[MAX_PTYPE];
char ptype_subbyte[MAX_PTYPE];
PyObject *hook_dtype_code;
PyObject *hook_normalize;
PyObject *hook_contiguous;
PyObject *hook_empty;
PyObject *hook_unpack;
PyObject *str_dtype;
PyObject *str_base;
Py_ssize_t alias_threshold = 1 << 16;
int release_gil_in_execute = 1;

static const char *error_code_name(int code) {
  static const char *names[] = {
      "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
      "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
      "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  if (code >= 0 && code < (int)(sizeof(names) / sizeof(names[0]))) return names[code];
  return "UNKNOWN";
}

/* Converts a PJRT_Error into a Python XlaRuntimeError ("CODE: message") and
 * frees it. Always returns NULL. Needs the GIL. */
PyObject *raise_error(const PJRT_Api *api, PJRT_Error *err) {
  ARGS(PJRT_Error_Message, .error = err);
  api->PJRT_Error_Message(&a);
  PJRT_Error_GetCode_Args c = {.struct_size = PJRT_Error_GetCode_Args_STRUCT_SIZE,
                               .error = err};
  PJRT_Error *e2 = api->PJRT_Error_GetCode(&c);
  int code = PJRT_Error_Code_UNKNOWN;
  if (e2 == NULL) {
    code = c.code;
  } else {
    PJRT_Error_Destroy_Args d = {.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE,
                                 .error = e2};
    api->PJRT_Error_Destroy(&d);
  }
  PyObject *msg = PyUnicode_DecodeUTF8(a.message, (Py_ssize_t)a.message_size, "replace");
  if (msg != NULL) {
    PyObject *full = PyUnicode_FromFormat("%s: %U", error_code_name(code), msg);
    if (full != NULL) {
      PyObject *exc = PyObject_CallOneArg(XlaRuntimeError, full);
      if (exc != NULL) {
        PyObject *pycode = PyUnicode_FromString(error_code_name(code));
        if (pycode != NULL) {
          PyObject_SetAttrString(exc, "code", pycode);
          Py_DECREF(pycode);
        }
        PyErr_SetObject(XlaRuntimeError, exc);
        Py_DECREF(exc);
      }
      Py_DECREF(full);
    }
    Py_DECREF(msg);
  }
  PJRT_Error_Destroy_Args d = {.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE,
                               .error = err};
  api->PJRT_Error_Destroy(&d);
  return NULL;
}

void destroy_error(const PJRT_Api *api, PJRT_Error *err) {
  if (err == NULL) return;
  ARGS(PJRT_Error_Destroy, .error = err);
  api->PJRT_Error_Destroy(&a);
}

void destroy_event(const PJRT_Api *api, PJRT_Event *ev) {
  if (ev == NULL) return;
  ARGS(PJRT_Event_Destroy, .event = ev);
  destroy_error(api, api->PJRT_Event_Destroy(&a));
}

/* How long a wait polls before it sleeps (set by client.py). */
static long long spin_wait_ns = 0;

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Polls `ev` for up to spin_wait_ns, yielding the core between polls. Returns 1
 * once it is ready. Called without the GIL. */
static int spin_until_ready(const PJRT_Api *api, PJRT_Event *ev) {
  if (spin_wait_ns <= 0) return 0;
  long long deadline = now_ns() + spin_wait_ns;
  PJRT_Event_IsReady_Args r = {.struct_size = PJRT_Event_IsReady_Args_STRUCT_SIZE,
                               .event = ev};
  do {
    sched_yield();
    PJRT_Error *err = api->PJRT_Event_IsReady(&r);
    if (err != NULL) {
      destroy_error(api, err);
      return 0;
    }
    if (r.is_ready) return 1;
  } while (now_ns() < deadline);
  return 0;
}

/* Waits for `ev` (releasing the GIL only if it is not ready yet) and destroys
 * it. Returns the event's error, or NULL. */
PJRT_Error *await_and_destroy(const PJRT_Api *api, PJRT_Event *ev) {
  PJRT_Error *err;
  PJRT_Event_IsReady_Args r = {.struct_size = PJRT_Event_IsReady_Args_STRUCT_SIZE,
                               .event = ev};
  err = api->PJRT_Event_IsReady(&r);
  if (err == NULL && r.is_ready) {
    PJRT_Event_Error_Args e = {.struct_size = PJRT_Event_Error_Args_STRUCT_SIZE,
                               .event = ev};
    err = api->PJRT_Event_Error(&e);
  } else {
    destroy_error(api, err);
    PJRT_Event_Await_Args w = {.struct_size = PJRT_Event_Await_Args_STRUCT_SIZE,
                               .event = ev};
    Py_BEGIN_ALLOW_THREADS
    if (spin_until_ready(api, ev)) {
      PJRT_Event_Error_Args e = {.struct_size = PJRT_Event_Error_Args_STRUCT_SIZE,
                                 .event = ev};
      err = api->PJRT_Event_Error(&e);
    } else {
      err = api->PJRT_Event_Await(&w);
    }
    Py_END_ALLOW_THREADS
  }
  destroy_event(api, ev);
  return err;
}

/* ------------------------------------------------------------------ module */

static PyObject *configure(PyObject *mod, PyObject *args, PyObject *kwds) {
  (void)mod;
  static char *kwlist[] = {"ndarray",   "dtypes", "itemsizes", "subbyte",
                           "dtype_code", "normalize", "contiguous", "empty",
                           "unpack",    NULL};
  PyObject *nd, *dtypes, *itemsizes, *subbyte, *code, *norm, *contig, *empty, *unpack;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!O!O!OOOOO", kwlist, &PyType_Type, &nd,
                                   &PyDict_Type, &dtypes, &PyDict_Type, &itemsizes,
                                   &PyDict_Type, &subbyte, &code, &norm, &contig, &empty,
                                   &unpack))
    return NULL;
  Py_ssize_t pos = 0;
  PyObject *k, *v;
  while (PyDict_Next(dtypes, &pos, &k, &v)) {
    long p = PyLong_AsLong(k);
    if (p < 0 || p >= MAX_PTYPE) {
      PyErr_SetString(PyExc_ValueError, "PJRT type out of range");
      return NULL;
    }
    /* Old entries are never released: executables borrow them. */
    Py_INCREF(v);
    ptype_dtype[p] = v;
    PyObject *is = PyDict_GetItem(itemsizes, k);
    ptype_itemsize[p] = is ? PyLong_AsSsize_t(is) : 0;
    PyObject *sb = PyDict_GetItem(subbyte, k);
    ptype_subbyte[p] = sb ? (char)PyObject_IsTrue(sb) : 0;
  }
#define SET(var, val) \
  Py_INCREF(val);     \
  Py_XSETREF(var, val);
  SET(ndarray_type, (PyTypeObject *)nd);
  SET(hook_dtype_code, code);
  SET(hook_normalize, norm);
  SET(hook_contiguous, contig);
  SET(hook_empty, empty);
  SET(hook_unpack, unpack);
#undef SET
  reset_dtype_cache();
  Py_RETURN_NONE;
}

static PyObject *set_alias_threshold(PyObject *mod, PyObject *arg) {
  (void)mod;
  Py_ssize_t old = alias_threshold;
  Py_ssize_t v = PyLong_AsSsize_t(arg);
  if (v == -1 && PyErr_Occurred()) return NULL;
  alias_threshold = v;
  return PyLong_FromSsize_t(old);
}

static PyObject *set_spin_wait(PyObject *mod, PyObject *arg) {
  (void)mod;
  long long old = spin_wait_ns / 1000;
  long long v = PyLong_AsLongLong(arg);
  if (v == -1 && PyErr_Occurred()) return NULL;
  spin_wait_ns = v > 0 ? v * 1000 : 0;
  return PyLong_FromLongLong(old);
}

static PyObject *set_release_gil(PyObject *mod, PyObject *arg) {
  (void)mod;
  int old = release_gil_in_execute;
  release_gil_in_execute = PyObject_IsTrue(arg);
  return PyBool_FromLong(old);
}

static PyObject *is_immutable_py(PyObject *mod, PyObject *arr) {
  (void)mod;
  return PyBool_FromLong(is_immutable(arr));
}

static PyMethodDef module_methods[] = {
    {"is_immutable", is_immutable_py, METH_O,
     "is_immutable(array) -> bool: nothing can write its memory (it and every array it "
     "views are read-only, down to an owner that exports no writable memory)."},
    {"load_plugin", load_plugin, METH_O,
     "load_plugin(path) -> Plugin: dlopen a PJRT plugin, check its C API version."},
    {"_configure", (PyCFunction)(void (*)(void))configure, METH_VARARGS | METH_KEYWORDS,
     "Installs the numpy dtype tables and the Python hooks."},
    {"set_alias_threshold", set_alias_threshold, METH_O,
     "Numpy execute() arguments of at least this many bytes may be aliased, not copied. "
     "Returns the previous value."},
    {"set_array_class", set_array_class, METH_O,
     "set_array_class(cls): the Array class Executable.call_arrays reads and makes "
     "(its `_aval`, `_npy` and `_buffer` slots)."},
    {"set_spin_wait", set_spin_wait, METH_O,
     "set_spin_wait(microseconds) -> previous: how long waiting for an event polls it "
     "(yielding the core between polls) before sleeping until it fires."},
    {"_set_release_gil", set_release_gil, METH_O,
     "Whether execute() releases the GIL around PJRT's Execute (for measurements)."},
    {"ffi_register_target", ffi_register_target, METH_VARARGS,
     "ffi_register_target(plugin, name): register an FFI handler of _pjrt_ffi.c with XLA."},
    {"ffi_load_lapack", ffi_load_lapack, METH_VARARGS,
     "ffi_load_lapack(path, prefix, suffix): dlopen LAPACK for the getrf/trsm/geev/gees "
     "handlers; returns the optional routines found."},
    {"ffi_set_dispatcher", ffi_set_dispatcher, METH_O,
     "ffi_set_dispatcher(fn): fn(id, args, rets) runs host callbacks."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "xjax._src.runtime._pjrt",
                                        "Thin binding of the PJRT C API.", -1,
                                        module_methods};

static const struct { const char *name; int value; } buffer_types[] = {
    {"PRED", PJRT_Buffer_Type_PRED},
    {"S8", PJRT_Buffer_Type_S8},
    {"S16", PJRT_Buffer_Type_S16},
    {"S32", PJRT_Buffer_Type_S32},
    {"S64", PJRT_Buffer_Type_S64},
    {"U8", PJRT_Buffer_Type_U8},
    {"U16", PJRT_Buffer_Type_U16},
    {"U32", PJRT_Buffer_Type_U32},
    {"U64", PJRT_Buffer_Type_U64},
    {"F16", PJRT_Buffer_Type_F16},
    {"F32", PJRT_Buffer_Type_F32},
    {"F64", PJRT_Buffer_Type_F64},
    {"BF16", PJRT_Buffer_Type_BF16},
    {"C64", PJRT_Buffer_Type_C64},
    {"C128", PJRT_Buffer_Type_C128},
    {"F8E5M2", PJRT_Buffer_Type_F8E5M2},
    {"F8E4M3FN", PJRT_Buffer_Type_F8E4M3FN},
    {"F8E4M3B11FNUZ", PJRT_Buffer_Type_F8E4M3B11FNUZ},
    {"F8E5M2FNUZ", PJRT_Buffer_Type_F8E5M2FNUZ},
    {"F8E4M3FNUZ", PJRT_Buffer_Type_F8E4M3FNUZ},
    {"S4", PJRT_Buffer_Type_S4},
    {"U4", PJRT_Buffer_Type_U4},
    {"S2", PJRT_Buffer_Type_S2},
    {"U2", PJRT_Buffer_Type_U2},
    {"F8E4M3", PJRT_Buffer_Type_F8E4M3},
    {"F8E3M4", PJRT_Buffer_Type_F8E3M4},
    {"F8E8M0FNU", PJRT_Buffer_Type_F8E8M0FNU},
    {"F4E2M1FN", PJRT_Buffer_Type_F4E2M1FN},
};

PyMODINIT_FUNC PyInit__pjrt(void) {
  if (PyType_Ready(&PluginType) < 0 || PyType_Ready(&ClientType) < 0 ||
      PyType_Ready(&BufferType) < 0 || PyType_Ready(&ExecutableType) < 0 ||
      PyType_Ready(&HostViewType) < 0)
    return NULL;
  PyObject *m = PyModule_Create(&module_def);
  if (m == NULL) return NULL;
  str_dtype = PyUnicode_InternFromString("dtype");
  str_base = PyUnicode_InternFromString("base");
  XlaRuntimeError = PyErr_NewExceptionWithDoc(
      "xjax.errors.JaxRuntimeError",
      "An error reported by XLA/PJRT at run time (JAX's JaxRuntimeError); the message starts with its status code.",
      PyExc_RuntimeError, NULL);
  if (str_dtype == NULL || str_base == NULL || XlaRuntimeError == NULL) goto fail;
  Py_INCREF(XlaRuntimeError);
  if (PyModule_AddObject(m, "XlaRuntimeError", XlaRuntimeError) < 0) goto fail;
  Py_INCREF(&PluginType);
  Py_INCREF(&ClientType);
  Py_INCREF(&BufferType);
  Py_INCREF(&ExecutableType);
  if (PyModule_AddObject(m, "Plugin", (PyObject *)&PluginType) < 0 ||
      PyModule_AddObject(m, "Client", (PyObject *)&ClientType) < 0 ||
      PyModule_AddObject(m, "DeviceBuffer", (PyObject *)&BufferType) < 0 ||
      PyModule_AddObject(m, "Executable", (PyObject *)&ExecutableType) < 0)
    goto fail;
  PyObject *bt = PyDict_New();
  if (bt == NULL) goto fail;
  for (size_t i = 0; i < sizeof(buffer_types) / sizeof(buffer_types[0]); i++) {
    PyObject *v = PyLong_FromLong(buffer_types[i].value);
    if (v == NULL || PyDict_SetItemString(bt, buffer_types[i].name, v) < 0) {
      Py_XDECREF(v);
      Py_DECREF(bt);
      goto fail;
    }
    Py_DECREF(v);
  }
  if (PyModule_AddObject(m, "BUFFER_TYPES", bt) < 0) goto fail;
  if (PyModule_AddObject(m, "HEADER_API_VERSION",
                         Py_BuildValue("(ii)", PJRT_API_MAJOR, PJRT_API_MINOR)) < 0)
    goto fail;
  return m;
fail:
  Py_DECREF(m);
  return NULL;
}

