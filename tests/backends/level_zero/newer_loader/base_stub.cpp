// Stands in for Debian's loader at link time only, to name it: the newer-loader stand-in depends
// on libze_loader_base.so.1, which at run time is a link to Debian's libze_loader.so.1 in the
// stand-in's folder (CMakeLists.txt). This library itself is never loaded.
#include <level_zero/loader/ze_loader.h>

extern "C" ze_result_t ZE_APICALL zelLoaderTranslateHandle(zel_handle_type_t, void*, void**) {
    return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
}
