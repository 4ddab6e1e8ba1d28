/* Executables: compile (with output metadata read once) and the execute hot path. */
#include "_pjrt.h"

/* --------------------------------------------------------------- Executable */

typedef struct {
  PyObject_HEAD
  ClientObject *client;
  PJRT_LoadedExecutable *exe;
  int dev_index;
  Py_ssize_t num_outputs;
  int *out_ptypes;       /* -1 where unknown */
  PyObject **out_shapes; /* tuples or NULL */
  PyObject **out_dtypes; /* borrowed from ptype_dtype or NULL */
  PyObject *name;
  PyObject *fingerprint;
  PJRT_ExecuteOptions options;
  char *donated;         /* per argument: the module lets XLA reuse it (NULL: none) */
  Py_ssize_t ndonated_args; /* length of `donated` */
  int *dev_indices;      /* the client's index of each device it runs on, in its order */
  Py_ssize_t ndev;
} ExecutableObject;

static void Executable_dealloc(ExecutableObject *self) {
  if (self->exe != NULL) {
    const PJRT_Api *api = self->client->api;
    ARGS(PJRT_LoadedExecutable_Destroy, .executable = self->exe);
    destroy_error(api, api->PJRT_LoadedExecutable_Destroy(&a));
  }
  if (self->out_shapes != NULL)
    for (Py_ssize_t i = 0; i < self->num_outputs; i++) Py_XDECREF(self->out_shapes[i]);
  PyMem_Free(self->out_shapes);
  PyMem_Free(self->out_dtypes);
  PyMem_Free(self->out_ptypes);
  Py_XDECREF(self->name);
  Py_XDECREF(self->fingerprint);
  PyMem_Free(self->donated);
  PyMem_Free(self->dev_indices);
  Py_XDECREF(self->client);
  PyObject_Free(self);
}

/* Output types/dims and names are static: read them once here. */
static int read_executable_metadata(ExecutableObject *self) {
  const PJRT_Api *api = self->client->api;
  PJRT_Error *err;
  ARGS(PJRT_LoadedExecutable_GetExecutable, .loaded_executable = self->exe);
  if ((err = api->PJRT_LoadedExecutable_GetExecutable(&a)) != NULL)
    return raise_error(api, err), -1;
  PJRT_Executable *ex = a.executable;
  int rc = -1;
  PJRT_Executable_NumOutputs_Args n = {
      .struct_size = PJRT_Executable_NumOutputs_Args_STRUCT_SIZE, .executable = ex};
  if ((err = api->PJRT_Executable_NumOutputs(&n)) != NULL) {
    raise_error(api, err);
    goto done;
  }
  self->num_outputs = (Py_ssize_t)n.num_outputs;
  size_t no = n.num_outputs + 1;
  self->out_ptypes = PyMem_Malloc(no * sizeof(int));
  self->out_shapes = PyMem_Calloc(no, sizeof(PyObject *));
  self->out_dtypes = PyMem_Calloc(no, sizeof(PyObject *));
  if (!self->out_ptypes || !self->out_shapes || !self->out_dtypes) {
    PyErr_NoMemory();
    goto done;
  }
  for (size_t i = 0; i < n.num_outputs; i++) self->out_ptypes[i] = -1;
  if (HAS_FN(api, PJRT_Executable_OutputElementTypes)) {
    PJRT_Executable_OutputElementTypes_Args t = {
        .struct_size = PJRT_Executable_OutputElementTypes_Args_STRUCT_SIZE,
        .executable = ex};
    err = api->PJRT_Executable_OutputElementTypes(&t);
    if (err != NULL) {
      destroy_error(api, err);
    } else if (t.num_output_types == n.num_outputs) {
      for (size_t i = 0; i < n.num_outputs; i++) {
        int p = (int)t.output_types[i];
        self->out_ptypes[i] = p;
        if (p >= 0 && p < MAX_PTYPE) self->out_dtypes[i] = ptype_dtype[p];
      }
    }
  }
  if (HAS_FN(api, PJRT_Executable_OutputDimensions)) {
    PJRT_Executable_OutputDimensions_Args d = {
        .struct_size = PJRT_Executable_OutputDimensions_Args_STRUCT_SIZE,
        .executable = ex};
    err = api->PJRT_Executable_OutputDimensions(&d);
    if (err != NULL) {
      destroy_error(api, err);
    } else if (d.num_outputs == n.num_outputs) {
      const int64_t *p = d.dims;
      for (size_t i = 0; i < n.num_outputs; i++) {
        PyObject *t = PyTuple_New((Py_ssize_t)d.dim_sizes[i]);
        if (t == NULL) goto done;
        for (size_t j = 0; j < d.dim_sizes[i]; j++) {
          PyObject *v = PyLong_FromLongLong(*p++);
          if (v == NULL) {
            Py_DECREF(t);
            goto done;
          }
          PyTuple_SET_ITEM(t, (Py_ssize_t)j, v);
        }
        self->out_shapes[i] = t;
      }
    }
  }
  if (HAS_FN(api, PJRT_Executable_Name)) {
    PJRT_Executable_Name_Args nm = {.struct_size = PJRT_Executable_Name_Args_STRUCT_SIZE,
                                    .executable = ex};
    err = api->PJRT_Executable_Name(&nm);
    if (err == NULL)
      self->name = PyUnicode_DecodeUTF8(nm.executable_name,
                                        (Py_ssize_t)nm.executable_name_size, "replace");
    else
      destroy_error(api, err);
  }
  if (HAS_FN(api, PJRT_Executable_Fingerprint)) {
    PJRT_Executable_Fingerprint_Args f = {
        .struct_size = PJRT_Executable_Fingerprint_Args_STRUCT_SIZE, .executable = ex};
    err = api->PJRT_Executable_Fingerprint(&f);
    if (err == NULL && f.executable_fingerprint != NULL)
      self->fingerprint = PyUnicode_DecodeUTF8(
          f.executable_fingerprint, (Py_ssize_t)f.executable_fingerprint_size, "replace");
    else
      destroy_error(api, err);
  }
  PyErr_Clear();
  {
    PJRT_LoadedExecutable_AddressableDevices_Args ad = {
        .struct_size = PJRT_LoadedExecutable_AddressableDevices_Args_STRUCT_SIZE,
        .executable = self->exe};
    if ((err = api->PJRT_LoadedExecutable_AddressableDevices(&ad)) != NULL) {
      raise_error(api, err);
      goto done;
    }
    self->dev_index = 0;
    self->ndev = (Py_ssize_t)ad.num_addressable_devices;
    self->dev_indices = PyMem_Calloc(ad.num_addressable_devices + 1, sizeof(int));
    if (self->dev_indices == NULL) {
      PyErr_NoMemory();
      goto done;
    }
    for (size_t k = 0; k < ad.num_addressable_devices; k++)
      for (Py_ssize_t i = 0; i < self->client->ndevices; i++)
        if (self->client->devices[i] == ad.addressable_devices[k]) self->dev_indices[k] = (int)i;
    if (ad.num_addressable_devices > 0) self->dev_index = self->dev_indices[0];
  }
  rc = 0;
done:;
  PJRT_Executable_Destroy_Args d = {.struct_size = PJRT_Executable_Destroy_Args_STRUCT_SIZE,
                                    .executable = ex};
  destroy_error(api, api->PJRT_Executable_Destroy(&d));
  return rc;
}

