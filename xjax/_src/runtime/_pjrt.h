/* Internal declarations shared by the _pjrt extension's source files. */
#ifndef XJAX_RUNTIME_PJRT_H_
#define XJAX_RUNTIME_PJRT_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>
#include <string.h>

#include "pjrt_c_api.h"

_Static_assert(sizeof(Py_ssize_t) == sizeof(int64_t), "Py_ssize_t must be 64-bit");

#define MAX_PTYPE 64  /* > largest PJRT_Buffer_Type value we know */
#define STACK_ARGS 16 /* args/outputs handled without heap allocation */
#define MAX_DIMS 64

/* Whether the plugin's function table is long enough to have `name`, and has it. */
#define HAS_FN(api, name) \
  ((api)->struct_size >= offsetof(PJRT_Api, name) + sizeof(void *) && (api)->name != NULL)

/* Declares `a`, a zeroed PJRT args struct of type T##_Args with its struct_size. */
#define ARGS(T, ...) T##_Args a = {.struct_size = T##_Args_STRUCT_SIZE, __VA_ARGS__}

/* ------------------------------------------------ state set by _configure (_pjrt.c) */

extern PyObject *XlaRuntimeError;        /* subclass of RuntimeError */
extern PyTypeObject *ndarray_type;       /* numpy.ndarray */
extern PyObject *ptype_dtype[MAX_PTYPE]; /* PJRT type -> numpy dtype */
extern Py_ssize_t ptype_itemsize[MAX_PTYPE];
extern char ptype_subbyte[MAX_PTYPE];    /* S4, U4, ...: host bytes may be packed */
extern PyObject *hook_dtype_code;        /* dtype -> PJRT type (>= 0), -1: normalize */
extern PyObject *hook_normalize;         /* obj -> (ndarray, ptype[, dims]) */
extern PyObject *hook_contiguous;        /* numpy.ascontiguousarray */
extern PyObject *hook_empty;             /* numpy.empty */
extern PyObject *hook_unpack;            /* (uint8 ndarray, shape, dtype) -> ndarray */
extern PyObject *str_dtype, *str_base;
extern Py_ssize_t alias_threshold;       /* numpy inputs >= this may be aliased */
extern int release_gil_in_execute;

/* ------------------------------------------------------------ errors and events */

PyObject *raise_error(const PJRT_Api *api, PJRT_Error *err);
void destroy_error(const PJRT_Api *api, PJRT_Error *err);
void destroy_event(const PJRT_Api *api, PJRT_Event *ev);
PJRT_Error *await_and_destroy(const PJRT_Api *api, PJRT_Event *ev);

/* -------------------------------------------------------------- objects */

typedef struct {
  PyObject_HEAD
  const PJRT_Api *api;
  void *handle;
  PyObject *path;
} PluginObject;

/* An event the client waits for before letting go: PJRT's done-event for a numpy array it
 * aliases (kept alive until then), or the ready event of a run's result dropped before it
 * was computed (no view), so that exit can wait for every computation still running.
 * Polled from Python threads holding the GIL (no callbacks on XLA threads). */
typedef struct PendingHost {
  PJRT_Event *event;
  Py_buffer view; /* view.obj holds the reference; NULL for a run */
  struct PendingHost *next;
} PendingHost;

struct BufferObject;

typedef struct {
  PyObject_HEAD
  PluginObject *plugin;
  const PJRT_Api *api;
  PJRT_Client *client;
  PJRT_Device **devices; /* addressable devices */
  Py_ssize_t ndevices;
  PyObject *py_devices;  /* tuple of Python Device objects, set by client.py */
  PyObject *platform;
  int host_memory;       /* buffers live in host memory (cpu) */
  PendingHost *pending;
  Py_ssize_t npending, sweep_at;
  struct BufferObject *live; /* every DeviceBuffer of this client (exit waits for them) */
  PyObject *dict;        /* subclasses from Python get attributes */
  PyObject *weakrefs;
} ClientObject;

typedef struct BufferObject {
  PyObject_HEAD
  ClientObject *client;
  struct BufferObject *live_prev, *live_next; /* in client->live */
  PJRT_Buffer *buf;
  PyObject *shape;    /* tuple, or NULL until asked for */
  PyObject *dtype;    /* numpy dtype, or NULL until asked for */
  char *host_ptr;     /* CPU address once known */
  int ptype;
  int dev_index;
  char ready;         /* known ready without error */
  char deleted;
  char exported;      /* memory shared with numpy (a view of it, or an aliased upload):
                         free only in dealloc, never donate */
  char extref;        /* holds a PJRT external reference */
  char layout_ok;     /* 0 unknown, 1 dense row-major, -1 other */
  int inflight;       /* execute() calls using it with the GIL released */
  PyObject *weakrefs;
} BufferObject;

extern PyTypeObject PluginType, ClientType, BufferType, ExecutableType, HostViewType;

/* _pjrt_client.c */
PyObject *load_plugin(PyObject *mod, PyObject *arg);
void sweep_pending(ClientObject *c, int wait);
void wait_for_runs(ClientObject *c);
void release_buffer(ClientObject *c, PJRT_Buffer *buf, int known_ready);
void follow_run(ClientObject *c, PJRT_Event *ev);
int add_pending(ClientObject *c, PJRT_Event *ev, Py_buffer *view /* or NULL */);
int device_index(ClientObject *c, PyObject *dev);

/* _pjrt_buffer.c */
BufferObject *new_buffer(ClientObject *c, PJRT_Buffer *b, int ptype, int dev_index,
                         PyObject *shape, PyObject *dtype);
/* When upload() may hand PJRT the numpy memory itself instead of a copy. */
typedef enum {
  ALIAS_NEVER,        /* always copy (donated arguments, may_alias=False) */
  ALIAS_IF_IMMUTABLE, /* only memory nothing can write (the default) */
  ALIAS_ALLOWED,      /* the caller promises not to write it (may_alias=True) */
} AliasPolicy;

int is_immutable(PyObject *arr);
PJRT_Buffer *upload(ClientObject *c, PyObject *obj, int dev_index, AliasPolicy policy,
                    int *ptype_out, PyObject **shape_out, int *aliased_out);
PyObject *Client_buffer_from_numpy(ClientObject *self, PyObject *const *args,
                                   Py_ssize_t nargs, PyObject *kwnames);
void reset_dtype_cache(void);

/* _pjrt_executable.c */
PyObject *Client_compile(ClientObject *self, PyObject *args, PyObject *kwds);
PyObject *set_array_class(PyObject *mod, PyObject *arg);

/* _pjrt_ffi.c: XLA FFI custom-call handlers (host callbacks, LAPACK) */
PyObject *ffi_register_target(PyObject *mod, PyObject *args);
PyObject *ffi_load_lapack(PyObject *mod, PyObject *args);
PyObject *ffi_set_dispatcher(PyObject *mod, PyObject *fn);
PyObject *Client_deserialize_executable(ClientObject *self, PyObject *args, PyObject *kwds);

#endif /* XJAX_RUNTIME_PJRT_H_ */
