/* The XLA FFI structures xjax's custom-call handlers read, and the helpers the handler
 * files share (_pjrt_ffi.c: host callbacks and registration; _pjrt_lapack.c: LAPACK/BLAS).
 *
 * The structs are the leading fields of XLA's FFI C API (xla/ffi/api/c_api.h) and of the
 * PJRT FFI extension (xla/pjrt/c/pjrt_c_api_ffi_extension.h), written here because the
 * plugin wheel ships only pjrt_c_api.h. Every struct starts with its size, which is checked
 * before fields past the common prefix are read.
 */
#ifndef XJAX_PJRT_FFI_H_
#define XJAX_PJRT_FFI_H_

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

/* -------------------------------------------------- helpers (_pjrt_ffi.c) */
int answer_metadata(FfiCallFrame *frame);
void *ffi_error(FfiCallFrame *frame, int code, const char *message);
int frame_ok(FfiCallFrame *frame);
int find_i64_attr(FfiCallFrame *frame, const char *name, int64_t *out);

/* ---------------------------------------------- LAPACK/BLAS (_pjrt_lapack.c) */
void *lapack_getrf_handler(FfiCallFrame *frame);
void *blas_trsm_handler(FfiCallFrame *frame);
void *lapack_geev_handler(FfiCallFrame *frame);
void *lapack_gees_handler(FfiCallFrame *frame);
/* Whether ffi_load_lapack found `routine` ("getrf", "trsm", "geev" or "gees"). */
int lapack_has(const char *routine);

/* ----------------------------------------------------------- sort (_pjrt_sort.c) */
void *sort_handler(FfiCallFrame *frame);

#endif /* XJAX_PJRT_FFI_H_ */
