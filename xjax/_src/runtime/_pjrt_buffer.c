/* DeviceBuffer: readiness, numpy views and copies; uploads from numpy. */
#include "_pjrt.h"

/* ------------------------------------------------------------- DeviceBuffer */

BufferObject *new_buffer(ClientObject *c, PJRT_Buffer *b, int ptype, int dev_index,
                         PyObject *shape, PyObject *dtype) {
  BufferObject *self = PyObject_New(BufferObject, &BufferType);
  if (self == NULL) return NULL;
  Py_INCREF(c);
  self->client = c;
  self->live_prev = NULL;
  self->live_next = c->live;
  if (c->live != NULL) c->live->live_prev = self;
  c->live = self;
  self->buf = b;
  Py_XINCREF(shape);
  self->shape = shape;
  Py_XINCREF(dtype);
  self->dtype = dtype;
  self->host_ptr = NULL;
  self->ptype = ptype;
  self->dev_index = dev_index;
  self->ready = 0;
  self->deleted = 0;
  self->exported = 0;
  self->extref = 0;
  self->layout_ok = 0;
  self->inflight = 0;
  self->weakrefs = NULL;
  return self;
}

static void Buffer_dealloc(BufferObject *self) {
  if (self->weakrefs != NULL) PyObject_ClearWeakRefs((PyObject *)self);
  if (self->buf != NULL) {
    const PJRT_Api *api = self->client->api;
    if (self->extref) {
      PJRT_Buffer_DecreaseExternalReferenceCount_Args d = {
          .struct_size = PJRT_Buffer_DecreaseExternalReferenceCount_Args_STRUCT_SIZE,
          .buffer = self->buf};
      destroy_error(api, api->PJRT_Buffer_DecreaseExternalReferenceCount(&d));
    }
    release_buffer(self->client, self->buf, self->ready);
  }
  if (self->live_prev != NULL)
    self->live_prev->live_next = self->live_next;
  else
    self->client->live = self->live_next;
  if (self->live_next != NULL) self->live_next->live_prev = self->live_prev;
  Py_XDECREF(self->shape);
  Py_XDECREF(self->dtype);
  Py_XDECREF(self->client);
  PyObject_Free(self);
}

static int check_alive(BufferObject *self) {
  if (self->deleted) {
    PyErr_SetString(XlaRuntimeError, "INVALID_ARGUMENT: DeviceBuffer has been deleted");
    return -1;
  }
  if (self->ptype < 0 || self->ptype >= MAX_PTYPE) { /* PJRT did not say (indexes tables) */
    PyErr_Format(PyExc_TypeError, "DeviceBuffer of unknown PJRT element type %d", self->ptype);
    return -1;
  }
  return 0;
}

static PyObject *Buffer_get_shape(BufferObject *self, void *c) {
  (void)c;
  if (self->shape == NULL) {
    if (check_alive(self) < 0) return NULL;
    const PJRT_Api *api = self->client->api;
    ARGS(PJRT_Buffer_Dimensions, .buffer = self->buf);
    PJRT_Error *err = api->PJRT_Buffer_Dimensions(&a);
    if (err != NULL) return raise_error(api, err);
    PyObject *t = PyTuple_New((Py_ssize_t)a.num_dims);
    if (t == NULL) return NULL;
    for (size_t i = 0; i < a.num_dims; i++) {
      PyObject *d = PyLong_FromLongLong(a.dims[i]);
      if (d == NULL) {
        Py_DECREF(t);
        return NULL;
      }
      PyTuple_SET_ITEM(t, (Py_ssize_t)i, d);
    }
    self->shape = t;
  }
  Py_INCREF(self->shape);
  return self->shape;
}

static PyObject *Buffer_get_dtype(BufferObject *self, void *c) {
  (void)c;
  if (self->dtype == NULL) {
    PyObject *d = (self->ptype >= 0 && self->ptype < MAX_PTYPE) ? ptype_dtype[self->ptype]
                                                                : NULL;
    if (d == NULL) {
      PyErr_Format(PyExc_TypeError, "PJRT element type %d has no numpy dtype", self->ptype);
      return NULL;
    }
    Py_INCREF(d);
    self->dtype = d;
  }
  Py_INCREF(self->dtype);
  return self->dtype;
}

