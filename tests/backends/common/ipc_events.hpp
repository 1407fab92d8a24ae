// Events shared between processes, for the doubles' IPC event calls (cuIpcGetEventHandle,
// cuIpcOpenEventHandle and HIP's): an interprocess event keeps its records in a page of a memory
// file (plugin_common/shared_generations.hpp), which the exporter names as ipc_mappings.hpp names device
// memory and an importer maps through /proc/<pid>/fd. A record publishes its generation once its
// stream reaches it; a wait holds its stream until the generation that was the latest when the
// wait was enqueued has been published, by whichever process recorded it.
#ifndef POLYHAL_TESTS_BACKENDS_COMMON_IPC_EVENTS_HPP_
#define POLYHAL_TESTS_BACKENDS_COMMON_IPC_EVENTS_HPP_

#include <atomic>
#include <cstdint>
#include <memory>

#include "ipc_mappings.hpp"
#include "rules.hpp"
#include "plugin_common/shared_generations.hpp"
#include "timeline.hpp"

namespace polyhal::doubles {

constexpr uint32_t kIpcEventNameMagic = 0x45495043u;  // "CPIE"

class IpcEvent : public std::enable_shared_from_this<IpcEvent> {
  public:
    // A new event's state, never recorded; nullptr when no memory file could be made.
    static std::shared_ptr<IpcEvent> create();
    // The state another process exported under `name`.
    static IpcOpenStatus open(const IpcName& name, std::shared_ptr<IpcEvent>* opened);
    ~IpcEvent();
    IpcEvent(const IpcEvent&) = delete;
    IpcEvent& operator=(const IpcEvent&) = delete;

    // What the exporter's handle holds (`device` is the exporter's).
    IpcName name(int device) const;

    // A record on `stream`, seen by every process holding the event.
    void record(Stream& stream);
    // Holds `stream`'s later work until the latest record (of any process) has completed.
    void enqueueWait(Stream& stream);
    // Has the latest record completed (never recorded: yes)?
    bool done() const;
    // Blocks the calling thread until done().
    void synchronize() const;

    // This process destroyed its event. The exporter's destruction ends the event in every
    // process: the vendors leave any later use of an opened event undefined.
    void destroyed();
    // Breaks the run (as `vendor`, in `function`) where this process opened the event and the
    // exporter has destroyed it since.
    void requireUsable(const char* vendor, const char* function) const;

  private:
    struct Page {
        SharedGenerations generations;
        std::atomic<uint32_t> exporterDestroyed;
    };

    IpcEvent(int file, Page* page, uint64_t inode, bool imported)
        : file_(file), page_(page), inode_(inode), imported_(imported) {}

    int file_;  // kept open while the event lives, so that importers can open it
    Page* page_;
    uint64_t inode_;
    bool imported_;  // opened from another process's handle
};

}  // namespace polyhal::doubles

#endif  // POLYHAL_TESTS_BACKENDS_COMMON_IPC_EVENTS_HPP_