static PyObject *wrap_loaded_executable(ClientObject *self, PJRT_LoadedExecutable *loaded);

PyObject *Client_compile(ClientObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"code", "compile_options", "format", NULL};
  PyObject *code;
  Py_buffer opts = {0};
  const char *format = "mlir";
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "Oy*|s", kwlist, &code, &opts, &format))
    return NULL;
  const char *text;
  Py_ssize_t len;
  if (PyUnicode_Check(code)) {
    text = PyUnicode_AsUTF8AndSize(code, &len);
  } else if (PyBytes_Check(code)) {
    text = PyBytes_AS_STRING(code);
    len = PyBytes_GET_SIZE(code);
  } else {
    PyErr_SetString(PyExc_TypeError, "code must be str or bytes");
    text = NULL;
  }
  if (text == NULL) {
    PyBuffer_Release(&opts);
    return NULL;
  }
  const PJRT_Api *api = self->api;
  PJRT_Program prog = {.struct_size = PJRT_Program_STRUCT_SIZE,
                       .code = (char *)text,
                       .code_size = (size_t)len,
                       .format = format,
                       .format_size = strlen(format)};
  ARGS(PJRT_Client_Compile, .client = self->client, .program = &prog,
       .compile_options = opts.buf, .compile_options_size = (size_t)opts.len);
  PJRT_Error *err;
  Py_BEGIN_ALLOW_THREADS
  err = api->PJRT_Client_Compile(&a);
  Py_END_ALLOW_THREADS
  PyBuffer_Release(&opts);
  if (err != NULL) return raise_error(api, err);
  return wrap_loaded_executable(self, a.executable);
}

/* Wraps a loaded executable (owning it from now on) and reads its metadata. */
static PyObject *wrap_loaded_executable(ClientObject *self, PJRT_LoadedExecutable *loaded) {
  const PJRT_Api *api = self->api;
  ExecutableObject *exe = PyObject_New(ExecutableObject, &ExecutableType);
  if (exe == NULL) {
    ARGS(PJRT_LoadedExecutable_Destroy, .executable = loaded);
    destroy_error(api, api->PJRT_LoadedExecutable_Destroy(&a));
    return NULL;
  }
  Py_INCREF(self);
  exe->client = self;
  exe->exe = loaded;
  exe->dev_index = 0;
  exe->num_outputs = 0;
  exe->out_ptypes = NULL;
  exe->out_shapes = NULL;
  exe->out_dtypes = NULL;
  exe->name = NULL;
  exe->fingerprint = NULL;
  exe->donated = NULL;
  exe->ndonated_args = 0;
  exe->dev_indices = NULL;
  exe->ndev = 0;
  memset(&exe->options, 0, sizeof(exe->options));
  exe->options.struct_size = PJRT_ExecuteOptions_STRUCT_SIZE;
  if (read_executable_metadata(exe) < 0) {
    Py_DECREF(exe);
    return NULL;
  }
  return (PyObject *)exe;
}

/* Client.deserialize_executable(data, compile_options=None): the inverse of
 * Executable.serialize(), for the same plugin build only. */