static PyObject *Buffer_get_device(BufferObject *self, void *c) {
  (void)c;
  PyObject *devs = self->client->py_devices;
  if (PyTuple_Check(devs) && self->dev_index < PyTuple_GET_SIZE(devs)) {
    PyObject *d = PyTuple_GET_ITEM(devs, self->dev_index);
    Py_INCREF(d);
    return d;
  }
  return PyLong_FromLong(self->dev_index);
}

static Py_ssize_t buffer_size(BufferObject *self) {
  PyObject *shape = Buffer_get_shape(self, NULL);
  if (shape == NULL) return -1;
  Py_ssize_t n = 1;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape); i++)
    n *= PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
  Py_DECREF(shape);
  return n;
}

static PyObject *Buffer_get_nbytes(BufferObject *self, void *c) {
  (void)c;
  Py_ssize_t n = buffer_size(self);
  if (n < 0) return NULL;
  if (self->ptype < 0 || self->ptype >= MAX_PTYPE)
    return PyErr_Format(PyExc_TypeError, "DeviceBuffer of unknown PJRT element type %d",
                        self->ptype);
  return PyLong_FromSsize_t(n * ptype_itemsize[self->ptype]);
}

static int buffer_await(BufferObject *self) {
  if (self->ready) return 0;
  if (check_alive(self) < 0) return -1;
  const PJRT_Api *api = self->client->api;
  ARGS(PJRT_Buffer_ReadyEvent, .buffer = self->buf);
  PJRT_Error *err = api->PJRT_Buffer_ReadyEvent(&a);
  if (err == NULL) err = await_and_destroy(api, a.event);
  if (err != NULL) {
    raise_error(api, err);
    return -1;
  }
  self->ready = 1;
  if (self->client->npending > 0) sweep_pending(self->client, 0);
  return 0;
}

static PyObject *Buffer_block_until_ready(BufferObject *self, PyObject *unused) {
  (void)unused;
  if (buffer_await(self) < 0) return NULL;
  Py_INCREF(self);
  return (PyObject *)self;
}

static PyObject *Buffer_is_ready(BufferObject *self, PyObject *unused) {
  (void)unused;
  if (self->ready) Py_RETURN_TRUE;
  if (check_alive(self) < 0) return NULL;
  const PJRT_Api *api = self->client->api;
  ARGS(PJRT_Buffer_ReadyEvent, .buffer = self->buf);
  PJRT_Error *err = api->PJRT_Buffer_ReadyEvent(&a);
  if (err != NULL) return raise_error(api, err);
  PJRT_Event_IsReady_Args r = {.struct_size = PJRT_Event_IsReady_Args_STRUCT_SIZE,
                               .event = a.event};
  err = api->PJRT_Event_IsReady(&r);
  destroy_event(api, a.event);
  if (err != NULL) return raise_error(api, err);
  return PyBool_FromLong(r.is_ready);
}

static PyObject *Buffer_delete(BufferObject *self, PyObject *unused) {
  (void)unused;
  if (self->deleted) Py_RETURN_NONE;
  self->deleted = 1;
  /* A numpy view may still point at the memory, or another thread's execute()
   * may be passing it to PJRT: then the memory is freed in dealloc. */
  if (!self->exported && self->inflight == 0 && self->buf != NULL) {
    release_buffer(self->client, self->buf, self->ready);
    self->buf = NULL;
  }
  Py_RETURN_NONE;
}

static PyObject *Buffer_is_deleted(BufferObject *self, PyObject *unused) {
  (void)unused;
  return PyBool_FromLong(self->deleted);
}

