// HIP's user objects (hipUserObjectCreate, hipGraphRetainUserObject), which HIP 5.3 added: an
// older header, such as HIP 5.2's that this backend builds with, gets their declarations here,
// as HIP declares them. Include after <hip/hip_runtime_api.h>.
#ifndef POLYHAL_BACKENDS_HIP_USER_OBJECTS_HPP_
#define POLYHAL_BACKENDS_HIP_USER_OBJECTS_HPP_

#include <hip/hip_version.h>

#if HIP_VERSION < 50300000
typedef struct hipUserObject* hipUserObject_t;
typedef enum hipUserObjectFlags { hipUserObjectNoDestructorSync = 0x1 } hipUserObjectFlags;
typedef enum hipUserObjectRetainFlags { hipGraphUserObjectMove = 0x1 } hipUserObjectRetainFlags;
extern "C" {
hipError_t hipUserObjectCreate(hipUserObject_t* object_out, void* ptr, hipHostFn_t destroy,
                               unsigned int initialRefcount, unsigned int flags);
hipError_t hipUserObjectRelease(hipUserObject_t object, unsigned int count);
hipError_t hipGraphRetainUserObject(hipGraph_t graph, hipUserObject_t object, unsigned int count,
                                    unsigned int flags);
}
#endif

#endif  // POLYHAL_BACKENDS_HIP_USER_OBJECTS_HPP_