PyObject *Client_deserialize_executable(ClientObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"data", "compile_options", NULL};
  Py_buffer data = {0}, opts = {0};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*|z*", kwlist, &data, &opts)) return NULL;
  const PJRT_Api *api = self->api;
  if (!HAS_FN(api, PJRT_Executable_DeserializeAndLoad)) {
    PyBuffer_Release(&data);
    PyBuffer_Release(&opts);
    PyErr_SetString(PyExc_NotImplementedError,
                    "this PJRT plugin cannot deserialize executables");
    return NULL;
  }
  ARGS(PJRT_Executable_DeserializeAndLoad, .client = self->client,
       .serialized_executable = data.buf, .serialized_executable_size = (size_t)data.len,
       .overridden_serialized_compile_options = opts.buf,
       .overridden_serialized_compile_options_size = opts.buf ? (size_t)opts.len : 0);
  PJRT_Error *err;
  Py_BEGIN_ALLOW_THREADS
  err = api->PJRT_Executable_DeserializeAndLoad(&a);
  Py_END_ALLOW_THREADS
  PyBuffer_Release(&data);
  PyBuffer_Release(&opts);
  if (err != NULL) return raise_error(api, err);
  return wrap_loaded_executable(self, a.loaded_executable);
}

static PyObject *Executable_serialize(ExecutableObject *self, PyObject *unused) {
  (void)unused;
  const PJRT_Api *api = self->client->api;
  if (!HAS_FN(api, PJRT_Executable_Serialize)) {
    PyErr_SetString(PyExc_NotImplementedError, "this PJRT plugin cannot serialize executables");
    return NULL;
  }
  PJRT_Error *err;
  ARGS(PJRT_LoadedExecutable_GetExecutable, .loaded_executable = self->exe);
  if ((err = api->PJRT_LoadedExecutable_GetExecutable(&a)) != NULL)
    return raise_error(api, err);
  PJRT_Executable_Serialize_Args s = {.struct_size = PJRT_Executable_Serialize_Args_STRUCT_SIZE,
                                      .executable = a.executable};
  Py_BEGIN_ALLOW_THREADS
  err = api->PJRT_Executable_Serialize(&s);
  Py_END_ALLOW_THREADS
  PyObject *out = NULL;
  if (err != NULL) {
    raise_error(api, err);
  } else {
    out = PyBytes_FromStringAndSize(s.serialized_bytes, (Py_ssize_t)s.serialized_bytes_size);
    if (s.serialized_executable_deleter != NULL)
      s.serialized_executable_deleter(s.serialized_executable);
  }
  PJRT_Executable_Destroy_Args d = {.struct_size = PJRT_Executable_Destroy_Args_STRUCT_SIZE,
                                    .executable = a.executable};
  destroy_error(api, api->PJRT_Executable_Destroy(&d));
  return out;
}

/* Executable._set_donated(indices): the arguments the module lets XLA reuse
 * (tf.aliasing_output / jax.buffer_donor). execute() then donates DeviceBuffers
 * passed there (deleting them) and copies, never aliases, numpy values there. */
static PyObject *Executable_set_donated(ExecutableObject *self, PyObject *indices) {
  PyObject *seq = PySequence_Fast(indices, "_set_donated() takes a sequence of ints");
  if (seq == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), top = 0;
  for (Py_ssize_t i = 0; i < n; i++) {
    Py_ssize_t v = PyLong_AsSsize_t(PySequence_Fast_ITEMS(seq)[i]);
    if (v < 0) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "negative argument index");
      Py_DECREF(seq);
      return NULL;
    }
    if (v + 1 > top) top = v + 1;
  }
  char *mask = top ? PyMem_Calloc((size_t)top, 1) : NULL;
  if (top && mask == NULL) {
    Py_DECREF(seq);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; i++) mask[PyLong_AsSsize_t(PySequence_Fast_ITEMS(seq)[i])] = 1;
  Py_DECREF(seq);
  PyMem_Free(self->donated);
  self->donated = mask;
  self->ndonated_args = top;
  Py_RETURN_NONE;
}

/* Whether PJRT deleted (took) `b` during the call: donation succeeded. */
static int pjrt_buffer_is_deleted(const PJRT_Api *api, PJRT_Buffer *b) {
  if (!HAS_FN(api, PJRT_Buffer_IsDeleted)) return 1;
  ARGS(PJRT_Buffer_IsDeleted, .buffer = b);
  PJRT_Error *err = api->PJRT_Buffer_IsDeleted(&a);
  if (err != NULL) {
    destroy_error(api, err);
    return 0;
  }
  return a.is_deleted;
}

/* Whether `b` may be donated: never memory a numpy view shares, or a buffer another
 * call uses (XLA would overwrite or free it under them). */
static int donation_safe(const BufferObject *b) {
  return !(b->exported || b->extref || b->inflight > 0);
}

/* Whether argv[i] is passed again in argv: PJRT refuses to donate such a buffer. */
static int passed_twice(PJRT_Buffer *const *argv, Py_ssize_t nargs, Py_ssize_t i) {
  for (Py_ssize_t j = 0; j < nargs; j++)
    if (j != i && argv[j] == argv[i]) return 1;
  return 0;
}

/* After a run that donated `b` (its inflight count already dropped): if XLA took it,
 * the DeviceBuffer is deleted, as after delete(). */
static void mark_if_taken(const PJRT_Api *api, BufferObject *b) {
  if (b->deleted || !pjrt_buffer_is_deleted(api, b->buf)) return;
  b->deleted = 1;
  if (b->inflight == 0) {
    ARGS(PJRT_Buffer_Destroy, .buffer = b->buf);
    b->buf = NULL;
    destroy_error(api, api->PJRT_Buffer_Destroy(&a));
  }
}

/* One run on `nargs` arguments: DeviceBuffers or numpy values, read from `seq` (a
 * PySequence_Fast, re-read each time because the upload hooks run Python code) or, where
 * `seq` is NULL, from `items` (references the caller holds). Returns a list of the
 * results' DeviceBuffers. */
