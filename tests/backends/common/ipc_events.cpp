// Implements ipc_events.hpp.
#include "ipc_events.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace polyhal::doubles {
namespace {

size_t pageSize() {
    return static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

std::shared_ptr<IpcEvent> IpcEvent::create() {
    const int file = memfd_create("double-ipc-event", MFD_CLOEXEC);
    if (file < 0) return nullptr;
    struct stat info {};
    void* page = MAP_FAILED;
    if (ftruncate(file, static_cast<off_t>(pageSize())) == 0 && fstat(file, &info) == 0) {
        page = mmap(nullptr, pageSize(), PROT_READ | PROT_WRITE, MAP_SHARED, file, 0);
    }
    if (page == MAP_FAILED) {
        close(file);
        return nullptr;
    }
    return std::shared_ptr<IpcEvent>(
        new IpcEvent(file, static_cast<Page*>(page), static_cast<uint64_t>(info.st_ino), false));
}

IpcOpenStatus IpcEvent::open(const IpcName& name, std::shared_ptr<IpcEvent>* opened) {
    if (name.magic != kIpcEventNameMagic || name.size != pageSize()) {
        return IpcOpenStatus::kNotAName;
    }
    if (name.pid == static_cast<uint32_t>(getpid())) return IpcOpenStatus::kSameProcess;
    const int file = openNamedFile(name);
    if (file < 0) return IpcOpenStatus::kGone;
    void* page = mmap(nullptr, pageSize(), PROT_READ | PROT_WRITE, MAP_SHARED, file, 0);
    if (page == MAP_FAILED) {
        close(file);
        return IpcOpenStatus::kGone;
    }
    opened->reset(new IpcEvent(file, static_cast<Page*>(page), name.inode, true));
    return IpcOpenStatus::kOpened;
}

IpcEvent::~IpcEvent() {
    munmap(page_, pageSize());
    close(file_);
}

IpcName IpcEvent::name(int device) const {
    return IpcName{kIpcEventNameMagic, static_cast<uint32_t>(getpid()), file_, device, inode_, 0,
                   pageSize()};
}

void IpcEvent::record(Stream& stream) {
    const uint32_t generation = page_->generations.beginRecord();
    stream.submit(
        [self = shared_from_this(), generation] { self->page_->generations.publish(generation); });
}

void IpcEvent::enqueueWait(Stream& stream) {
    const uint32_t generation = page_->generations.latest();
    if (page_->generations.reached(generation)) return;
    stream.submit(
        [self = shared_from_this(), generation] { self->page_->generations.wait(generation); });
}

bool IpcEvent::done() const {
    return page_->generations.reached(page_->generations.latest());
}

void IpcEvent::synchronize() const {
    page_->generations.wait(page_->generations.latest());
}

void IpcEvent::destroyed() {
    if (!imported_) page_->exporterDestroyed.store(1);
}

void IpcEvent::requireUsable(const char* vendor, const char* function) const {
    if (imported_ && page_->exporterDestroyed.load() != 0) {
        breach(vendor,
               "%s: the event was opened from an IPC handle, and the exporting process has "
               "destroyed it since",
               function);
    }
}

}  // namespace polyhal::doubles
