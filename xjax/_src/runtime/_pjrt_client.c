/* PJRT plugins (dlopen + version check) and clients (devices, pending host refs). */
#include <dlfcn.h>

#include "_pjrt.h"

/* ------------------------------------------------------------------- Plugin */

/* The functions this module calls; a plugin lacking any of them is refused. */
#define REQUIRED_FNS(X)                                                        \
  X(PJRT_Error_Destroy) X(PJRT_Error_Message) X(PJRT_Error_GetCode)            \
  X(PJRT_Plugin_Initialize) X(PJRT_Event_Destroy) X(PJRT_Event_IsReady)        \
  X(PJRT_Event_Error) X(PJRT_Event_Await) X(PJRT_Client_Create)                \
  X(PJRT_Client_Destroy) X(PJRT_Client_PlatformName)                           \
  X(PJRT_Client_PlatformVersion) X(PJRT_Client_AddressableDevices)             \
  X(PJRT_Client_Compile) X(PJRT_Client_BufferFromHostBuffer)                   \
  X(PJRT_DeviceDescription_Id) X(PJRT_DeviceDescription_Kind)                  \
  X(PJRT_DeviceDescription_ToString) X(PJRT_Device_GetDescription)             \
  X(PJRT_Device_LocalHardwareId) X(PJRT_Executable_Destroy)                    \
  X(PJRT_Executable_NumOutputs) X(PJRT_LoadedExecutable_Destroy)               \
  X(PJRT_LoadedExecutable_GetExecutable)                                       \
  X(PJRT_LoadedExecutable_AddressableDevices) X(PJRT_LoadedExecutable_Execute) \
  X(PJRT_Buffer_Destroy) X(PJRT_Buffer_ElementType) X(PJRT_Buffer_Dimensions)  \
  X(PJRT_Buffer_Device) X(PJRT_Buffer_Delete) X(PJRT_Buffer_ToHostBuffer)      \
  X(PJRT_Buffer_IsOnCpu) X(PJRT_Buffer_ReadyEvent) X(PJRT_Buffer_UnsafePointer)

static PyObject *loaded_plugins; /* path bytes -> Plugin: initialise each once */

PyObject *load_plugin(PyObject *mod, PyObject *arg) {
  (void)mod;
  PyObject *path_bytes;
  if (!PyUnicode_FSConverter(arg, &path_bytes)) return NULL;
  if (loaded_plugins == NULL && (loaded_plugins = PyDict_New()) == NULL) {
    Py_DECREF(path_bytes);
    return NULL;
  }
  PyObject *known = PyDict_GetItemWithError(loaded_plugins, path_bytes);
  if (known != NULL || PyErr_Occurred()) {
    Py_DECREF(path_bytes);
    Py_XINCREF(known);
    return known;
  }
  const char *path = PyBytes_AS_STRING(path_bytes);
  /* Never dlclose'd: XLA keeps static registries alive for the process. */
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    PyErr_Format(PyExc_ImportError, "cannot load PJRT plugin %s: %s", path, dlerror());
    Py_DECREF(path_bytes);
    return NULL;
  }
  typedef const PJRT_Api *(*GetApiFn)(void);
  GetApiFn get_api = (GetApiFn)dlsym(handle, "GetPjrtApi");
  if (get_api == NULL) {
    PyErr_Format(PyExc_ImportError, "%s is not a PJRT plugin (no GetPjrtApi)", path);
    Py_DECREF(path_bytes);
    return NULL;
  }
  const PJRT_Api *api = get_api();
  if (api == NULL) {
    PyErr_Format(PyExc_ImportError, "%s: GetPjrtApi() returned NULL", path);
    Py_DECREF(path_bytes);
    return NULL;
  }
  int major = api->pjrt_api_version.major_version;
  int minor = api->pjrt_api_version.minor_version;
  if (major != PJRT_API_MAJOR) {
    PyErr_Format(PyExc_ImportError,
                 "incompatible PJRT plugin %s: it implements PJRT C API %d.%d but xjax "
                 "was built against pjrt_c_api.h %d.%d (major versions must match); "
                 "rebuild xjax against this plugin's header",
                 path, major, minor, PJRT_API_MAJOR, PJRT_API_MINOR);
    Py_DECREF(path_bytes);
    return NULL;
  }