static PyObject *run_once(ExecutableObject *self, PyObject *seq, PyObject *const *items,
                          Py_ssize_t nargs) {
  ClientObject *c = self->client;
  const PJRT_Api *api = c->api;
  Py_ssize_t nout = self->num_outputs;

  PJRT_Buffer *arg_stack[STACK_ARGS], *out_stack[STACK_ARGS];
  PyObject *held_stack[STACK_ARGS];
  char temp_stack[STACK_ARGS];
  int64_t keep_stack[STACK_ARGS];
  PJRT_Buffer **argv = arg_stack, **outv = out_stack;
  PyObject **held = held_stack;
  char *temp = temp_stack; /* 0: caller's DeviceBuffer, 1: uploaded, 2: donated buffer,
                              3: held only (failed before either) */
  int64_t *keep = keep_stack; /* donatable arguments that must not be donated this time */
  size_t nkeep = 0;
  int executed = 0;
  PyObject *result = NULL;
  Py_ssize_t nheld = 0, i;
  if (nargs > STACK_ARGS) {
    argv = PyMem_Malloc(sizeof(PJRT_Buffer *) * (size_t)nargs);
    held = PyMem_Malloc(sizeof(PyObject *) * (size_t)nargs);
    temp = PyMem_Malloc((size_t)nargs);
    keep = PyMem_Malloc(sizeof(int64_t) * (size_t)nargs);
    if (!argv || !held || !temp || !keep) {
      PyErr_NoMemory();
      goto cleanup;
    }
  }
  if (nout > STACK_ARGS) {
    outv = PyMem_Malloc(sizeof(PJRT_Buffer *) * (size_t)nout);
    if (!outv) {
      PyErr_NoMemory();
      goto cleanup;
    }
  }
  for (i = 0; i < nargs; i++) {
    /* Re-read each time: the conversion hooks run Python code. */
    if (seq != NULL && PySequence_Fast_GET_SIZE(seq) != nargs) {
      PyErr_SetString(PyExc_RuntimeError, "execute() argument list changed during the call");
      goto cleanup;
    }
    PyObject *x = seq != NULL ? PySequence_Fast_ITEMS(seq)[i] : items[i];
    /* Held before the upload hooks run Python code, which may drop the list's reference. */
    Py_INCREF(x);
    held[nheld++] = x;
    temp[i] = 3;
    int donatable = i < self->ndonated_args && self->donated[i];
    if (Py_TYPE(x) == &BufferType) {
      BufferObject *b = (BufferObject *)x;
      if (b->deleted) {
        PyErr_Format(XlaRuntimeError,
                     "INVALID_ARGUMENT: argument %zd is a deleted DeviceBuffer", i);
        goto cleanup;
      }
      if (b->client != c || b->dev_index != self->dev_index) {
        /* A buffer on another device, of this client or another platform's (an uncommitted
         * array computed there): copied through host memory to this program's device, as
         * JAX moves uncommitted arguments to where the program runs. */
        PyObject *host = PyObject_CallMethod(x, "copy_to_host", NULL);
        if (host == NULL) goto cleanup;
        int ptype;
        argv[i] = upload(c, host, self->dev_index, ALIAS_NEVER, &ptype, NULL, NULL);
        Py_DECREF(host);
        if (argv[i] == NULL) goto cleanup;
        temp[i] = 1;
        continue;
      }
      argv[i] = b->buf;
      temp[i] = 0;
      if (donatable) {
        if (donation_safe(b))
          temp[i] = 2;
        else
          keep[nkeep++] = i;
      }
      b->inflight++;
    } else {
      int ptype;
      /* A donated numpy value is copied: XLA may write the result into it. */
      argv[i] = upload(c, x, self->dev_index, donatable ? ALIAS_NEVER : ALIAS_IF_IMMUTABLE,
                       &ptype, NULL, NULL);
      if (argv[i] == NULL) goto cleanup;
      temp[i] = 1;
    }
  }
  for (i = 0; i < nargs; i++) {
    if (temp[i] == 2 && passed_twice(argv, nargs, i)) {
      temp[i] = 0;
      keep[nkeep++] = i;
    }
  }
  {
    PJRT_ExecuteOptions options = self->options;
    if (nkeep > 0) {
      options.non_donatable_input_indices = keep;
      options.num_non_donatable_input_indices = nkeep;
    }
    PJRT_Buffer *const *arg_lists[1] = {argv};
    PJRT_Buffer **out_lists[1] = {outv};
    /* A run is followed through its results; one without results, through its
     * completion event (which costs the plugin time, so only then). */
    PJRT_Event *complete[1] = {NULL};
    ARGS(PJRT_LoadedExecutable_Execute, .executable = self->exe, .options = &options,
         .argument_lists = arg_lists, .num_devices = 1, .num_args = (size_t)nargs,
         .output_lists = out_lists, .device_complete_events = nout ? NULL : complete);
    PJRT_Error *err;
    if (release_gil_in_execute) {
      Py_BEGIN_ALLOW_THREADS
      err = api->PJRT_LoadedExecutable_Execute(&a);
      Py_END_ALLOW_THREADS
    } else {
      err = api->PJRT_LoadedExecutable_Execute(&a);
    }
    if (err != NULL) {
      raise_error(api, err);
      goto cleanup;
    }
    executed = 1;
    if (complete[0] != NULL) follow_run(c, complete[0]);
  }
  result = PyList_New(nout);
  if (result == NULL) {
    for (i = 0; i < nout; i++) {
      ARGS(PJRT_Buffer_Destroy, .buffer = outv[i]);
      destroy_error(api, api->PJRT_Buffer_Destroy(&a));
    }
    goto cleanup;
  }
  for (i = 0; i < nout; i++) {
    BufferObject *b = new_buffer(c, outv[i], self->out_ptypes[i], self->dev_index,
                                 self->out_shapes[i], self->out_dtypes[i]);
    if (b == NULL) {
      for (Py_ssize_t j = i; j < nout; j++) {
        ARGS(PJRT_Buffer_Destroy, .buffer = outv[j]);
        destroy_error(api, api->PJRT_Buffer_Destroy(&a));
      }
      Py_CLEAR(result);
      goto cleanup;
    }
    if (b->ptype < 0) {
      ARGS(PJRT_Buffer_ElementType, .buffer = outv[i]);
      PJRT_Error *err = api->PJRT_Buffer_ElementType(&a);
      if (err != NULL) {
        destroy_error(api, err);
      } else {
        b->ptype = (int)a.type;
      }
    }
    PyList_SET_ITEM(result, i, (PyObject *)b);
  }
cleanup:
  /* Uploaded temporaries: PJRT keeps their memory until the run is done. */
  for (i = 0; i < nheld; i++) {
    if (temp[i] == 1) {
      ARGS(PJRT_Buffer_Destroy, .buffer = argv[i]);
      destroy_error(api, api->PJRT_Buffer_Destroy(&a));
    } else if (temp[i] != 3) {
      BufferObject *b = (BufferObject *)held[i];
      b->inflight--;
      if (temp[i] == 2 && executed) mark_if_taken(api, b);
    }
    Py_DECREF(held[i]);
  }
  if (argv != arg_stack) {
    PyMem_Free(argv);
    PyMem_Free(held);
    PyMem_Free(temp);
    PyMem_Free(keep);
  }
  if (outv != out_stack) PyMem_Free(outv);
  return result;
}