/* Dense row-major on the host, with a known address? Caches the answer. */
static int ensure_host_view(BufferObject *self) {
  if (check_alive(self) < 0) return -1;
  if (self->host_ptr != NULL) return 1;
  if (!self->client->host_memory || ptype_subbyte[self->ptype]) return 0;
  const PJRT_Api *api = self->client->api;
  PJRT_Error *err;
  PyObject *shape = Buffer_get_shape(self, NULL);
  if (shape == NULL) return -1;
  Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
  Py_DECREF(shape);
  if (ndim >= 2 && self->layout_ok == 0) {
    self->layout_ok = -1;
    if (HAS_FN(api, PJRT_Buffer_GetMemoryLayout)) {
      ARGS(PJRT_Buffer_GetMemoryLayout, .buffer = self->buf);
      err = api->PJRT_Buffer_GetMemoryLayout(&a);
      if (err != NULL) {
        destroy_error(api, err);
      } else if (a.layout.type == PJRT_Buffer_MemoryLayout_Type_Tiled &&
                 a.layout.tiled.num_tiles == 0 &&
                 a.layout.tiled.minor_to_major_size == (size_t)ndim) {
        int ok = 1;
        for (Py_ssize_t i = 0; i < ndim; i++)
          if (a.layout.tiled.minor_to_major[i] != ndim - 1 - i) ok = 0;
        if (ok) self->layout_ok = 1;
      }
    }
  }
  if (ndim >= 2 && self->layout_ok != 1) return 0;
  if (!self->extref) {
    /* Pins the memory where PJRT could otherwise move it. */
    PJRT_Buffer_IncreaseExternalReferenceCount_Args e = {
        .struct_size = PJRT_Buffer_IncreaseExternalReferenceCount_Args_STRUCT_SIZE,
        .buffer = self->buf};
    if (HAS_FN(api, PJRT_Buffer_IncreaseExternalReferenceCount) &&
        HAS_FN(api, PJRT_Buffer_DecreaseExternalReferenceCount)) {
      err = api->PJRT_Buffer_IncreaseExternalReferenceCount(&e);
      if (err != NULL) return raise_error(api, err), -1;
      self->extref = 1;
    }
  }
  ARGS(PJRT_Buffer_UnsafePointer, .buffer = self->buf);
  err = api->PJRT_Buffer_UnsafePointer(&a);
  if (err != NULL) return raise_error(api, err), -1;
  /* Zero-size buffers may have no address; numpy wants a non-NULL one. */
  static char empty_storage[16];
  self->host_ptr = a.buffer_pointer ? (char *)a.buffer_pointer : empty_storage;
  return 1;
}

/* The owner of numpy views of a DeviceBuffer's memory: exports it as raw,
 * read-only bytes and keeps the DeviceBuffer alive. (DeviceBuffer itself has no
 * buffer protocol, so that np.asarray(buffer) goes through __array__.) */
typedef struct {
  PyObject_HEAD
  BufferObject *owner;
  char *ptr;
  Py_ssize_t len;
} HostViewObject;

static void HostView_dealloc(HostViewObject *self) {
  Py_XDECREF(self->owner);
  PyObject_Free(self);
}

static int HostView_getbuffer(HostViewObject *self, Py_buffer *view, int flags) {
  return PyBuffer_FillInfo(view, (PyObject *)self, self->ptr, self->len, 1, flags);
}

static PyBufferProcs HostView_as_buffer = {(getbufferproc)HostView_getbuffer, NULL};

static PyMemberDef HostView_members[] = {
    {"owner", T_OBJECT, offsetof(HostViewObject, owner), READONLY, "The DeviceBuffer."},
    {NULL, 0, 0, 0, NULL}};

PyTypeObject HostViewType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "xjax._src.runtime._pjrt.HostView",
    .tp_basicsize = sizeof(HostViewObject),
    .tp_dealloc = (destructor)HostView_dealloc,
    .tp_as_buffer = &HostView_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Read-only bytes of a DeviceBuffer in host memory (a numpy view's base).",
    .tp_members = HostView_members,
};

static PyObject *Buffer_get_host_view(BufferObject *self) {
  Py_ssize_t n = buffer_size(self);
  if (n < 0) return NULL;
  HostViewObject *v = PyObject_New(HostViewObject, &HostViewType);
  if (v == NULL) return NULL;
  Py_INCREF(self);
  v->owner = self;
  v->ptr = self->host_ptr;
  v->len = n * ptype_itemsize[self->ptype];
  self->exported = 1;
  return (PyObject *)v;
}

