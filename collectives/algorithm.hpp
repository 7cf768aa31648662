#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "collective_args.hpp"
#include "communicator_impl.hpp"

namespace meshcomm::detail {

/// One way to run one kind of collective. Algorithms are stateless: `start` builds the state of
/// one call. They move bytes only through the backend's point-to-point (or, for `native`, its
/// own collectives).
class Algorithm {
 public:
  virtual ~Algorithm() = default;
  /// The name users select it by: "ring", "native", ...
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  [[nodiscard]] virtual CollectiveKind kind() const noexcept = 0;
  /// Empty if it can run `args` on `comm`; otherwise a sentence saying why not.
  [[nodiscard]] virtual std::string unsupported_reason(const CollectiveArgs&, const CommunicatorImpl&) const {
    return {};
  }
  /// Whether it can run `args` on `comm` (unsupported_reason is empty), asked on every call:
  /// algorithms that can answer without composing a sentence override it.
  [[nodiscard]] virtual bool runs(const CollectiveArgs& args, const CommunicatorImpl& comm) const {
    return unsupported_reason(args, comm).empty();
  }
  /// Starts the collective; arguments are validated.
  [[nodiscard]] virtual std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const = 0;
  /// For taking a call over part-way, as the shm path does when some rank's buffer turns out not
  /// to be shared: how many internal tags start_on_tags() uses; 0 where it cannot take over.
  [[nodiscard]] virtual int takeover_tags() const noexcept { return 0; }
  /// Starts `args` on the takeover_tags() tags from `first_tag`, which the caller reserved as its
  /// own operation started (every rank reserves tags in the same order, as its calls are made).
  /// Only for an algorithm whose takeover_tags() is not 0.
  [[nodiscard]] virtual std::shared_ptr<WorkState> start_on_tags(CommunicatorImpl& comm, const CollectiveArgs& args,
                                                                 int first_tag) const;
  /// Whether it can instead take a call over on the communicator's eager slots (the eager
  /// all-reduce): start_in_slots_if().
  [[nodiscard]] virtual bool takes_over_in_slots() const noexcept { return false; }
  /// Reserves `args` on the eager slots as the caller's operation starts (eager operations, like
  /// tags, are numbered in call order on every rank), to run once every earlier eager operation
  /// has finished and `runs()` then says so, alike on every rank; skipped otherwise
  /// (EagerMailbox::start_if). Only for an algorithm that takes_over_in_slots().
  [[nodiscard]] virtual std::shared_ptr<WorkState> start_in_slots_if(CommunicatorImpl& comm,
                                                                     const CollectiveArgs& args,
                                                                     std::function<bool()> runs) const;
  /// Whether it is `native`, which hands the call to the backend (answered without a virtual
  /// call: it is asked on every call on CUDA memory).
  [[nodiscard]] bool is_native() const noexcept { return native_; }
  /// Whether it sends messages on internal tags (which a call's tag window then numbers); one
  /// that does not skips the window's fingerprint on every call.
  [[nodiscard]] bool takes_tags() const noexcept { return takes_tags_; }

 protected:
  explicit constexpr Algorithm(bool native, bool takes_tags) noexcept : native_(native), takes_tags_(takes_tags) {}

 private:
  bool native_;
  bool takes_tags_;
};

/// Defines `name()` and `kind()` of an algorithm class.
template <CollectiveKind Kind>
class AlgorithmOf : public Algorithm {
 public:
  /// `takes_tags`: see Algorithm::takes_tags.
  explicit constexpr AlgorithmOf(std::string_view name, bool takes_tags = true) noexcept
      : Algorithm(name == "native", takes_tags), name_(name) {}
  [[nodiscard]] std::string_view name() const noexcept final { return name_; }
  [[nodiscard]] CollectiveKind kind() const noexcept final { return Kind; }

 private:
  std::string_view name_;
};

/// An algorithm of `Kind` whose messages all go on one internal tag, and which can take a call
/// over on a tag reserved for it: it implements start_on_tags alone.
template <CollectiveKind Kind>
class OneTagAlgorithmOf : public AlgorithmOf<Kind> {
 public:
  using AlgorithmOf<Kind>::AlgorithmOf;
  [[nodiscard]] std::shared_ptr<WorkState> start(CommunicatorImpl& comm, const CollectiveArgs& args) const final {
    return this->start_on_tags(comm, args, comm.reserve_internal_tags(1));
  }
  [[nodiscard]] int takeover_tags() const noexcept final { return 1; }
};

}  // namespace meshcomm::detail