static PyObject *Executable_execute(ExecutableObject *self, PyObject *arglist) {
  PyObject *seq = PySequence_Fast(arglist, "execute() takes a list of arguments");
  if (seq == NULL) return NULL;
  PyObject *result = run_once(self, seq, NULL, PySequence_Fast_GET_SIZE(seq));
  Py_DECREF(seq);
  return result;
}

/* The Array class whose instances call_arrays() reads and makes, and where its slots
 * are (set_array_class). */
static PyTypeObject *array_type = NULL;
static Py_ssize_t array_aval_offset, array_npy_offset, array_buffer_offset;

#define ARRAY_SLOT(obj, offset) (*(PyObject **)((char *)(obj) + (offset)))

/* A slot's offset in instances of `type`: its member descriptor's, which must hold an
 * object (-1 with an exception otherwise). */
static Py_ssize_t slot_offset(PyTypeObject *type, const char *name) {
  PyObject *descr = PyDict_GetItemString(type->tp_dict, name); /* borrowed */
  if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type) ||
      ((PyMemberDescrObject *)descr)->d_member->type != T_OBJECT_EX) {
    PyErr_Format(PyExc_TypeError, "set_array_class: %s has no object slot %s",
                 type->tp_name, name);
    return -1;
  }
  return ((PyMemberDescrObject *)descr)->d_member->offset;
}

PyObject *set_array_class(PyObject *mod, PyObject *arg) {
  (void)mod;
  if (!PyType_Check(arg)) {
    PyErr_SetString(PyExc_TypeError, "set_array_class() takes a class");
    return NULL;
  }
  PyTypeObject *type = (PyTypeObject *)arg;
  Py_ssize_t aval = slot_offset(type, "_aval"), npy = slot_offset(type, "_npy"),
             buffer = slot_offset(type, "_buffer");
  if (aval < 0 || npy < 0 || buffer < 0) return NULL;
  Py_INCREF(type);
  Py_XSETREF(array_type, type);
  array_aval_offset = aval;
  array_npy_offset = npy;
  array_buffer_offset = buffer;
  Py_RETURN_NONE;
}

/* An Array holding `buffer` (a new reference, stolen) with abstract value `aval`, as
 * Array._from_buffer makes it. */
static PyObject *new_array(PyObject *buffer, PyObject *aval) {
  PyObject *array = array_type->tp_alloc(array_type, 0);
  if (array == NULL) {
    Py_DECREF(buffer);
    return NULL;
  }
  Py_INCREF(aval);
  ARRAY_SLOT(array, array_aval_offset) = aval;
  Py_INCREF(Py_None);
  ARRAY_SLOT(array, array_npy_offset) = Py_None;
  ARRAY_SLOT(array, array_buffer_offset) = buffer;
  return array;
}

/* call_arrays(const_buffers, args, in_avals, out_avals): a jitted call's whole run in C,
 * for the common case: `args` (a tuple) holds Arrays of the registered class, each with a
 * DeviceBuffer, and `const_buffers` (a list) DeviceBuffers. Returns the list of result
 * Arrays, or None when that case does not apply (the caller takes the general path). */
