/* The declarations a generated reproducer uses, with CANN's names, types and values (a
   stand-in, for compiling only, until the C test double's own header is used). */
#ifndef ACL_ACL_H
#define ACL_ACL_H
#include <stddef.h>
#include <stdint.h>
typedef int aclError;
typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef enum { ACL_MEMCPY_HOST_TO_HOST, ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEFAULT, ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE, ACL_MEMCPY_INTER_DEVICE_TO_DEVICE } aclrtMemcpyKind;
typedef enum { ACL_STREAM_STATUS_COMPLETE = 0, ACL_STREAM_STATUS_NOT_READY = 1, ACL_STREAM_STATUS_RESERVED = 0xFFFF } aclrtStreamStatus;
typedef void (*aclrtCallback)(void *userData);
#define ACL_SUCCESS 0
aclError aclInit(const char *configPath);
aclError aclFinalize(void);
aclError aclsysGetVersionStr(char *pkgName, char *versionStr);
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtGetDevice(int32_t *deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtGetDeviceCount(uint32_t *count);
aclError aclrtSynchronizeDevice(void);
aclError aclrtCreateStream(aclrtStream *stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtSynchronizeStreamWithTimeout(aclrtStream stream, int32_t timeout);
aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status);
aclError aclrtCreateEvent(aclrtEvent *event);
aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);
aclError aclrtSynchronizeEvent(aclrtEvent event);
aclError aclrtDestroyEvent(aclrtEvent event);
aclError aclrtMallocHost(void **hostPtr, size_t size);
aclError aclrtFreeHost(void *hostPtr);
aclError aclrtHostRegisterV2(void *ptr, uint64_t size, uint32_t flag);
aclError aclrtHostUnregister(void *ptr);
aclError aclrtGetSymbolAddress(const void *symbol, void **devPtr);
aclError aclrtGetSymbolSize(const void *symbol, size_t *size);
aclError aclrtMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset, aclrtMemcpyKind kind, aclrtStream stream);
aclError aclrtMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset, aclrtMemcpyKind kind);
aclError aclrtMemcpyFromSymbol(void *dst, size_t destMax, const void *symbol, size_t count, size_t offset, aclrtMemcpyKind kind);
aclError aclrtMemcpyFromSymbolAsync(void *dst, size_t destMax, const void *symbol, size_t count, size_t offset, aclrtMemcpyKind kind, aclrtStream stream);
aclError aclrtLaunchHostFunc(aclrtStream stream, aclrtCallback fn, void *userData);
#endif