/* Copies the device data into a fresh numpy array (any platform). */
static PyObject *Buffer_copy_to_host(BufferObject *self, PyObject *unused) {
  (void)unused;
  if (buffer_await(self) < 0 || check_alive(self) < 0) return NULL;
  const PJRT_Api *api = self->client->api;
  PJRT_Error *err;
  PyObject *shape = Buffer_get_shape(self, NULL);
  if (shape == NULL) return NULL;
  PyObject *dtype = Buffer_get_dtype(self, NULL);
  if (dtype == NULL) {
    Py_DECREF(shape);
    return NULL;
  }
  PyObject *out = NULL, *host = NULL;
  Py_buffer view;
  if (ptype_subbyte[self->ptype]) {
    /* Packed on the device: ask for the packed size, copy, unpack in Python. */
    ARGS(PJRT_Buffer_ToHostBuffer, .src = self->buf, .dst = NULL);
    if ((err = api->PJRT_Buffer_ToHostBuffer(&a)) != NULL) {
      raise_error(api, err);
      goto done;
    }
    host = PyObject_CallFunction(hook_empty, "(n)s", (Py_ssize_t)a.dst_size, "uint8");
  } else {
    host = PyObject_CallFunctionObjArgs(hook_empty, shape, dtype, NULL);
  }
  if (host == NULL) goto done;
  if (PyObject_GetBuffer(host, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) goto done;
  {
    ARGS(PJRT_Buffer_ToHostBuffer, .src = self->buf, .dst = view.buf,
         .dst_size = (size_t)view.len);
    if (view.len > 0) {
      err = api->PJRT_Buffer_ToHostBuffer(&a);
      if (err == NULL) err = await_and_destroy(api, a.event);
    } else {
      err = NULL;
    }
    PyBuffer_Release(&view);
    if (err != NULL) {
      raise_error(api, err);
      goto done;
    }
  }
  if (ptype_subbyte[self->ptype]) {
    out = PyObject_CallFunctionObjArgs(hook_unpack, host, shape, dtype, NULL);
  } else {
    Py_INCREF(host);
    out = host;
  }
done:
  Py_XDECREF(host);
  Py_DECREF(shape);
  Py_DECREF(dtype);
  return out;
}

static PyObject *Buffer_to_numpy(BufferObject *self, PyObject *unused) {
  if (buffer_await(self) < 0) return NULL;
  int ok = ensure_host_view(self);
  if (ok < 0) return NULL;
  if (ok == 0) return Buffer_copy_to_host(self, unused);
  PyObject *args[3];
  args[0] = Buffer_get_shape(self, NULL);
  if (args[0] == NULL) return NULL;
  args[1] = Buffer_get_dtype(self, NULL);
  if (args[1] == NULL) {
    Py_DECREF(args[0]);
    return NULL;
  }
  args[2] = Buffer_get_host_view(self);
  /* ndarray(shape, dtype, buffer=view): read-only, its base keeps self alive. */
  PyObject *out = NULL;
  if (args[2] != NULL) {
    out = PyObject_Vectorcall((PyObject *)ndarray_type, args, 3, NULL);
    Py_DECREF(args[2]);
  }
  Py_DECREF(args[0]);
  Py_DECREF(args[1]);
  return out;
}

static PyObject *Buffer_array(BufferObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"dtype", "copy", NULL};
  PyObject *dtype = Py_None, *copy = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OO", kwlist, &dtype, &copy)) return NULL;
  PyObject *arr = Buffer_to_numpy(self, NULL);
  if (arr == NULL) return NULL;
  PyObject *res = arr;
  if (dtype != Py_None)
    res = PyObject_CallMethod(arr, "astype", "O", dtype);
  else if (copy == Py_True)
    res = PyObject_CallMethod(arr, "copy", NULL);
  if (res != arr) Py_DECREF(arr);
  return res;
}

static PyObject *Buffer_unsafe_pointer(BufferObject *self, PyObject *unused) {
  (void)unused;
  if (check_alive(self) < 0) return NULL;
  const PJRT_Api *api = self->client->api;
  ARGS(PJRT_Buffer_UnsafePointer, .buffer = self->buf);
  PJRT_Error *err = api->PJRT_Buffer_UnsafePointer(&a);
  if (err != NULL) return raise_error(api, err);
  return PyLong_FromSize_t((size_t)a.buffer_pointer);
}

static PyObject *Buffer_repr(BufferObject *self) {
  if (self->deleted) return PyUnicode_FromString("DeviceBuffer(<deleted>)");
  PyObject *shape = Buffer_get_shape(self, NULL);
  if (shape == NULL) return NULL;
  PyObject *dtype = Buffer_get_dtype(self, NULL);
  PyObject *dev = Buffer_get_device(self, NULL);
  PyObject *r = NULL;
  if (dtype != NULL && dev != NULL)
    r = PyUnicode_FromFormat("DeviceBuffer(shape=%R, dtype=%S, device=%R)", shape, dtype,
                             dev);
  Py_DECREF(shape);
  Py_XDECREF(dtype);
  Py_XDECREF(dev);
  return r;
}

