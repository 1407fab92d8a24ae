// Offload bundles and code object metadata (code_object.hpp).
#include "code_object.hpp"

#include <endian.h>

#include <cstdlib>
#include <cstring>
#include <utility>

namespace polyhal::hip {

namespace {

// A clang offload bundle: the magic, the number of entries, then for each its offset, size and
// target (its length, then its characters); each entry is a code object (the host's is empty).
constexpr char kBundleMagic[] = "__CLANG_OFFLOAD_BUNDLE__";
constexpr size_t kBundleMagicSize = sizeof kBundleMagic - 1;

// Reads the next 64-bit little-endian field at `*cursor`, or fails past the end.
bool readField(const unsigned char* image, size_t size, size_t* cursor, uint64_t* value) {
    if (size - *cursor < sizeof *value) return false;
    std::memcpy(value, image + *cursor, sizeof *value);
    *value = le64toh(*value);
    *cursor += sizeof *value;
    return true;
}

// A comgr object, released when it goes.
class ComgrData {
  public:
    explicit ComgrData(const ComgrSymbols& comgr) : comgr_(comgr) {}
    ComgrData(const ComgrData&) = delete;
    ComgrData& operator=(const ComgrData&) = delete;
    ~ComgrData() {
        if (created_) comgr_.releaseData.address(data_);
    }
    amd_comgr_status_t create(amd_comgr_data_kind_t kind) {
        const amd_comgr_status_t status = comgr_.createData.address(kind, &data_);
        created_ = status == AMD_COMGR_STATUS_SUCCESS;
        return status;
    }
    amd_comgr_data_t get() const { return data_; }

  private:
    const ComgrSymbols& comgr_;
    amd_comgr_data_t data_{};
    bool created_ = false;
};

class ComgrMetadata {
  public:
    explicit ComgrMetadata(const ComgrSymbols& comgr) : comgr_(comgr) {}
    ComgrMetadata(const ComgrMetadata&) = delete;
    ComgrMetadata& operator=(const ComgrMetadata&) = delete;
    ~ComgrMetadata() {
        if (held_) comgr_.destroyMetadata.address(node_);
    }
    // Takes the node a comgr call fills in through the pointer, when `status` is a success.
    amd_comgr_metadata_node_t* out() { return &node_; }
    amd_comgr_status_t hold(amd_comgr_status_t status) {
        held_ = status == AMD_COMGR_STATUS_SUCCESS;
        return status;
    }
    amd_comgr_metadata_node_t get() const { return node_; }

    // The value of map key `key` into `value`.
    amd_comgr_status_t lookup(const char* key, ComgrMetadata* value) const {
        return value->hold(comgr_.metadataLookup.address(node_, key, value->out()));
    }
    amd_comgr_status_t string(std::string* text) const {
        size_t size = 0;
        if (auto status = comgr_.getMetadataString.address(node_, &size, nullptr)) return status;
        text->assign(size, '\0');
        if (auto status = comgr_.getMetadataString.address(node_, &size, text->data())) {
            return status;
        }
        if (!text->empty() && text->back() == '\0') text->pop_back();  // the size counts the NUL
        return AMD_COMGR_STATUS_SUCCESS;
    }
    amd_comgr_status_t listSize(size_t* size) const {
        return comgr_.getMetadataListSize.address(node_, size);
    }
    amd_comgr_status_t index(size_t at, ComgrMetadata* element) const {
        return element->hold(comgr_.indexListMetadata.address(node_, at, element->out()));
    }

