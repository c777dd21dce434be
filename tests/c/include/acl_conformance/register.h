int aclConformanceRegisterVariable(const void *hostVar, const char *name, size_t size);