#define CHECK_FN(name)                                                              \
  if (!HAS_FN(api, name)) {                                                         \
    PyErr_Format(PyExc_ImportError,                                                 \
                 "incompatible PJRT plugin %s (C API %d.%d, xjax built against "    \
                 "%d.%d): it does not provide " #name,                              \
                 path, major, minor, PJRT_API_MAJOR, PJRT_API_MINOR);               \
    Py_DECREF(path_bytes);                                                          \
    return NULL;                                                                    \
  }
  REQUIRED_FNS(CHECK_FN)
#undef CHECK_FN
  ARGS(PJRT_Plugin_Initialize, .extension_start = NULL);
  PJRT_Error *err = api->PJRT_Plugin_Initialize(&a);
  if (err != NULL) {
    Py_DECREF(path_bytes);
    return raise_error(api, err);
  }
  PluginObject *self = PyObject_New(PluginObject, &PluginType);
  if (self == NULL) {
    Py_DECREF(path_bytes);
    return NULL;
  }
  self->api = api;
  self->handle = handle;
  self->path = PyUnicode_DecodeFSDefault(path);
  if (self->path == NULL || PyDict_SetItem(loaded_plugins, path_bytes, (PyObject *)self) < 0) {
    Py_DECREF(path_bytes);
    Py_DECREF(self);
    return NULL;
  }
  Py_DECREF(path_bytes);
  return (PyObject *)self;
}

static void Plugin_dealloc(PluginObject *self) {
  Py_XDECREF(self->path);
  PyObject_Free(self);
}

static PyObject *Plugin_api_version(PluginObject *self, void *c) {
  (void)c;
  return Py_BuildValue("(ii)", self->api->pjrt_api_version.major_version,
                       self->api->pjrt_api_version.minor_version);
}

static PyObject *named_value_to_py(const PJRT_NamedValue *nv) {
  switch (nv->type) {
    case PJRT_NamedValue_kString:
      return PyUnicode_DecodeUTF8(nv->string_value, (Py_ssize_t)nv->value_size, "replace");
    case PJRT_NamedValue_kInt64:
      return PyLong_FromLongLong(nv->int64_value);
    case PJRT_NamedValue_kInt64List: {
      PyObject *t = PyTuple_New((Py_ssize_t)nv->value_size);
      if (t == NULL) return NULL;
      for (size_t i = 0; i < nv->value_size; i++) {
        PyObject *v = PyLong_FromLongLong(nv->int64_array_value[i]);
        if (v == NULL) {
          Py_DECREF(t);
          return NULL;
        }
        PyTuple_SET_ITEM(t, (Py_ssize_t)i, v);
      }
      return t;
    }
    case PJRT_NamedValue_kFloat:
      return PyFloat_FromDouble(nv->float_value);
    case PJRT_NamedValue_kBool:
      return PyBool_FromLong(nv->bool_value);
  }
  Py_RETURN_NONE;
}

static PyObject *named_values_to_dict(const PJRT_NamedValue *nv, size_t n) {
  PyObject *d = PyDict_New();
  if (d == NULL) return NULL;
  for (size_t i = 0; i < n; i++) {
    PyObject *v = named_value_to_py(&nv[i]);
    if (v == NULL) {
      Py_DECREF(d);
      return NULL;
    }
    PyObject *k = PyUnicode_DecodeUTF8(nv[i].name, (Py_ssize_t)nv[i].name_size, "replace");
    if (k == NULL || PyDict_SetItem(d, k, v) < 0) {
      Py_XDECREF(k);
      Py_DECREF(v);
      Py_DECREF(d);
      return NULL;
    }
    Py_DECREF(k);
    Py_DECREF(v);
  }
  return d;
}