static PyObject *Executable_call_arrays(ExecutableObject *self, PyObject *const *argv,
                                        Py_ssize_t argc) {
  if (argc != 4 || !PyList_CheckExact(argv[0]) || !PyTuple_CheckExact(argv[1]) ||
      !PyTuple_CheckExact(argv[2]) || !PyTuple_CheckExact(argv[3])) {
    PyErr_SetString(PyExc_TypeError, "call_arrays(list, tuple, tuple, tuple)");
    return NULL;
  }
  PyObject *consts = argv[0], *args = argv[1], *out_avals = argv[3];
  Py_ssize_t nconst = PyList_GET_SIZE(consts), nin = PyTuple_GET_SIZE(args);
  Py_ssize_t nargs = nconst + nin, i;
  if (array_type == NULL || self->donated != NULL || nin != PyTuple_GET_SIZE(argv[2]) ||
      PyTuple_GET_SIZE(out_avals) != self->num_outputs || nargs > STACK_ARGS)
    Py_RETURN_NONE;
  PyObject *items[STACK_ARGS];
  for (i = 0; i < nconst; i++) {
    items[i] = PyList_GET_ITEM(consts, i);
    if (!Py_IS_TYPE(items[i], &BufferType)) Py_RETURN_NONE;
  }
  for (i = 0; i < nin; i++) {
    PyObject *x = PyTuple_GET_ITEM(args, i);
    if (!Py_IS_TYPE(x, array_type)) Py_RETURN_NONE;
    PyObject *buffer = ARRAY_SLOT(x, array_buffer_offset);
    if (buffer == NULL || !Py_IS_TYPE(buffer, &BufferType)) Py_RETURN_NONE;
    items[nconst + i] = buffer;
  }
  /* Held: a DeviceBuffer on another device is copied by Python code, which could change
   * the list or the Arrays. */
  for (i = 0; i < nargs; i++) Py_INCREF(items[i]);
  PyObject *result = run_once(self, NULL, items, nargs);
  for (i = 0; i < nargs; i++) Py_DECREF(items[i]);
  if (result == NULL) return NULL;
  for (i = 0; i < self->num_outputs; i++) {
    PyObject *buffer = PyList_GET_ITEM(result, i);
    PyList_SET_ITEM(result, i, NULL);
    PyObject *array = new_array(buffer, PyTuple_GET_ITEM(out_avals, i));
    if (array == NULL) {
      Py_DECREF(result);
      return NULL;
    }
    PyList_SET_ITEM(result, i, array);
  }
  return result;
}

/* execute_sharded(arg_lists): one run over every device of a multi-device (SPMD)
 * executable. arg_lists holds one list of DeviceBuffers per device, in the executable's
 * device order (`devices`), each on its device; the result is one list of DeviceBuffers
 * per device. Arguments the module marks as donatable are donated (on every device, or
 * on none where unsafe on one: PJRT's non-donatable indices hold for the whole run), and
 * the DeviceBuffers XLA took are marked deleted. */
