/*
 * iprecord's memory map: map(path) or map(fd) returns a read-only Buffer
 * over a file mapped with mmap(2) (MAP_SHARED, PROT_READ), so that every process
 * and thread that maps the same file shares one copy in the page cache.
 * Mappings of 2 MiB or more are advised huge pages (MADV_HUGEPAGE).
 * The mapping is released by the Buffer's finaliser, once nothing
 * references the Buffer (lookups in flight hold it). And dieWithParent()
 * for the compiler process (below).
 */

#include <errno.h>
#include <fcntl.h>
#include <node_api.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <signal.h>
#include <sys/prctl.h>
#endif

static void unmap(napi_env env, void* data, void* hint) {
  (void)env;
  munmap(data, (size_t)(uintptr_t)hint);
}

static napi_value fail(napi_env env, const char* what, const char* path) {
  char message[4352];
  snprintf(message, sizeof message, "%s %s: %s", what, path, strerror(errno));
  napi_throw_error(env, NULL, message);
  return NULL;
}

static napi_value map(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1) {
    napi_throw_type_error(env, NULL, "map(path) needs a path or a file descriptor");
    return NULL;
  }
  char path[4096];
  size_t length = 0;
  napi_valuetype type;
  napi_typeof(env, argv[0], &type);
  /* A descriptor is the caller's: it stays open. A path is opened without
     blocking (a FIFO would wait for a writer) and must be a regular file. */
  int fd = -1;
  int own = type != napi_number;
  if (!own) {
    int32_t given = -1;
    napi_get_value_int32(env, argv[0], &given);
    fd = given;
    snprintf(path, sizeof path, "descriptor %d", given);
  } else {
    if (napi_get_value_string_utf8(env, argv[0], path, sizeof path, &length) != napi_ok || length >= sizeof path - 1) {
      napi_throw_type_error(env, NULL, "map(path): the path must be a string shorter than 4095 bytes");
      return NULL;
    }
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return fail(env, "cannot open", path);
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    if (own) close(fd);
    return fail(env, "cannot stat", path);
  }
  if (!S_ISREG(st.st_mode)) {
    if (own) close(fd);
    errno = EINVAL;
    return fail(env, "not a regular file:", path);
  }
  size_t size = (size_t)st.st_size;
  napi_value buffer;
  if (size == 0) {
    if (own) close(fd);
    void* data = NULL;
    napi_create_buffer(env, 0, &data, &buffer);
    return buffer;
  }
  void* data = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
  if (own) close(fd);
  if (data == MAP_FAILED) return fail(env, "cannot map", path);
#ifdef MADV_HUGEPAGE
  /* Lookups read a dataset at random. Asked for huge pages, a page fault
     that reads the file from disk fills the page cache in 2 MiB folios
     mapped as such (without it, random faults read small ones): a TLB
     entry covers 512 times as much of the file. Pages already cached stay
     as they are; where the kernel has no huge pages this fails, harmless. */
  if (size >= ((size_t)2 << 20)) madvise(data, size, MADV_HUGEPAGE);
#endif
  if (napi_create_external_buffer(env, size, data, unmap, (void*)(uintptr_t)size, &buffer) != napi_ok) {
    munmap(data, size);
    napi_throw_error(env, NULL, "map(path): cannot make a Buffer over the mapping");
    return NULL;
  }
  return buffer;
}

/* dieWithParent(): this process is killed when the process that started it
   ends, however it ends (Linux: PR_SET_PDEATHSIG); false where that cannot
   be asked. The compiler process calls it, so that a build killed with
   SIGKILL leaves no compile running behind it. */
static napi_value die_with_parent(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value result;
#ifdef __linux__
  napi_get_boolean(env, prctl(PR_SET_PDEATHSIG, SIGKILL) == 0, &result);
#else
  napi_get_boolean(env, false, &result);
#endif
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "map", NAPI_AUTO_LENGTH, map, NULL, &fn);
  napi_set_named_property(env, exports, "map", fn);
  napi_create_function(env, "dieWithParent", NAPI_AUTO_LENGTH, die_with_parent, NULL, &fn);
  napi_set_named_property(env, exports, "dieWithParent", fn);
  return exports;
}