static PyObject *Plugin_attributes(PluginObject *self, PyObject *unused) {
  (void)unused;
  const PJRT_Api *api = self->api;
  if (!HAS_FN(api, PJRT_Plugin_Attributes)) return PyDict_New();
  ARGS(PJRT_Plugin_Attributes, .extension_start = NULL);
  PJRT_Error *err = api->PJRT_Plugin_Attributes(&a);
  if (err != NULL) return raise_error(api, err);
  return named_values_to_dict(a.attributes, a.num_attributes);
}

static PyMethodDef Plugin_methods[] = {
    {"attributes", (PyCFunction)Plugin_attributes, METH_NOARGS,
     "The plugin's attributes (xla_version, stablehlo versions, ...) as a dict."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Plugin_getset[] = {
    {"api_version", (getter)Plugin_api_version, NULL,
     "(major, minor) PJRT C API version the plugin implements.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMemberDef Plugin_members[] = {
    {"path", T_OBJECT, offsetof(PluginObject, path), READONLY, "Path of the plugin."},
    {NULL, 0, 0, 0, NULL}};

PyTypeObject PluginType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "xjax._src.runtime._pjrt.Plugin",
    .tp_basicsize = sizeof(PluginObject),
    .tp_dealloc = (destructor)Plugin_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A loaded PJRT plugin (never unloaded).",
    .tp_methods = Plugin_methods,
    .tp_getset = Plugin_getset,
    .tp_members = Plugin_members,
};

/* ------------------------------------------------------------------- Client */

void sweep_pending(ClientObject *c, int wait) {
  PendingHost *done = NULL;
  if (wait) {
    done = c->pending;
    c->pending = NULL;
    c->npending = 0;
  } else {
    PendingHost **pp = &c->pending;
    while (*pp != NULL) {
      PendingHost *p = *pp;
      PJRT_Event_IsReady_Args r = {.struct_size = PJRT_Event_IsReady_Args_STRUCT_SIZE,
                                   .event = p->event};
      PJRT_Error *err = c->api->PJRT_Event_IsReady(&r);
      destroy_error(c->api, err);
      if (err == NULL && r.is_ready) {
        *pp = p->next;
        p->next = done;
        done = p;
        c->npending--;
      } else {
        pp = &p->next;
      }
    }
  }
  /* Amortised O(1): the next sweep comes after the list doubles. */
  c->sweep_at = c->npending < 8 ? 16 : 2 * c->npending;
  /* Released only once unlinked: awaiting drops the GIL, and freeing an array
   * can run Python code that uploads (and sweeps) again. */
  while (done != NULL) {
    PendingHost *p = done;
    done = p->next;
    if (wait)
      destroy_error(c->api, await_and_destroy(c->api, p->event));
    else
      destroy_event(c->api, p->event);
    if (p->view.obj != NULL) PyBuffer_Release(&p->view);
    PyMem_Free(p);
  }
}

int add_pending(ClientObject *c, PJRT_Event *ev, Py_buffer *view) {
  PendingHost *p = PyMem_Malloc(sizeof(PendingHost));
  if (p == NULL) {
    PyErr_NoMemory();
    return -1;
  }
  p->event = ev;
  if (view != NULL)
    p->view = *view;
  else
    memset(&p->view, 0, sizeof(p->view));
  p->next = c->pending;
  c->pending = p;
  if (++c->npending >= c->sweep_at) sweep_pending(c, 0);
  return 0;
}

/* Keeps `ev`, the end of a run, for wait_for_runs (or, with no memory to keep it, waits
 * for it now). */
void follow_run(ClientObject *c, PJRT_Event *ev) {
  if (add_pending(c, ev, NULL) < 0) {
    PyErr_Clear();
    destroy_error(c->api, await_and_destroy(c->api, ev));
  }
}

/* Destroys `buf`, a DeviceBuffer's PJRT buffer. PJRT keeps the memory until the run
 * computing it is done, but nothing would then wait for that run at exit: when the result
 * is not known to be ready, its ready event joins the pending list first. */
void release_buffer(ClientObject *c, PJRT_Buffer *buf, int known_ready) {
  const PJRT_Api *api = c->api;
  if (!known_ready) {
    ARGS(PJRT_Buffer_ReadyEvent, .buffer = buf);
    PJRT_Error *err = api->PJRT_Buffer_ReadyEvent(&a);
    if (err == NULL) {
      PJRT_Event_IsReady_Args r = {.struct_size = PJRT_Event_IsReady_Args_STRUCT_SIZE,
                                   .event = a.event};
      err = api->PJRT_Event_IsReady(&r);
      if (err != NULL || r.is_ready)
        destroy_event(api, a.event);
      else
        follow_run(c, a.event);
    }
    destroy_error(api, err);
  }
  ARGS(PJRT_Buffer_Destroy, .buffer = buf);
  destroy_error(api, api->PJRT_Buffer_Destroy(&a));
}

/* Waits for every run still computing: the live DeviceBuffers not known ready, the
 * dropped results and runs without results in the pending list. (Not the done-events of
 * aliased numpy arrays: one fires only when its buffer is destroyed.) Events are taken
 * first: awaiting releases the GIL, and other threads may free buffers or sweep. */
void wait_for_runs(ClientObject *c) {
  const PJRT_Api *api = c->api;
  Py_ssize_t n = 0, k = 0;
  for (BufferObject *b = c->live; b != NULL; b = b->live_next)
    if (!b->ready && b->buf != NULL) n++;
  PJRT_Event **events = n ? PyMem_Malloc(sizeof(PJRT_Event *) * (size_t)n) : NULL;
  if (events != NULL) {
    for (BufferObject *b = c->live; b != NULL && k < n; b = b->live_next) {
      if (b->ready || b->buf == NULL) continue;
      ARGS(PJRT_Buffer_ReadyEvent, .buffer = b->buf);
      PJRT_Error *err = api->PJRT_Buffer_ReadyEvent(&a);
      if (err == NULL)
        events[k++] = a.event;
      else
        destroy_error(api, err);
    }
    for (Py_ssize_t i = 0; i < k; i++) destroy_error(api, await_and_destroy(api, events[i]));
    PyMem_Free(events);
  }
  PendingHost *runs = NULL, **pp = &c->pending;
  while (*pp != NULL) {
    PendingHost *p = *pp;
    if (p->view.obj == NULL) {
      *pp = p->next;
      p->next = runs;
      runs = p;
      c->npending--;
    } else {
      pp = &p->next;
    }
  }
  while (runs != NULL) {
    PendingHost *p = runs;
    runs = p->next;
    destroy_error(api, await_and_destroy(api, p->event));
    PyMem_Free(p);
  }
  sweep_pending(c, 0);
}

static PyObject *Client_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"plugin", "options", NULL};
  PluginObject *plugin;
  PyObject *options = NULL;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!|O!", kwlist, &PluginType, &plugin,
                                   &PyDict_Type, &options))
    return NULL;
  const PJRT_Api *api = plugin->api;
  if (ndarray_type == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "_pjrt._configure() must be called before Client()");
    return NULL;
  }

  /* Client create options (e.g. cpu_device_count) as PJRT_NamedValues. */
  Py_ssize_t nopt = options ? PyDict_Size(options) : 0;
  PJRT_NamedValue *nv = NULL;
  if (nopt > 0) {
    nv = PyMem_Calloc((size_t)nopt, sizeof(PJRT_NamedValue));
    if (nv == NULL) return PyErr_NoMemory();
    Py_ssize_t pos = 0, i = 0;
    PyObject *k, *v;
    while (PyDict_Next(options, &pos, &k, &v)) {
      Py_ssize_t klen;
      const char *ks = PyUnicode_AsUTF8AndSize(k, &klen);
      if (ks == NULL) goto bad_opts;
      nv[i].struct_size = PJRT_NamedValue_STRUCT_SIZE;
      nv[i].name = ks;
      nv[i].name_size = (size_t)klen;
      nv[i].value_size = 1;
      if (PyBool_Check(v)) {
        nv[i].type = PJRT_NamedValue_kBool;
        nv[i].bool_value = v == Py_True;
      } else if (PyLong_Check(v)) {
        nv[i].type = PJRT_NamedValue_kInt64;
        nv[i].int64_value = PyLong_AsLongLong(v);
        if (PyErr_Occurred()) goto bad_opts;
      } else if (PyFloat_Check(v)) {
        nv[i].type = PJRT_NamedValue_kFloat;
        nv[i].float_value = (float)PyFloat_AS_DOUBLE(v);
      } else if (PyUnicode_Check(v)) {
        Py_ssize_t vlen;
        nv[i].type = PJRT_NamedValue_kString;
        nv[i].string_value = PyUnicode_AsUTF8AndSize(v, &vlen);
        if (nv[i].string_value == NULL) goto bad_opts;
        nv[i].value_size = (size_t)vlen;
      } else {
        PyErr_Format(PyExc_TypeError, "unsupported client option value %R", v);
        goto bad_opts;
      }
      i++;
    }
  }
  ARGS(PJRT_Client_Create, .create_options = nv, .num_options = (size_t)nopt);
  PJRT_Error *err;
  Py_BEGIN_ALLOW_THREADS
  err = api->PJRT_Client_Create(&a);
  Py_END_ALLOW_THREADS
  PyMem_Free(nv);
  if (err != NULL) return raise_error(api, err);

  ClientObject *self = (ClientObject *)type->tp_alloc(type, 0);
  if (self == NULL) {
    PJRT_Client_Destroy_Args d = {.struct_size = PJRT_Client_Destroy_Args_STRUCT_SIZE,
                                  .client = a.client};
    destroy_error(api, api->PJRT_Client_Destroy(&d));
    return NULL;
  }
  Py_INCREF(plugin);
  self->plugin = plugin;
  self->api = api;
  self->client = a.client;
  self->sweep_at = 16;
  Py_INCREF(Py_None);
  self->py_devices = Py_None;

  {
    PJRT_Client_PlatformName_Args p = {
        .struct_size = PJRT_Client_PlatformName_Args_STRUCT_SIZE, .client = self->client};
    err = api->PJRT_Client_PlatformName(&p);
    if (err != NULL) {
      Py_DECREF(self);
      return raise_error(api, err);
    }
    self->platform = PyUnicode_DecodeUTF8(p.platform_name,
                                          (Py_ssize_t)p.platform_name_size, "replace");
    if (self->platform == NULL) {
      Py_DECREF(self);
      return NULL;
    }
    self->host_memory = p.platform_name_size == 3 && memcmp(p.platform_name, "cpu", 3) == 0;
  }
  {
    PJRT_Client_AddressableDevices_Args d = {
        .struct_size = PJRT_Client_AddressableDevices_Args_STRUCT_SIZE,
        .client = self->client};
    err = api->PJRT_Client_AddressableDevices(&d);
    if (err != NULL) {
      Py_DECREF(self);
      return raise_error(api, err);
    }
    self->ndevices = (Py_ssize_t)d.num_addressable_devices;
    self->devices = PyMem_Malloc(sizeof(PJRT_Device *) * (d.num_addressable_devices + 1));
    if (self->devices == NULL) {
      Py_DECREF(self);
      return PyErr_NoMemory();
    }
    for (size_t i = 0; i < d.num_addressable_devices; i++)
      self->devices[i] = d.addressable_devices[i];
  }
  return (PyObject *)self;

