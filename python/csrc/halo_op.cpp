// torch.ops.meshcomm.halo_exchange(x, group, left, right, dim, periodic): this rank's shard of a
// sequence sharded along `dim` over `group`, returned with `left` rows of the previous shards
// before it and `right` rows of the next ones after it (zeros beyond the ends unless periodic).
// Registered for CPU, Meta (shapes only) and Autograd: its backward is the halo plan's adjoint,
// adding the gradients of the halo rows into the rows they came from.

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <tuple>

#include "group_registry.hpp"
#include "meshcomm/error.hpp"
#include "meshcomm/halo.hpp"
#include "tensor_buffers.hpp"

namespace meshcomm::torch_plugin {

namespace {

/// What a plan depends on: group, rows of this shard, halo widths, row shape and type.
using PlanKey = std::tuple<std::string, int64_t, int64_t, int64_t, int64_t, int, bool, std::string>;

/// The strategy called `name`.
HaloStrategy strategy_named(const std::string& name) {
  for (auto strategy : {HaloStrategy::p2p, HaloStrategy::neighbor_alltoallv, HaloStrategy::mpi_neighbor, HaloStrategy::rma}) {
    if (to_string(strategy) == name) return strategy;
  }
  throw Error(ErrorCode::invalid_argument,
              fmt::format("halo_exchange: strategy = '{}'; give p2p, neighbor_alltoallv or rma", name),
              {.backend = "meshcomm (torch)", .operation = "halo_exchange"});
}

/// One plan per key and group, made collectively the first time a rank asks for it.
HaloPlan& plan_for(ProcessGroupMeshcomm& group, const PlanKey& key) {
  static std::mutex mutex;
  static std::map<PlanKey, std::unique_ptr<HaloPlan>> plans;
  std::lock_guard lock(mutex);
  auto& plan = plans[key];
  if (plan) return *plan;
  const auto& [name, rows, left, right, row_elements, type, periodic, strategy] = key;
  // Creating the plan is collective: it runs on the group's worker, in call order.
  auto work = group.enqueue(c10d::OpType::UNKNOWN, {}, [&, rows = rows](Communicator& comm) {
    const std::int64_t mine = rows;
    std::vector<std::int64_t> all(static_cast<std::size_t>(comm.size()));
    comm.all_gather(ConstBufferView(&mine, 1, DataType::i64), BufferView(all.data(), all.size(), DataType::i64))
        .wait();
    HaloSpec spec{.left = left, .right = right, .row_elements = static_cast<std::size_t>(row_elements),
                  .type = static_cast<DataType>(type), .periodic = periodic, .strategy = strategy_named(strategy)};
    for (auto count : all) spec.shard_rows.push_back(static_cast<std::size_t>(count));
    plan = std::make_unique<HaloPlan>(HaloPlan::create(comm, spec));
    return Work();
  });
  work->wait(std::chrono::milliseconds{0});
  return *plan;
}

void check_widths(int64_t left, int64_t right) {
  if (left < 0 || right < 0) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("halo_exchange: left = {} and right = {} must be at least 0", left, right),
                {.backend = "meshcomm (torch)", .operation = "halo_exchange"});
  }
}

/// `x` with `dim` first, as contiguous rows.
at::Tensor rows_first(const at::Tensor& x, int64_t dim) { return x.movedim(dim, 0).contiguous(); }

/// Runs the forward (or, with `adjoint`, the adjoint) exchange on `extended`, a rows-first
/// contiguous tensor of the plan's extended rows.
void exchange(const std::string& group_name, at::Tensor& extended, int64_t own_rows, int64_t left, int64_t right,
              bool periodic, bool adjoint, const std::string& strategy = "p2p") {
  auto group = group_named(group_name, "halo_exchange");
  const int64_t row_elements = extended.dim() > 1 ? extended[0].numel() : 1;
  const auto type = data_type_of(extended, "halo_exchange");
  auto& plan =
      plan_for(*group, {group_name, own_rows, left, right, row_elements, static_cast<int>(type), periodic, strategy});
  auto* data = extended.data_ptr();
  auto work = group->enqueue(c10d::OpType::UNKNOWN, {}, [&plan, data, adjoint](Communicator&) {
    return adjoint ? plan.start_adjoint(data) : plan.start(data);
  });
  work->wait(std::chrono::milliseconds{0});
}

at::Tensor halo_exchange_cpu(const at::Tensor& x, const std::string& group, int64_t left, int64_t right, int64_t dim,
                             bool periodic) {
  check_widths(left, right);
  const auto shard = rows_first(x, dim);
  auto shape = shard.sizes().vec();
  const int64_t own_rows = shape[0];
  shape[0] = own_rows + left + right;
  // Only the halo rows need zeros (those beyond the ends keep them); the shard is copied once.
  auto extended = at::empty(shape, shard.options());
  extended.narrow(0, 0, left).zero_();
  extended.narrow(0, left + own_rows, right).zero_();
  extended.narrow(0, left, own_rows).copy_(shard);
  exchange(group, extended, own_rows, left, right, periodic, false);
  return extended.movedim(0, dim);
}

