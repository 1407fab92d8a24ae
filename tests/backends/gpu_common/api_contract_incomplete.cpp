// Must not compile: a vendor Api with only some of the shared GPU layer's contract. The test
// gpu.api_contract_names_missing_members checks that the compiler's errors name what is missing.
#include "gpu_common/engine/api_contract.hpp"

struct ApiWithoutStatusValues {
    static constexpr const char* kName = "incomplete";
    using Result = int;
};

static_assert(polyhal::gpu::apiMeetsContract<ApiWithoutStatusValues>());