static PyMethodDef Buffer_methods[] = {
    {"to_numpy", (PyCFunction)Buffer_to_numpy, METH_NOARGS,
     "Waits for the data; returns a read-only numpy view of it on the CPU "
     "(keeping this buffer alive), else a copy."},
    {"copy_to_host", (PyCFunction)Buffer_copy_to_host, METH_NOARGS,
     "Waits for the data; returns a fresh, writable numpy copy."},
    {"block_until_ready", (PyCFunction)Buffer_block_until_ready, METH_NOARGS,
     "Waits until the buffer is computed; raises XlaRuntimeError if it failed."},
    {"is_ready", (PyCFunction)Buffer_is_ready, METH_NOARGS,
     "Whether the buffer's computation has finished (successfully or not)."},
    {"delete", (PyCFunction)Buffer_delete, METH_NOARGS,
     "Frees the device memory now (deferred while numpy views of it exist)."},
    {"is_deleted", (PyCFunction)Buffer_is_deleted, METH_NOARGS, NULL},
    {"unsafe_buffer_pointer", (PyCFunction)Buffer_unsafe_pointer, METH_NOARGS,
     "The device address of the data, as an int."},
    {"__array__", (PyCFunction)(void (*)(void))Buffer_array, METH_VARARGS | METH_KEYWORDS,
     NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Buffer_getset[] = {
    {"shape", (getter)Buffer_get_shape, NULL, "Tuple of dimensions.", NULL},
    {"dtype", (getter)Buffer_get_dtype, NULL, "numpy dtype of the elements.", NULL},
    {"device", (getter)Buffer_get_device, NULL, "The Device holding the data.", NULL},
    {"nbytes", (getter)Buffer_get_nbytes, NULL, "Size of the data in numpy's layout.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject BufferType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "xjax._src.runtime.DeviceBuffer",
    .tp_basicsize = sizeof(BufferObject),
    .tp_weaklistoffset = offsetof(BufferObject, weakrefs),
    .tp_dealloc = (destructor)Buffer_dealloc,
    .tp_repr = (reprfunc)Buffer_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An array in a device's memory, produced by PJRT (immutable).",
    .tp_methods = Buffer_methods,
    .tp_getset = Buffer_getset,
};

/* ---------------------------------------------------- host -> device upload */

#define DESCR_CACHE 48 /* dtype objects remembered by pointer */

static struct {
  PyObject *descr;
  int ptype;
} descr_cache[DESCR_CACHE];
static int descr_cache_n;

void reset_dtype_cache(void) {
  for (int i = 0; i < descr_cache_n; i++) Py_CLEAR(descr_cache[i].descr);
  descr_cache_n = 0;
}

static int lookup_ptype(PyObject *descr) {
  for (int i = 0; i < descr_cache_n; i++)
    if (descr_cache[i].descr == descr) return descr_cache[i].ptype;
  PyObject *r = PyObject_CallOneArg(hook_dtype_code, descr);
  if (r == NULL) return -2;
  int code = (int)PyLong_AsLong(r);
  Py_DECREF(r);
  if (code == -1 && PyErr_Occurred()) return -2;
  if (code >= 0 && descr_cache_n < DESCR_CACHE) {
    Py_INCREF(descr);
    descr_cache[descr_cache_n].descr = descr;
    descr_cache[descr_cache_n].ptype = code;
    descr_cache_n++;
  }
  return code;
}

/* Whether nothing can ever write the memory behind `arr`: it is a read-only array whose
 * chain of read-only bases ends in an owner that never exports writable memory (bytes, an
 * xjax HostView). A read-only array owning its memory does not count: its holder may make
 * it writeable again; nor does a writeable base, an mmap or any other exporter. */
int is_immutable(PyObject *arr) {
  PyObject *obj = arr;
  Py_INCREF(obj);
  int result = 0;
  for (int depth = 0; depth < 64; depth++) {
    if (Py_TYPE(obj) == &HostViewType || PyBytes_CheckExact(obj)) {
      result = 1;
      break;
    }
    if (!PyObject_TypeCheck(obj, ndarray_type)) break;
    PyObject *flags = PyObject_GetAttrString(obj, "flags");
    PyObject *writeable = flags ? PyObject_GetAttrString(flags, "writeable") : NULL;
    Py_XDECREF(flags);
    int is_writeable = writeable ? PyObject_IsTrue(writeable) : -1;
    Py_XDECREF(writeable);
    PyObject *base = is_writeable == 0 ? PyObject_GetAttr(obj, str_base) : NULL;
    if (base == NULL || base == Py_None) {
      PyErr_Clear();
      Py_XDECREF(base);
      break;
    }
    Py_SETREF(obj, base);
  }
  Py_DECREF(obj);
  return result;
}

/* Uploads numpy-like `obj` to device `dev_index`. PJRT copies it during the call unless
 * `policy` lets it alias the memory (large arrays, host platforms only); an aliased array
 * is referenced until PJRT's done-with-host-buffer event fires. Copying writeable arrays
 * keeps results independent of later writes to them, as an xjax.Array never changes. */
PJRT_Buffer *upload(ClientObject *c, PyObject *obj, int dev_index, AliasPolicy policy,
                    int *ptype_out, PyObject **shape_out, int *aliased_out) {
  const PJRT_Api *api = c->api;
  PyObject *arr = NULL, *dims_obj = NULL;
  int ptype = -1;
  int64_t dims_store[MAX_DIMS];
  const int64_t *dims;
  size_t ndims;
  Py_buffer view;

  if (PyObject_TypeCheck(obj, ndarray_type)) {
    PyObject *descr = PyObject_GetAttr(obj, str_dtype);
    if (descr == NULL) return NULL;
    ptype = lookup_ptype(descr);
    Py_DECREF(descr);
    if (ptype == -2) return NULL;
    if (ptype >= 0) {
      Py_INCREF(obj);
      arr = obj;
    }
  }
  if (arr == NULL) {
    /* Anything unusual (non-arrays, byte-swapped, ...) goes through Python,
     * which returns a native array, its PJRT type and optionally the dims to
     * use when they differ from the array's own. */
    PyObject *r = PyObject_CallOneArg(hook_normalize, obj);
    if (r == NULL) return NULL;
    if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) < 2) {
      Py_DECREF(r);
      PyErr_SetString(PyExc_SystemError, "normalize hook must return a tuple");
      return NULL;
    }
    arr = PyTuple_GET_ITEM(r, 0);
    Py_INCREF(arr);
    ptype = (int)PyLong_AsLong(PyTuple_GET_ITEM(r, 1));
    if (PyTuple_GET_SIZE(r) > 2 && PyTuple_GET_ITEM(r, 2) != Py_None) {
      dims_obj = PyTuple_GET_ITEM(r, 2);
      Py_INCREF(dims_obj);
    }
    Py_DECREF(r);
    if (ptype < 0 || ptype >= MAX_PTYPE) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "bad PJRT type");
      goto fail;
    }
  }
  if (PyObject_GetBuffer(arr, &view, PyBUF_C_CONTIGUOUS) < 0) {
    /* Non-contiguous: make it contiguous first. */
    PyErr_Clear();
    PyObject *contig = PyObject_CallOneArg(hook_contiguous, arr);
    if (contig == NULL) goto fail;
    Py_SETREF(arr, contig);
    if (PyObject_GetBuffer(arr, &view, PyBUF_C_CONTIGUOUS) < 0) goto fail;
  }
  if (dims_obj != NULL) {
    Py_ssize_t n = PyTuple_GET_SIZE(dims_obj);
    if (n > MAX_DIMS) {
      PyErr_SetString(PyExc_ValueError, "too many dimensions");
      PyBuffer_Release(&view);
      goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++)
      dims_store[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(dims_obj, i));
    dims = dims_store;
    ndims = (size_t)n;
  } else {
    dims = view.ndim > 0 ? (const int64_t *)view.shape : dims_store;
    ndims = (size_t)view.ndim;
  }
  if (shape_out != NULL) {
    PyObject *t = PyTuple_New((Py_ssize_t)ndims);
    if (t == NULL) {
      PyBuffer_Release(&view);
      goto fail;
    }
    for (size_t i = 0; i < ndims; i++) {
      PyObject *d = PyLong_FromLongLong(dims[i]);
      if (d == NULL) {
        Py_DECREF(t);
        PyBuffer_Release(&view);
        goto fail;
      }
      PyTuple_SET_ITEM(t, (Py_ssize_t)i, d);
    }
    *shape_out = t;
  }
  int alias = policy != ALIAS_NEVER && view.len >= alias_threshold && c->host_memory &&
              (policy == ALIAS_ALLOWED || is_immutable(arr));
  {
    ARGS(PJRT_Client_BufferFromHostBuffer, .client = c->client, .data = view.buf,
         .type = (PJRT_Buffer_Type)ptype, .dims = dims, .num_dims = ndims,
         .host_buffer_semantics = alias ? PJRT_HostBufferSemantics_kImmutableZeroCopy
                                        : PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
         .device = c->devices[dev_index]);
    PJRT_Error *err;
    if (view.len >= (1 << 20) && !alias) {
      Py_BEGIN_ALLOW_THREADS
      err = api->PJRT_Client_BufferFromHostBuffer(&a);
      Py_END_ALLOW_THREADS
    } else {
      err = api->PJRT_Client_BufferFromHostBuffer(&a);
    }
    if (err != NULL) {
      PyBuffer_Release(&view);
      if (shape_out != NULL) Py_CLEAR(*shape_out);
      raise_error(api, err);
      goto fail;
    }
    if (alias) {
      /* PJRT may read the array until its done-event fires. Without an event
       * (or memory to track it) the array is kept alive for good. */
      if (a.done_with_host_buffer == NULL ||
          add_pending(c, a.done_with_host_buffer, &view) < 0) {
        PyErr_Clear();
        Py_INCREF(arr);
        PyBuffer_Release(&view);
      }
    } else {
      destroy_event(api, a.done_with_host_buffer);
      PyBuffer_Release(&view);
    }
    Py_DECREF(arr);
    Py_XDECREF(dims_obj);
    *ptype_out = ptype;
    if (aliased_out != NULL) *aliased_out = alias;
    return a.buffer;
  }
