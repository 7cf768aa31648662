#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "meshcomm/export.hpp"

namespace meshcomm {

/// Setup-time exchange among the ranks that will form a communicator.
///
/// A bootstrap moves small byte strings once, while communicators are created; it is never on
/// a data path. Implementations: `InProcessBootstrap` (ranks as threads of one process),
/// `MpiBootstrap` (mpi_bootstrap.hpp), `EnvBootstrap` (torchrun's environment), `PmixBootstrap`
/// (srun, prterun, mpirun without MPI) and `CallerBootstrap` (a framework's own exchange); or
/// derive from it. `from_environment()` picks one from what the launcher set.
class MESHCOMM_API Bootstrap {
 public:
  virtual ~Bootstrap();

  /// The bootstrap this process's launcher calls for, with exchanges bounded by `timeout` (zero:
  /// `MESHCOMM_TIMEOUT`, else 300 s). `MESHCOMM_BOOTSTRAP` = env | pmix | auto (the default)
  /// chooses; auto takes `EnvBootstrap` where `RANK` and `WORLD_SIZE` are set (torchrun,
  /// accelerate launch), else `PmixBootstrap` where a PMIx server started the process
  /// (`PMIX_RANK` set: srun --mpi=pmix, prterun, mpirun). Its `description()` says which it took
  /// and why. Throws Error(invalid_argument) naming the variables it looked for when none is set.
  static std::unique_ptr<Bootstrap> from_environment(std::chrono::milliseconds timeout = std::chrono::milliseconds{0});

  /// This rank, in [0, size()).
  [[nodiscard]] virtual int rank() const noexcept = 0;
  /// Number of ranks.
  [[nodiscard]] virtual int size() const noexcept = 0;
  /// Short name of the launcher behind it: "inproc", "mpi", ...
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  /// One line: the name, this rank and the size, and where the ranks meet.
  [[nodiscard]] virtual std::string description() const;

  /// Gathers `mine` from every rank, in rank order; every rank must pass the same number of
  /// bytes. Throws `Error` (timeout naming the missing ranks, or size_mismatch).
  [[nodiscard]] virtual std::vector<std::byte> all_gather(std::span<const std::byte> mine) = 0;

  /// Returns once every rank has entered. Throws `Error` on timeout.
  virtual void barrier() = 0;
};

class InProcessWorld;

/// Ranks as threads of one process: each thread owns one `InProcessBootstrap` of a shared
/// `InProcessWorld`, and communicators made from it use the `inproc` backend.
///
/// ```
/// auto world = meshcomm::InProcessWorld::create(4);
/// // in thread r:
/// meshcomm::InProcessBootstrap bootstrap(world, r);
/// auto comm = meshcomm::Communicator::create(bootstrap);
/// ```
class MESHCOMM_API InProcessBootstrap final : public Bootstrap {
 public:
  /// Joins `world` as `rank`; throws `Error(invalid_argument)` if `rank` is out of range.
  InProcessBootstrap(std::shared_ptr<InProcessWorld> world, int rank);
  ~InProcessBootstrap() override;

  [[nodiscard]] int rank() const noexcept override { return rank_; }
  [[nodiscard]] int size() const noexcept override;
  [[nodiscard]] std::string_view name() const noexcept override { return "inproc"; }
  [[nodiscard]] std::vector<std::byte> all_gather(std::span<const std::byte> mine) override;
  void barrier() override;

  /// The world this rank belongs to.
  [[nodiscard]] const std::shared_ptr<InProcessWorld>& world() const noexcept { return world_; }

 private:
  std::shared_ptr<InProcessWorld> world_;
  int rank_;
};

/// The shared state of one in-process world of `size` ranks.
class MESHCOMM_API InProcessWorld {
 public:
  /// A world of `size` ≥ 1 ranks whose setup exchanges give up after `timeout`
  /// (zero: `MESHCOMM_TIMEOUT`, else the library default).
  static std::shared_ptr<InProcessWorld> create(int size,
                                                std::chrono::milliseconds timeout = std::chrono::milliseconds{0});
  ~InProcessWorld();

  /// Number of ranks.
  [[nodiscard]] int size() const noexcept;

  /// Internal state, shared with the inproc backend.
  class Impl;
  /// Internal access for the inproc backend.
  [[nodiscard]] Impl& impl() noexcept { return *impl_; }

 private:
  explicit InProcessWorld(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace meshcomm