bad_opts:
  PyMem_Free(nv);
  return NULL;
}

static int Client_traverse(ClientObject *self, visitproc visit, void *arg) {
  Py_VISIT(self->dict);
  Py_VISIT(self->py_devices);
  return 0;
}

static int Client_clear(ClientObject *self) {
  Py_CLEAR(self->dict);
  Py_CLEAR(self->py_devices);
  return 0;
}

static void Client_dealloc(ClientObject *self) {
  PyObject_GC_UnTrack(self);
  if (self->weakrefs != NULL) PyObject_ClearWeakRefs((PyObject *)self);
  Client_clear(self);
  if (self->client != NULL) {
    sweep_pending(self, 1);
    PJRT_Client_Destroy_Args d = {.struct_size = PJRT_Client_Destroy_Args_STRUCT_SIZE,
                                  .client = self->client};
    destroy_error(self->api, self->api->PJRT_Client_Destroy(&d));
  }
  PyMem_Free(self->devices);
  Py_XDECREF(self->platform);
  Py_XDECREF(self->plugin);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *describe_device(const PJRT_Api *api, PJRT_Device *dev) {
  PJRT_Error *err;
  PJRT_Device_GetDescription_Args g = {
      .struct_size = PJRT_Device_GetDescription_Args_STRUCT_SIZE, .device = dev};
  if ((err = api->PJRT_Device_GetDescription(&g)) != NULL) return raise_error(api, err);
  PJRT_DeviceDescription_Id_Args i = {
      .struct_size = PJRT_DeviceDescription_Id_Args_STRUCT_SIZE,
      .device_description = g.device_description};
  if ((err = api->PJRT_DeviceDescription_Id(&i)) != NULL) return raise_error(api, err);
  PJRT_DeviceDescription_Kind_Args k = {
      .struct_size = PJRT_DeviceDescription_Kind_Args_STRUCT_SIZE,
      .device_description = g.device_description};
  if ((err = api->PJRT_DeviceDescription_Kind(&k)) != NULL) return raise_error(api, err);
  PJRT_DeviceDescription_ToString_Args s = {
      .struct_size = PJRT_DeviceDescription_ToString_Args_STRUCT_SIZE,
      .device_description = g.device_description};
  if ((err = api->PJRT_DeviceDescription_ToString(&s)) != NULL) return raise_error(api, err);
  PJRT_Device_LocalHardwareId_Args h = {
      .struct_size = PJRT_Device_LocalHardwareId_Args_STRUCT_SIZE, .device = dev};
  if ((err = api->PJRT_Device_LocalHardwareId(&h)) != NULL) return raise_error(api, err);
  return Py_BuildValue("(is#s#i)", i.id, k.device_kind, (Py_ssize_t)k.device_kind_size,
                       s.to_string, (Py_ssize_t)s.to_string_size, h.local_hardware_id);
}

static PyObject *Client_device_info(ClientObject *self, PyObject *unused) {
  (void)unused;
  PyObject *out = PyList_New(self->ndevices);
  if (out == NULL) return NULL;
  for (Py_ssize_t i = 0; i < self->ndevices; i++) {
    PyObject *t = describe_device(self->api, self->devices[i]);
    if (t == NULL) {
      Py_DECREF(out);
      return NULL;
    }
    PyList_SET_ITEM(out, i, t);
  }
  return out;
}

static PyObject *Client_platform_version(ClientObject *self, void *c) {
  (void)c;
  PJRT_Client_PlatformVersion_Args a = {
      .struct_size = PJRT_Client_PlatformVersion_Args_STRUCT_SIZE, .client = self->client};
  PJRT_Error *err = self->api->PJRT_Client_PlatformVersion(&a);
  if (err != NULL) return raise_error(self->api, err);
  return PyUnicode_DecodeUTF8(a.platform_version, (Py_ssize_t)a.platform_version_size,
                              "replace");
}

static PyObject *Client_get_devices(ClientObject *self, void *c) {
  (void)c;
  Py_INCREF(self->py_devices);
  return self->py_devices;
}

static int Client_set_devices(ClientObject *self, PyObject *v, void *c) {
  (void)c;
  if (v == NULL || !PyTuple_Check(v) || PyTuple_GET_SIZE(v) != self->ndevices) {
    PyErr_Format(PyExc_TypeError, "devices must be a tuple of %zd devices", self->ndevices);
    return -1;
  }
  Py_INCREF(v);
  Py_SETREF(self->py_devices, v);
  return 0;
}

/* Resolves a device argument (None, an index, or one of py_devices). */
int device_index(ClientObject *c, PyObject *dev) {
  if (dev == NULL || dev == Py_None) return 0;
  if (PyTuple_Check(c->py_devices)) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(c->py_devices); i++)
      if (PyTuple_GET_ITEM(c->py_devices, i) == dev) return (int)i;
  }
  if (PyLong_Check(dev)) {
    long i = PyLong_AsLong(dev);
    if (i >= 0 && i < c->ndevices) return (int)i;
  }
  PyErr_Format(PyExc_ValueError, "%R is not a device of this %U client", dev, c->platform);
  return -1;
}