fail:
  Py_XDECREF(arr);
  Py_XDECREF(dims_obj);
  return NULL;
}

PyObject *Client_buffer_from_numpy(ClientObject *self, PyObject *const *args,
                                   Py_ssize_t nargs, PyObject *kwnames) {
  static const char *names[] = {"array", "device", "may_alias"};
  PyObject *vals[3] = {NULL, Py_None, Py_None};
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nargs < 1 || nargs > 3) {
    PyErr_SetString(PyExc_TypeError, "buffer_from_numpy(array, device=None, may_alias=None)");
    return NULL;
  }
  for (Py_ssize_t i = 0; i < nargs; i++) vals[i] = args[i];
  for (Py_ssize_t k = 0; k < nkw; k++) {
    PyObject *key = PyTuple_GET_ITEM(kwnames, k);
    int found = 0;
    for (int j = 1; j < 3; j++) {
      if (PyUnicode_CompareWithASCIIString(key, names[j]) == 0) {
        vals[j] = args[nargs + k];
        found = 1;
      }
    }
    if (!found) {
      PyErr_Format(PyExc_TypeError, "unexpected keyword argument %R", key);
      return NULL;
    }
  }
  int dev = device_index(self, vals[1]);
  if (dev < 0) return NULL;
  AliasPolicy policy = ALIAS_IF_IMMUTABLE;
  if (vals[2] != Py_None) {
    int may_alias = PyObject_IsTrue(vals[2]);
    if (may_alias < 0) return NULL;
    policy = may_alias ? ALIAS_ALLOWED : ALIAS_NEVER;
  }
  int ptype;
  PyObject *shape = NULL;
  int aliased;
  PJRT_Buffer *b = upload(self, vals[0], dev, policy, &ptype, &shape, &aliased);
  if (b == NULL) return NULL;
  BufferObject *out = new_buffer(self, b, ptype, dev, shape, ptype_dtype[ptype]);
  Py_DECREF(shape);
  /* XLA must never write results into memory numpy arrays share. */
  if (out != NULL) out->exported = (char)aliased;
  if (out == NULL) {
    const PJRT_Api *api = self->api;
    ARGS(PJRT_Buffer_Destroy, .buffer = b);
    destroy_error(api, api->PJRT_Buffer_Destroy(&a));
  }
  return (PyObject *)out;
}

