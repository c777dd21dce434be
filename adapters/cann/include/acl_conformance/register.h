/*
 * acl_conformance/register.h: how a backend without a device-variable compiler
 * learns the conformance agent's device variables.
 *
 * On CANN, bisheng compiles the `__gm__` variables of the file holding `main` into
 * the device image and emits the host code that registers them (rtRegisterVariable)
 * when the image loads.  A library that merely exports the ACL C functions has no
 * such compiler, so the agent, built with the plain system compiler (the build
 * defines ACL_CONFORMANCE_REGISTER_VARIABLES), calls this function once per fixture
 * variable at start-up, before any other ACL call:
 *
 *   hostVar  the host shadow address, `&var`: the key aclrtGetSymbolAddress,
 *            aclrtGetSymbolSize and the symbol copies receive as `symbol`;
 *   name     the variable's name in the source (a C identifier, < 4096 bytes);
 *   size     its declared size in bytes, sizeof(var).
 *
 * The backend keeps one instance of the variable per device.  Each instance starts
 * as a copy of the `size` bytes at `hostVar` at the time of the call (the agent
 * fills the shadows with the fixture pattern first), as a device image's initial
 * contents would.  Registering the same hostVar again keeps the first entry.
 *
 * Returns 0 on success, non-zero otherwise (the bundled double: 100000 for NULL
 * arguments, a size of 0 or a name of 4096 bytes or more; 107000 once a device is
 * in use, because its image is laid out by then).
 */
#ifndef ACL_CONFORMANCE_REGISTER_H_
#define ACL_CONFORMANCE_REGISTER_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) int aclConformanceRegisterVariable(const void *hostVar,
                                                                          const char *name,
                                                                          size_t size);

#ifdef __cplusplus
}
#endif

#endif /* ACL_CONFORMANCE_REGISTER_H_ */