static PyObject *Client_sweep(ClientObject *self, PyObject *wait) {
  sweep_pending(self, PyObject_IsTrue(wait));
  return PyLong_FromSsize_t(self->npending);
}

static PyObject *Client_wait_for_runs(ClientObject *self, PyObject *unused) {
  (void)unused;
  wait_for_runs(self);
  Py_RETURN_NONE;
}

/* ------------------------------------------------------------ Client (type) */

static PyMethodDef Client_methods[] = {
    {"compile", (PyCFunction)(void (*)(void))Client_compile, METH_VARARGS | METH_KEYWORDS,
     "compile(code, compile_options, format='mlir') -> Executable"},
    {"deserialize_executable",
     (PyCFunction)(void (*)(void))Client_deserialize_executable, METH_VARARGS | METH_KEYWORDS,
     "deserialize_executable(data, compile_options=None) -> Executable (from serialize())"},
    {"buffer_from_numpy", (PyCFunction)(void (*)(void))Client_buffer_from_numpy,
     METH_FASTCALL | METH_KEYWORDS,
     "buffer_from_numpy(array, device=None, may_alias=None) -> DeviceBuffer\n\n"
     "Copies a numpy array to a device. A large array on the CPU is aliased instead when "
     "nothing can write it (read-only, with read-only bases), or when may_alias is True "
     "(the caller then must never write it); may_alias=False always copies."},
    {"device_info", (PyCFunction)Client_device_info, METH_NOARGS,
     "[(id, kind, str, local_hardware_id)] for the addressable devices."},
    {"_sweep", (PyCFunction)Client_sweep, METH_O,
     "Releases numpy arrays PJRT no longer aliases and forgets finished runs (waits for "
     "all their events if the arg is true); returns how many remain."},
    {"_wait_for_runs", (PyCFunction)Client_wait_for_runs, METH_NOARGS,
     "Waits for every computation still running (at exit: XLA's threads must not run "
     "while the process tears down)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Client_getset[] = {
    {"platform_version", (getter)Client_platform_version, NULL, NULL, NULL},
    {"devices", (getter)Client_get_devices, (setter)Client_set_devices,
     "Tuple of Device objects (set once by the Python layer).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyMemberDef Client_members[] = {
    {"platform", T_OBJECT, offsetof(ClientObject, platform), READONLY, NULL},
    {"plugin", T_OBJECT, offsetof(ClientObject, plugin), READONLY, NULL},
    {"__dictoffset__", T_PYSSIZET, offsetof(ClientObject, dict), READONLY, NULL},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(ClientObject, weakrefs), READONLY, NULL},
    {NULL, 0, 0, 0, NULL}};

PyTypeObject ClientType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "xjax._src.runtime._pjrt.Client",
    .tp_basicsize = sizeof(ClientObject),
    .tp_dealloc = (destructor)Client_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A PJRT client: Client(plugin, options={})",
    .tp_traverse = (traverseproc)Client_traverse,
    .tp_clear = (inquiry)Client_clear,
    .tp_methods = Client_methods,
    .tp_members = Client_members,
    .tp_getset = Client_getset,
    .tp_new = Client_new,
    .tp_dictoffset = offsetof(ClientObject, dict),
    .tp_weaklistoffset = offsetof(ClientObject, weakrefs),
};