/// In place: `extended` already holds left + own + right rows along `dim`; its halo rows are
/// filled (no copy of the shard: the form for a trainer that keeps K and V in extended buffers).
at::Tensor& halo_exchange_inplace(at::Tensor& extended, const std::string& group, int64_t left, int64_t right,
                                  int64_t dim, bool periodic, const std::string& strategy) {
  check_widths(left, right);
  const auto axis = dim < 0 ? dim + extended.dim() : dim;
  if (axis != 0 || !extended.is_contiguous()) {
    throw Error(ErrorCode::invalid_argument,
                "halo_exchange_: the extended tensor must be contiguous with the sequence along dim 0",
                {.backend = "meshcomm (torch)", .operation = "halo_exchange_"});
  }
  const int64_t own_rows = extended.size(0) - left - right;
  if (own_rows < 0) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("halo_exchange_: {} rows cannot hold left = {} and right = {} halo rows", extended.size(0),
                            left, right),
                {.backend = "meshcomm (torch)", .operation = "halo_exchange_"});
  }
  exchange(group, extended, own_rows, left, right, periodic, false, strategy);
  return extended;
}

at::Tensor halo_exchange_meta(const at::Tensor& x, const std::string& /*group*/, int64_t left, int64_t right,
                              int64_t dim, bool /*periodic*/) {
  auto shape = x.sizes().vec();
  const auto axis = static_cast<std::size_t>(dim < 0 ? dim + x.dim() : dim);
  shape[axis] += left + right;
  return at::empty(shape, x.options());
}

/// The adjoint: gradient of the extended tensor in, gradient of the shard out.
at::Tensor halo_exchange_adjoint(const at::Tensor& grad_extended, const std::string& group, int64_t left,
                                 int64_t right, int64_t dim, bool periodic) {
  auto extended = rows_first(grad_extended, dim).clone();
  const int64_t own_rows = extended.size(0) - left - right;
  exchange(group, extended, own_rows, left, right, periodic, true);
  return extended.narrow(0, left, own_rows).movedim(0, dim).contiguous();
}

class HaloExchangeFunction : public torch::autograd::Function<HaloExchangeFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* context, const at::Tensor& x, const std::string& group,
                            int64_t left, int64_t right, int64_t dim, bool periodic) {
    context->saved_data["group"] = group;
    context->saved_data["left"] = left;
    context->saved_data["right"] = right;
    context->saved_data["dim"] = dim;
    context->saved_data["periodic"] = periodic;
    at::AutoDispatchBelowADInplaceOrView guard;
    static auto op = c10::Dispatcher::singleton()
                         .findSchemaOrThrow("meshcomm::halo_exchange", "")
                         .typed<at::Tensor(const at::Tensor&, const std::string&, int64_t, int64_t, int64_t, bool)>();
    return op.call(x, group, left, right, dim, periodic);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* context,
                                               torch::autograd::tensor_list gradients) {
    const auto& saved = context->saved_data;
    auto gradient = halo_exchange_adjoint(gradients[0], saved.at("group").toStringRef(), saved.at("left").toInt(),
                                          saved.at("right").toInt(), saved.at("dim").toInt(),
                                          saved.at("periodic").toBool());
    return {gradient, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor halo_exchange_autograd(const at::Tensor& x, const std::string& group, int64_t left, int64_t right,
                                  int64_t dim, bool periodic) {
  return HaloExchangeFunction::apply(x, group, left, right, dim, periodic);
}

}  // namespace

TORCH_LIBRARY(meshcomm, library) {
  library.def("halo_exchange(Tensor x, str group, int left, int right, int dim=0, bool periodic=False) -> Tensor");
  library.def(
      "halo_exchange_(Tensor(a!) extended, str group, int left, int right, int dim=0, bool periodic=False, "
      "str strategy=\"p2p\") -> Tensor(a!)");
}

TORCH_LIBRARY_IMPL(meshcomm, CPU, library) {
  library.impl("halo_exchange", halo_exchange_cpu);
  library.impl("halo_exchange_", halo_exchange_inplace);
}
TORCH_LIBRARY_IMPL(meshcomm, Meta, library) { library.impl("halo_exchange", halo_exchange_meta); }
TORCH_LIBRARY_IMPL(meshcomm, Autograd, library) { library.impl("halo_exchange", halo_exchange_autograd); }

}  // namespace meshcomm::torch_plugin