static PyObject *Executable_execute_sharded(ExecutableObject *self, PyObject *arg_lists) {
  ClientObject *c = self->client;
  const PJRT_Api *api = c->api;
  Py_ssize_t ndev = self->ndev, nout = self->num_outputs, nargs = -1, d, i;
  PyObject *lists = PySequence_Tuple(arg_lists);
  if (lists == NULL) return NULL;
  if (PyTuple_GET_SIZE(lists) != ndev) {
    PyErr_Format(PyExc_ValueError, "execute_sharded() takes %zd argument lists (one per "
                 "device), got %zd", ndev, PyTuple_GET_SIZE(lists));
    Py_DECREF(lists);
    return NULL;
  }
  PyObject *result = NULL;
  PyObject **tuples = PyMem_Calloc((size_t)ndev + 1, sizeof(PyObject *));
  PJRT_Buffer ***argv = PyMem_Calloc((size_t)ndev + 1, sizeof(PJRT_Buffer **));
  PJRT_Buffer ***outv = PyMem_Calloc((size_t)ndev + 1, sizeof(PJRT_Buffer **));
  PJRT_Event **complete = PyMem_Calloc((size_t)ndev + 1, sizeof(PJRT_Event *));
  int64_t *keep = NULL;
  char *give = NULL; /* per argument: donated this run */
  if (!tuples || !argv || !outv || !complete) {
    PyErr_NoMemory();
    goto cleanup;
  }
  for (d = 0; d < ndev; d++) {
    tuples[d] = PySequence_Tuple(PyTuple_GET_ITEM(lists, d));
    if (tuples[d] == NULL) goto cleanup;
    Py_ssize_t n = PyTuple_GET_SIZE(tuples[d]);
    if (nargs >= 0 && n != nargs) {
      PyErr_SetString(PyExc_ValueError, "execute_sharded(): the argument lists differ in "
                      "length");
      goto cleanup;
    }
    nargs = n;
    argv[d] = PyMem_Calloc((size_t)nargs + 1, sizeof(PJRT_Buffer *));
    outv[d] = PyMem_Calloc((size_t)nout + 1, sizeof(PJRT_Buffer *));
    if (!argv[d] || !outv[d]) {
      PyErr_NoMemory();
      goto cleanup;
    }
    for (i = 0; i < nargs; i++) {
      PyObject *x = PyTuple_GET_ITEM(tuples[d], i);
      if (Py_TYPE(x) != &BufferType) {
        PyErr_Format(PyExc_TypeError, "execute_sharded(): argument %zd of device %zd is not "
                     "a DeviceBuffer", i, d);
        goto cleanup;
      }
      BufferObject *b = (BufferObject *)x;
      if (b->deleted) {
        PyErr_Format(XlaRuntimeError, "INVALID_ARGUMENT: argument %zd of device %zd is a "
                     "deleted DeviceBuffer", i, d);
        goto cleanup;
      }
      if (b->dev_index != self->dev_indices[d]) {
        PyErr_Format(PyExc_ValueError, "execute_sharded(): argument %zd of the list for "
                     "device %zd is on another device", i, d);
        goto cleanup;
      }
      argv[d][i] = b->buf;
    }
  }
  if (nargs < 0) nargs = 0;
  PJRT_ExecuteOptions options = self->options;
  give = PyMem_Calloc((size_t)nargs + 1, 1);
  keep = PyMem_Calloc((size_t)nargs + 1, sizeof(int64_t));
  if (!give || !keep) {
    PyErr_NoMemory();
    goto cleanup;
  }
  size_t nkeep = 0;
  for (i = 0; i < self->ndonated_args && i < nargs; i++) {
    if (!self->donated[i]) continue;
    give[i] = 1;
    for (d = 0; d < ndev && give[i]; d++)
      give[i] = donation_safe((BufferObject *)PyTuple_GET_ITEM(tuples[d], i)) &&
                !passed_twice(argv[d], nargs, i);
    if (!give[i]) keep[nkeep++] = i;
  }
  if (nkeep > 0) {
    options.non_donatable_input_indices = keep;
    options.num_non_donatable_input_indices = nkeep;
  }
  for (d = 0; d < ndev; d++)
    for (i = 0; i < nargs; i++) ((BufferObject *)PyTuple_GET_ITEM(tuples[d], i))->inflight++;
  {
    ARGS(PJRT_LoadedExecutable_Execute, .executable = self->exe, .options = &options,
         .argument_lists = (PJRT_Buffer *const *const *)argv, .num_devices = (size_t)ndev,
         .num_args = (size_t)nargs, .output_lists = outv,
         .device_complete_events = nout ? NULL : complete);
    PJRT_Error *err;
    Py_BEGIN_ALLOW_THREADS
    err = api->PJRT_LoadedExecutable_Execute(&a);
    Py_END_ALLOW_THREADS
    for (d = 0; d < ndev; d++)
      for (i = 0; i < nargs; i++)
        ((BufferObject *)PyTuple_GET_ITEM(tuples[d], i))->inflight--;
    if (err != NULL) {
      raise_error(api, err);
      goto cleanup;
    }
    for (i = 0; i < nargs; i++)
      for (d = 0; d < ndev && give[i]; d++)
        mark_if_taken(api, (BufferObject *)PyTuple_GET_ITEM(tuples[d], i));
    for (d = 0; d < ndev; d++)
      if (complete[d] != NULL) follow_run(c, complete[d]);
  }
  result = PyList_New(ndev);
  for (d = 0; d < ndev; d++) {
    PyObject *outs = result ? PyList_New(nout) : NULL;
    for (i = 0; i < nout; i++) {
      BufferObject *b = outs ? new_buffer(c, outv[d][i], self->out_ptypes[i],
                                          self->dev_indices[d], NULL, self->out_dtypes[i])
                             : NULL;
      if (b == NULL) {
        ARGS(PJRT_Buffer_Destroy, .buffer = outv[d][i]);
        destroy_error(api, api->PJRT_Buffer_Destroy(&a));
        Py_CLEAR(outs);
        continue;
      }
      PyList_SET_ITEM(outs, i, (PyObject *)b);
    }
    if (outs == NULL) {
      Py_CLEAR(result);
      continue;
    }
    PyList_SET_ITEM(result, d, outs);
  }
cleanup:
  if (tuples)
    for (d = 0; d < ndev; d++) Py_XDECREF(tuples[d]);
  if (argv)
    for (d = 0; d < ndev; d++) PyMem_Free(argv[d]);
  if (outv)
    for (d = 0; d < ndev; d++) PyMem_Free(outv[d]);
  PyMem_Free(tuples);
  PyMem_Free(argv);
  PyMem_Free(outv);
  PyMem_Free(complete);
  PyMem_Free(keep);
  PyMem_Free(give);
  Py_DECREF(lists);
  return result;
}

/* optimized_program() -> (bytes, format): the program after XLA's passes (for the CPU
 * plugin a serialized HloModuleProto, format "hlo"), where SPMD compiles record the
 * shardings the partitioner chose for the results. */
