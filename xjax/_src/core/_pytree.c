/* Pytree flattening of the built-in containers (tuple, list, dict, None) in C.
 *
 * xjax._src.core.pytree defines the node format and every rule; this module only runs its
 * `_flatten` and `_flatten_seq` for those four containers without a Python frame per
 * node (jit flattens its arguments on every call). Every other type goes to the handler
 * pytree.py registered for it (namedtuples, custom nodes) or, unseen, to its classifier;
 * a node built here equals the one the Python handlers build. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* Set once by configure(): pytree.py's tables and handlers (strong references). */
static PyObject *handlers;         /* type -> handler, or None for a leaf type */
static PyObject *h_tuple, *h_list, *h_dict, *h_none;
static PyObject *flatten_unknown;  /* classifies an unseen type, then flattens */
static PyObject *sorted_keys;      /* a dict's keys in pytree order */
static PyObject *flat_node;        /* flat_node(kind, n): the interned node of n leaves */
static PyObject *flat_tuple_nodes, *flat_list_nodes; /* n -> that node, where made */
static PyObject *leaf_node, *none_node, *empty_dict_node;
static PyObject *kind_tuple, *kind_list, *kind_dict;

static PyObject *flatten(PyObject *x, PyObject *leaves);

/* The handler of x's type: a new reference, or NULL without an exception when the type
 * is unseen. */
static PyObject *handler_of(PyObject *x) {
  PyObject *h = PyDict_GetItemWithError(handlers, (PyObject *)Py_TYPE(x));
  Py_XINCREF(h);
  return h;
}

/* Whether every item is of a leaf type (-1 on error). */
static int all_leaves(PyObject *const *items, Py_ssize_t n) {
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *h = PyDict_GetItemWithError(handlers, (PyObject *)Py_TYPE(items[i]));
    if (h == NULL) return PyErr_Occurred() ? -1 : 0;
    if (h != Py_None) return 0;
  }
  return 1;
}

/* The nodes of `items`, leaves appended to `leaves`. */
static PyObject *children_of(PyObject *const *items, Py_ssize_t n, PyObject *leaves) {
  PyObject *out = PyTuple_New(n);
  if (out == NULL) return NULL;
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *node = flatten(items[i], leaves);
    if (node == NULL) {
      Py_DECREF(out);
      return NULL;
    }
    PyTuple_SET_ITEM(out, i, node);
  }
  return out;
}

/* (kind, None, children, None) for a tuple or list holding `items`. */
static PyObject *sequence_node(PyObject *kind, PyObject *interned, PyObject *const *items,
                               Py_ssize_t n, PyObject *leaves) {
  int flat = all_leaves(items, n);
  if (flat < 0) return NULL;
  if (flat) {
    for (Py_ssize_t i = 0; i < n; i++)
      if (PyList_Append(leaves, items[i]) < 0) return NULL;
    PyObject *count = PyLong_FromSsize_t(n);
    if (count == NULL) return NULL;
    PyObject *node = PyDict_GetItemWithError(interned, count);
    if (node != NULL) {
      Py_INCREF(node);
    } else if (!PyErr_Occurred()) {
      node = PyObject_CallFunctionObjArgs(flat_node, kind, count, NULL);
    }
    Py_DECREF(count);
    return node;
  }
  PyObject *children = children_of(items, n, leaves);
  if (children == NULL) return NULL;
  PyObject *node = PyTuple_Pack(4, kind, Py_None, children, Py_None);
  Py_DECREF(children);
  return node;
}

static PyObject *dict_node(PyObject *x, PyObject *leaves) {
  if (PyDict_GET_SIZE(x) == 0) {
    Py_INCREF(empty_dict_node);
    return empty_dict_node;
  }
  PyObject *keys = PyObject_CallOneArg(sorted_keys, x);
  if (keys == NULL) return NULL;
  if (!PyTuple_Check(keys)) {
    Py_DECREF(keys);
    PyErr_SetString(PyExc_TypeError, "pytree: sorted keys must be a tuple");
    return NULL;
  }
  Py_ssize_t n = PyTuple_GET_SIZE(keys);
  PyObject *children = PyTuple_New(n);
  if (children == NULL) {
    Py_DECREF(keys);
    return NULL;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *value = PyObject_GetItem(x, PyTuple_GET_ITEM(keys, i));
    PyObject *node = value == NULL ? NULL : flatten(value, leaves);
    Py_XDECREF(value);
    if (node == NULL) {
      Py_DECREF(children);
      Py_DECREF(keys);
      return NULL;
    }
    PyTuple_SET_ITEM(children, i, node);
  }
  PyObject *node = PyTuple_Pack(4, kind_dict, keys, children, Py_None);
  Py_DECREF(children);
  Py_DECREF(keys);
  return node;
}