  private:
    const ComgrSymbols& comgr_;
    amd_comgr_metadata_node_t node_{};
    bool held_ = false;
};

// The explicit arguments of one kernel's metadata (`.args`: `.size`, `.value_kind`). A kernel
// without arguments may have no `.args` at all.
amd_comgr_status_t readArguments(const ComgrSymbols& comgr, const ComgrMetadata& kernel,
                                 std::vector<KernelParameter>* parameters) {
    ComgrMetadata args(comgr);
    if (kernel.lookup(".args", &args) != AMD_COMGR_STATUS_SUCCESS) return AMD_COMGR_STATUS_SUCCESS;
    size_t count = 0;
    if (auto status = args.listSize(&count)) return status;
    for (size_t i = 0; i < count; ++i) {
        ComgrMetadata arg(comgr);
        ComgrMetadata size(comgr);
        ComgrMetadata kind(comgr);
        std::string sizeText;
        std::string kindText;
        if (auto status = args.index(i, &arg)) return status;
        if (auto status = arg.lookup(".size", &size)) return status;
        if (auto status = arg.lookup(".value_kind", &kind)) return status;
        if (auto status = size.string(&sizeText)) return status;
        if (auto status = kind.string(&kindText)) return status;
        if (kindText.rfind("hidden_", 0) == 0) continue;  // what the runtime passes itself
        parameters->push_back(KernelParameter{std::strtoull(sizeText.c_str(), nullptr, 10),
                                              kindText == "global_buffer"});
    }
    return AMD_COMGR_STATUS_SUCCESS;
}

}  // namespace

bool isOffloadBundle(const unsigned char* image, size_t size) noexcept {
    return size >= kBundleMagicSize && std::memcmp(image, kBundleMagic, kBundleMagicSize) == 0;
}

const char* readOffloadBundle(const unsigned char* image, size_t size,
                              std::vector<BundleEntry>* entries) {
    size_t cursor = kBundleMagicSize;
    uint64_t count = 0;
    if (!readField(image, size, &cursor, &count)) return "truncated offload bundle";
    for (uint64_t i = 0; i < count; ++i) {
        uint64_t offset = 0;
        uint64_t bytes = 0;
        uint64_t targetSize = 0;
        uint64_t end = 0;
        if (!readField(image, size, &cursor, &offset) || !readField(image, size, &cursor, &bytes) ||
            !readField(image, size, &cursor, &targetSize) || targetSize > size - cursor) {
            return "truncated offload bundle (its entry list runs past the end of the image)";
        }
        const std::string_view target(reinterpret_cast<const char*>(image + cursor), targetSize);
        cursor += targetSize;
        if (__builtin_add_overflow(offset, bytes, &end) || end > size) {
            return "truncated offload bundle (an entry runs past the end of the image)";
        }
        entries->push_back(BundleEntry{target, image + offset, bytes});
    }
    return nullptr;
}

amd_comgr_status_t readKernelParameters(const ComgrSymbols& comgr, const unsigned char* codeObject,
                                        size_t size, KernelParameters* kernels) {
    ComgrData data(comgr);
    if (auto status = data.create(AMD_COMGR_DATA_KIND_EXECUTABLE)) return status;
    if (auto status =
            comgr.setData.address(data.get(), size, reinterpret_cast<const char*>(codeObject))) {
        return status;
    }
    ComgrMetadata root(comgr);
    if (auto status = root.hold(comgr.getDataMetadata.address(data.get(), root.out()))) {
        return status;
    }
    ComgrMetadata list(comgr);
    if (auto status = root.lookup("amdhsa.kernels", &list)) return status;
    size_t count = 0;
    if (auto status = list.listSize(&count)) return status;
    for (size_t i = 0; i < count; ++i) {
        ComgrMetadata kernel(comgr);
        ComgrMetadata nameNode(comgr);
        std::string name;
        if (auto status = list.index(i, &kernel)) return status;
        if (auto status = kernel.lookup(".name", &nameNode)) return status;
        if (auto status = nameNode.string(&name)) return status;
        std::vector<KernelParameter> parameters;
        if (auto status = readArguments(comgr, kernel, &parameters)) return status;
        (*kernels)[std::move(name)] = std::move(parameters);
    }
    return AMD_COMGR_STATUS_SUCCESS;
}

}  // namespace polyhal::hip
