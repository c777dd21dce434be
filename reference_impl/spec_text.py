"""The specification text of aclrtMemcpyToSymbolAsync, verbatim.

Kept as data so that every requirement can quote it and a test can check that
each quote is a verbatim part of it, and that every normative sentence is
quoted by some requirement.  Source: the CANN API reference page
"aclrtMemcpyToSymbolAsync" (English rendering).  The product table's names are
missing in this rendering; only the tick marks survive.
"""

from __future__ import annotations

SPEC_TEXT = """aclrtMemcpyToSymbolAsync
Applicable Products
Product |
Supported |
|---|---|
√ |
|
√ |
|
√ |
|
☓ |
|
√ |
|
☓ |
Function
Asynchronously copies memory from the host to a device variable. This is used to write data to a device variable.
The host memory in this API can be page-locked memory (for example, the memory allocated by the aclrtMallocHost API) or non-page-locked memory (allocated by the malloc API). If the host memory is page-locked memory, this API is asynchronous. A successful API call indicates that the task is delivered, not executed. After this API is called, call the synchronization API (for example, aclrtSynchronizeStream) to ensure that the memory copy task is complete. If the host memory is non-page-locked memory, this API returns only after the memory copy task is complete.
Prototype
1 | aclError aclrtMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, size_t offset, aclrtMemcpyKind kind, aclrtStream stream) |
Parameters
Parameter |
Input/Output |
Description |
|---|---|---|
symbol |
Input |
Address of a device variable. The device variable is declared with __gm__. |
src |
Input |
Pointer to the source memory address. |
count |
Input |
Size in bytes to copy. The following condition must be met: offset + count ≤ Device variable size. The device variable size can be obtained by calling aclrtGetSymbolSize. |
offset |
Input |
Device variable address offset, in bytes. The following condition must be met: offset + count ≤ Device variable size. The device variable size can be obtained by calling aclrtGetSymbolSize. |
kind |
Input |
Memory copy kind. For details about the type definition, see aclrtMemcpyKind. This API only supports ACL_MEMCPY_HOST_TO_DEVICE and ACL_MEMCPY_DEFAULT. |
stream |
Input |
Stream for executing the memory copy task. For details about the type definition, see aclrtStream. |
Returns
0 on success; otherwise, failure. For details, see aclError.
Restrictions
The restrictions are the same as those in aclrtGetSymbolAddress."""

PROTOTYPE = (
    "aclError aclrtMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count, "
    "size_t offset, aclrtMemcpyKind kind, aclrtStream stream)"
)

NORMATIVE_SENTENCES: tuple[str, ...] = (
    "Asynchronously copies memory from the host to a device variable.",
    "This is used to write data to a device variable.",
    "The host memory in this API can be page-locked memory (for example, the memory allocated"
    " by the aclrtMallocHost API) or non-page-locked memory (allocated by the malloc API).",
    "If the host memory is page-locked memory, this API is asynchronous.",
    "A successful API call indicates that the task is delivered, not executed.",
    "After this API is called, call the synchronization API (for example,"
    " aclrtSynchronizeStream) to ensure that the memory copy task is complete.",
    "If the host memory is non-page-locked memory, this API returns only after the memory copy"
    " task is complete.",
    PROTOTYPE,
    "Address of a device variable.",
    "The device variable is declared with __gm__.",
    "Pointer to the source memory address.",
    "Size in bytes to copy.",
    "The following condition must be met: offset + count ≤ Device variable size.",
    "The device variable size can be obtained by calling aclrtGetSymbolSize.",
    "Device variable address offset, in bytes.",
    "Memory copy kind.",
    "For details about the type definition, see aclrtMemcpyKind.",
    "This API only supports ACL_MEMCPY_HOST_TO_DEVICE and ACL_MEMCPY_DEFAULT.",
    "Stream for executing the memory copy task.",
    "For details about the type definition, see aclrtStream.",
    "0 on success; otherwise, failure.",
    "For details, see aclError.",
    "The restrictions are the same as those in aclrtGetSymbolAddress.",
)
"""Every sentence of SPEC_TEXT that says something about the call's behaviour.

Headings and table labels ("Parameters", "Input", ...) are left out.  Each of
these must be quoted by at least one requirement of the catalogue.
"""

PRODUCT_TABLE_HEADING = "Applicable Products"