/* pytree._flatten: x's node, its leaves appended to `leaves`. */
static PyObject *flatten(PyObject *x, PyObject *leaves) {
  PyObject *h = handler_of(x);
  if (h == NULL) {
    if (PyErr_Occurred()) return NULL;
    return PyObject_CallFunctionObjArgs(flatten_unknown, x, leaves, NULL);
  }
  PyObject *node;
  if (h == Py_None) {
    node = PyList_Append(leaves, x) < 0 ? NULL : Py_NewRef(leaf_node);
  } else if (Py_EnterRecursiveCall(" while flattening a pytree")) {
    node = NULL;
  } else {
    if (h == h_tuple) {
      node = sequence_node(kind_tuple, flat_tuple_nodes, &PyTuple_GET_ITEM(x, 0),
                           PyTuple_GET_SIZE(x), leaves);
    } else if (h == h_list) {
      /* A list can change while a handler runs: flatten a snapshot. */
      PyObject *items = PyList_AsTuple(x);
      node = items == NULL ? NULL
                           : sequence_node(kind_list, flat_list_nodes,
                                           &PyTuple_GET_ITEM(items, 0),
                                           PyTuple_GET_SIZE(items), leaves);
      Py_XDECREF(items);
    } else if (h == h_dict) {
      node = dict_node(x, leaves);
    } else if (h == h_none) {
      node = Py_NewRef(none_node);
    } else {
      node = PyObject_CallFunctionObjArgs(h, x, leaves, NULL);
    }
    Py_LeaveRecursiveCall();
  }
  Py_DECREF(h);
  return node;
}

/* Two arguments, the second a list (the leaves), once configure() has run. */
static int check_args(const char *name, PyObject *const *args, Py_ssize_t nargs) {
  if (handlers == NULL) {
    PyErr_Format(PyExc_RuntimeError, "pytree %s: configure() was not called", name);
    return -1;
  }
  if (nargs != 2) {
    PyErr_Format(PyExc_TypeError, "%s() takes 2 arguments (%zd given)", name, nargs);
    return -1;
  }
  if (!PyList_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "pytree flatten: leaves must be a list");
    return -1;
  }
  return 0;
}

static PyObject *flatten_py(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (check_args("flatten", args, nargs) < 0) return NULL;
  return flatten(args[0], args[1]);
}

/* pytree._flatten_seq(xs, leaves): the tuple of the nodes of an iterable's items. */
static PyObject *flatten_seq_py(PyObject *mod, PyObject *const *args, Py_ssize_t nargs) {
  (void)mod;
  if (check_args("flatten_seq", args, nargs) < 0) return NULL;
  PyObject *items = PySequence_Tuple(args[0]);
  if (items == NULL) return NULL;
  PyObject *out = children_of(&PyTuple_GET_ITEM(items, 0), PyTuple_GET_SIZE(items), args[1]);
  Py_DECREF(items);
  return out;
}

static PyObject *configure(PyObject *mod, PyObject *args, PyObject *kwargs) {
  (void)mod;
  static char *names[] = {"handlers", "h_tuple", "h_list", "h_dict", "h_none",
                          "flatten_unknown", "sorted_keys", "flat_node", "flat_tuple_nodes",
                          "flat_list_nodes", "leaf_node", "none_node", "empty_dict_node",
                          "kind_tuple", "kind_list", "kind_dict", NULL};
  PyObject *v[16];
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "$O!OOOOOOOO!O!OOOOOO", names, &PyDict_Type,
                                   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
                                   &PyDict_Type, &v[8], &PyDict_Type, &v[9], &v[10], &v[11],
                                   &v[12], &v[13], &v[14], &v[15]))
    return NULL;
  PyObject **slots[16] = {&handlers, &h_tuple, &h_list, &h_dict, &h_none, &flatten_unknown,
                          &sorted_keys, &flat_node, &flat_tuple_nodes, &flat_list_nodes,
                          &leaf_node, &none_node, &empty_dict_node, &kind_tuple, &kind_list,
                          &kind_dict};
  for (int i = 0; i < 16; i++) {
    Py_INCREF(v[i]);
    Py_XSETREF(*slots[i], v[i]);
  }
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_VARARGS | METH_KEYWORDS,
     "configure(*, handlers, ...): pytree.py's tables, handlers and node constants."},
    {"flatten", (PyCFunction)(void (*)(void))flatten_py, METH_FASTCALL,
     "flatten(tree, leaves) -> node: pytree._flatten, the built-in containers in C."},
    {"flatten_seq", (PyCFunction)(void (*)(void))flatten_seq_py, METH_FASTCALL,
     "flatten_seq(items, leaves) -> tuple of nodes: pytree._flatten_seq."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "xjax._src.core._pytree",
                                        "Pytree flattening of built-in containers in C.", -1,
                                        methods};

PyMODINIT_FUNC PyInit__pytree(void) { return PyModule_Create(&module_def); }