static PyObject *Executable_optimized_program(ExecutableObject *self, PyObject *unused) {
  (void)unused;
  const PJRT_Api *api = self->client->api;
  if (!HAS_FN(api, PJRT_Executable_OptimizedProgram)) {
    PyErr_SetString(PyExc_NotImplementedError, "this PJRT plugin cannot return the "
                    "optimized program");
    return NULL;
  }
  PJRT_Error *err;
  ARGS(PJRT_LoadedExecutable_GetExecutable, .loaded_executable = self->exe);
  if ((err = api->PJRT_LoadedExecutable_GetExecutable(&a)) != NULL)
    return raise_error(api, err);
  PJRT_Executable *ex = a.executable;
  PyObject *result = NULL;
  char *code = NULL;
  PJRT_Program program = {.struct_size = PJRT_Program_STRUCT_SIZE};
  PJRT_Executable_OptimizedProgram_Args o = {
      .struct_size = PJRT_Executable_OptimizedProgram_Args_STRUCT_SIZE, .executable = ex,
      .program = &program};
  if ((err = api->PJRT_Executable_OptimizedProgram(&o)) != NULL) {
    raise_error(api, err);
    goto done;
  }
  code = PyMem_Malloc(program.code_size + 1);
  if (code == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  program.code = code;
  if ((err = api->PJRT_Executable_OptimizedProgram(&o)) != NULL) {
    raise_error(api, err);
    goto done;
  }
  result = Py_BuildValue("(y#s#)", code, (Py_ssize_t)program.code_size, program.format,
                         (Py_ssize_t)program.format_size);
done:
  PyMem_Free(code);
  PJRT_Executable_Destroy_Args d = {.struct_size = PJRT_Executable_Destroy_Args_STRUCT_SIZE,
                                    .executable = ex};
  destroy_error(api, api->PJRT_Executable_Destroy(&d));
  return result;
}

static PyObject *Executable_get_devices(ExecutableObject *self, void *c) {
  (void)c;
  PyObject *devs = self->client->py_devices;
  PyObject *t = PyTuple_New(self->ndev);
  if (t == NULL) return NULL;
  for (Py_ssize_t k = 0; k < self->ndev; k++) {
    int index = self->dev_indices[k];
    PyObject *v = PyTuple_Check(devs) && index < PyTuple_GET_SIZE(devs)
                      ? PyTuple_GET_ITEM(devs, index)
                      : NULL;
    v = v ? (Py_INCREF(v), v) : PyLong_FromLong(index);
    if (v == NULL) {
      Py_DECREF(t);
      return NULL;
    }
    PyTuple_SET_ITEM(t, k, v);
  }
  return t;
}

static PyObject *Executable_get_shapes(ExecutableObject *self, void *c) {
  (void)c;
  PyObject *t = PyTuple_New(self->num_outputs);
  if (t == NULL) return NULL;
  for (Py_ssize_t i = 0; i < self->num_outputs; i++) {
    PyObject *v = self->out_shapes[i] ? self->out_shapes[i] : Py_None;
    Py_INCREF(v);
    PyTuple_SET_ITEM(t, i, v);
  }
  return t;
}

static PyObject *Executable_get_dtypes(ExecutableObject *self, void *c) {
  (void)c;
  PyObject *t = PyTuple_New(self->num_outputs);
  if (t == NULL) return NULL;
  for (Py_ssize_t i = 0; i < self->num_outputs; i++) {
    PyObject *v = self->out_dtypes[i] ? self->out_dtypes[i] : Py_None;
    Py_INCREF(v);
    PyTuple_SET_ITEM(t, i, v);
  }
  return t;
}

static PyObject *Executable_get_device(ExecutableObject *self, void *c) {
  (void)c;
  PyObject *devs = self->client->py_devices;
  if (PyTuple_Check(devs) && self->dev_index < PyTuple_GET_SIZE(devs)) {
    PyObject *d = PyTuple_GET_ITEM(devs, self->dev_index);
    Py_INCREF(d);
    return d;
  }
  return PyLong_FromLong(self->dev_index);
}

static PyObject *opt_or_none(PyObject *o) {
  if (o == NULL) o = Py_None;
  Py_INCREF(o);
  return o;
}

static PyObject *Executable_get_name(ExecutableObject *self, void *c) {
  (void)c;
  return opt_or_none(self->name);
}

static PyObject *Executable_get_fingerprint(ExecutableObject *self, void *c) {
  (void)c;
  return opt_or_none(self->fingerprint);
}

static PyMethodDef Executable_methods[] = {
    {"execute", (PyCFunction)Executable_execute, METH_O,
     "execute(args) -> list[DeviceBuffer]\n\nRuns the program on DeviceBuffer or numpy "
     "arguments; returns at once (asynchronous). Writeable numpy arguments are copied "
     "during the call, so later writes to them never change the results."},
    {"call_arrays", (PyCFunction)(void (*)(void))Executable_call_arrays, METH_FASTCALL,
     "call_arrays(const_buffers, args, in_avals, out_avals) -> list[Array] | None\n\nA "
     "jitted call's run for Arrays that hold DeviceBuffers (set_array_class's class) and "
     "DeviceBuffer constants, without donation: the result Arrays, or None where another "
     "argument asks for the general path (execute)."},
    {"execute_sharded", (PyCFunction)Executable_execute_sharded, METH_O,
     "execute_sharded(arg_lists) -> list[list[DeviceBuffer]]\n\nOne run on every device "
     "of a multi-device program: a list of DeviceBuffers per device (in `devices` order) "
     "in, a list of results per device out. Donated arguments' buffers are taken."},
    {"optimized_program", (PyCFunction)Executable_optimized_program, METH_NOARGS,
     "optimized_program() -> (bytes, format): the program after XLA's passes."},
    {"serialize", (PyCFunction)Executable_serialize, METH_NOARGS,
     "serialize() -> bytes: the compiled program, for Client.deserialize_executable on the "
     "same plugin build."},
    {"_set_donated", (PyCFunction)Executable_set_donated, METH_O,
     "_set_donated(indices): arguments whose buffers the program may reuse for results."},
    {NULL, NULL, 0, NULL}};

static PyMemberDef Executable_members[] = {
    {"num_outputs", T_PYSSIZET, offsetof(ExecutableObject, num_outputs), READONLY,
     "Number of results."},
    {NULL, 0, 0, 0, NULL}};

static PyGetSetDef Executable_getset[] = {
    {"output_shapes", (getter)Executable_get_shapes, NULL, "Shapes of the results.", NULL},
    {"output_dtypes", (getter)Executable_get_dtypes, NULL, "dtypes of the results.", NULL},
    {"device", (getter)Executable_get_device, NULL, "Device it runs on.", NULL},
    {"devices", (getter)Executable_get_devices, NULL,
     "Every device it runs on, in the order of its argument lists.", NULL},
    {"name", (getter)Executable_get_name, NULL, NULL, NULL},
    {"fingerprint", (getter)Executable_get_fingerprint, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject ExecutableType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "xjax._src.runtime.Executable",
    .tp_basicsize = sizeof(ExecutableObject),
    .tp_dealloc = (destructor)Executable_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A program compiled and loaded by PJRT.",
    .tp_methods = Executable_methods,
    .tp_members = Executable_members,
    .tp_getset = Executable_getset,
};

