// torch.ops.meshcomm.ring_attention(q, k, v, group, causal, layout) -> (out, lse): RingAttention
// over the ranks of `group` (layers/attention/ring_attention), this rank holding the rows of
// `layout` ("contiguous" or "zigzag") as float32 or float64 [rows, heads, head_dim]. Registered for
// CPU, Meta and Autograd: the backward sends each block's dK and dV around the ring back to its
// owner.

#include <ATen/Dispatch.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <tuple>

#include "attention/ring_attention.hpp"
#include "attention/sequence_layout.hpp"
#include "group_registry.hpp"
#include "meshcomm/error.hpp"
#include "tensor_buffers.hpp"

namespace meshcomm::torch_plugin {

namespace {

using RingKey = std::tuple<std::string, int64_t, int64_t, int64_t, bool>;

layers::SequenceLayout layout_named(const std::string& name) {
  if (name == "contiguous") return layers::SequenceLayout::contiguous;
  if (name == "zigzag") return layers::SequenceLayout::zigzag;
  throw invalid_call("ring_attention", fmt::format("layout = '{}'; give 'contiguous' or 'zigzag'", name));
}

void check_block(const at::Tensor& tensor, const char* name, const at::Tensor& q) {
  const bool floating = tensor.scalar_type() == at::kFloat || tensor.scalar_type() == at::kDouble;
  if (!floating || !tensor.device().is_cpu() || tensor.dim() != 3) {
    throw invalid_call("ring_attention",
                       fmt::format("{} must be a float32 or float64 CPU tensor [rows, heads, head_dim]; it is {} {} "
                                   "with {} dims",
                                   name, c10::toString(tensor.scalar_type()), tensor.device().str(), tensor.dim()));
  }
  if (tensor.sizes() != q.sizes() || tensor.scalar_type() != q.scalar_type()) {
    throw invalid_call("ring_attention", fmt::format("{} is {} {} but q is {} {}; they must match", name,
                                                     c10::toString(tensor.scalar_type()), c10::str(tensor.sizes()),
                                                     c10::toString(q.scalar_type()), c10::str(q.sizes())));
  }
}

/// This rank's rows' global positions and the group's RingAttention for the shape and element
/// type (made the first time).
template <class T>
struct Ring {
  c10::intrusive_ptr<ProcessGroupMeshcomm> group;
  layers::RingAttention<T>* attention = nullptr;
  std::vector<std::int64_t> positions;
};

template <class T>
Ring<T> ring_for(const std::string& name, const at::Tensor& q, bool causal, const std::string& layout) {
  static std::mutex mutex;
  static std::map<RingKey, std::unique_ptr<layers::RingAttention<T>>> rings;
  Ring<T> ring{.group = group_named(name, "ring_attention")};
  const auto rows = q.size(0);
  const int ranks = ring.group->getSize();
  ring.positions = layers::layout_positions(layout_named(layout), static_cast<std::size_t>(rows * ranks), ranks,
                                            ring.group->getRank());
  std::lock_guard lock(mutex);
  auto& attention = rings[{name, rows, q.size(1), q.size(2), causal}];
  if (!attention) {
    const layers::RingAttentionShape shape{.rows = static_cast<std::size_t>(rows),
                                           .heads = static_cast<std::size_t>(q.size(1)),
                                           .head_dim = static_cast<std::size_t>(q.size(2)),
                                           .causal = causal};
    ring.group->enqueue(c10d::OpType::UNKNOWN, {}, [&](Communicator& comm) {
      attention = std::make_unique<layers::RingAttention<T>>(comm, shape);
      return Work();
    })->wait(std::chrono::milliseconds{0});
  }
  ring.attention = attention.get();
  return ring;
}

std::tuple<at::Tensor, at::Tensor> ring_attention_cpu(const at::Tensor& q_in, const at::Tensor& k_in,
                                                      const at::Tensor& v_in, const std::string& group, bool causal,
                                                      const std::string& layout) {
  check_block(q_in, "q", q_in);
  check_block(k_in, "k", q_in);
  check_block(v_in, "v", q_in);
  const auto q = q_in.contiguous(), k = k_in.contiguous(), v = v_in.contiguous();
  auto out = at::empty_like(q);
  auto lse = at::empty({q.size(0), q.size(1)}, q.options());
  AT_DISPATCH_FLOATING_TYPES(q.scalar_type(), "ring_attention", [&] {
    auto ring = ring_for<scalar_t>(group, q, causal, layout);
    ring.group->enqueue(c10d::OpType::UNKNOWN, {}, [&](Communicator&) {
      ring.attention->forward(q.data_ptr<scalar_t>(), k.data_ptr<scalar_t>(), v.data_ptr<scalar_t>(),
                              ring.positions.data(), out.data_ptr<scalar_t>(), lse.data_ptr<scalar_t>());
      return Work();
    })->wait(std::chrono::milliseconds{0});
  });
  return {out, lse};
}

std::tuple<at::Tensor, at::Tensor> ring_attention_meta(const at::Tensor& q, const at::Tensor& /*k*/,
                                                       const at::Tensor& /*v*/, const std::string& /*group*/,
                                                       bool /*causal*/, const std::string& /*layout*/) {
  return {at::empty_like(q), at::empty({q.size(0), q.size(1)}, q.options())};
}

class RingAttentionFunction : public torch::autograd::Function<RingAttentionFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* context, const at::Tensor& q,
                                                const at::Tensor& k, const at::Tensor& v, const std::string& group,
                                                bool causal, const std::string& layout) {
    at::AutoDispatchBelowADInplaceOrView guard;
    static auto op = c10::Dispatcher::singleton()
                         .findSchemaOrThrow("meshcomm::ring_attention", "")
                         .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&,
                                                                   const at::Tensor&, const std::string&, bool,
                                                                   const std::string&)>();
    auto [out, lse] = op.call(q, k, v, group, causal, layout);
    context->save_for_backward({q.contiguous(), k.contiguous(), v.contiguous(), out, lse});
    context->saved_data["group"] = group;
    context->saved_data["causal"] = causal;
    context->saved_data["layout"] = layout;
    context->mark_non_differentiable({lse});
    return {out, lse};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* context,
                                                 torch::autograd::variable_list gradients) {
    const auto saved = context->get_saved_variables();
    const auto& q = saved[0];
    const auto& k = saved[1];
    const auto& v = saved[2];
    const auto& out = saved[3];
    const auto& lse = saved[4];
    const auto d_out = gradients[0].defined() ? gradients[0].contiguous() : at::zeros_like(out);
    auto d_q = at::empty_like(q), d_k = at::empty_like(k), d_v = at::empty_like(v);
    AT_DISPATCH_FLOATING_TYPES(q.scalar_type(), "ring_attention_backward", [&] {
      auto& saved = context->saved_data;
      auto ring = ring_for<scalar_t>(saved["group"].toStringRef(), q, saved["causal"].toBool(),
                                     saved["layout"].toStringRef());
      ring.group->enqueue(c10d::OpType::UNKNOWN, {}, [&](Communicator&) {
        ring.attention->backward(q.data_ptr<scalar_t>(), k.data_ptr<scalar_t>(), v.data_ptr<scalar_t>(),
                                 ring.positions.data(), out.data_ptr<scalar_t>(), lse.data_ptr<scalar_t>(),
                                 d_out.data_ptr<scalar_t>(), d_q.data_ptr<scalar_t>(), d_k.data_ptr<scalar_t>(),
                                 d_v.data_ptr<scalar_t>());
        return Work();
      })->wait(std::chrono::milliseconds{0});
    });
    return {d_q, d_k, d_v, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

std::tuple<at::Tensor, at::Tensor> ring_attention_autograd(const at::Tensor& q, const at::Tensor& k,
                                                           const at::Tensor& v, const std::string& group, bool causal,
                                                           const std::string& layout) {
  auto results = RingAttentionFunction::apply(q, k, v, group, causal, layout);
  return {results[0], results[1]};
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(meshcomm, library) {
  library.def(
      "ring_attention(Tensor q, Tensor k, Tensor v, str group, bool causal=True, str layout=\"zigzag\") -> "
      "(Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(meshcomm, CPU, library) { library.impl("ring_attention", ring_attention_cpu); }
TORCH_LIBRARY_IMPL(meshcomm, Meta, library) { library.impl("ring_attention", ring_attention_meta); }
TORCH_LIBRARY_IMPL(meshcomm, Autograd, library) { library.impl("ring_attention", ring_attention_autograd); }

}  // namespace meshcomm::torch_plugin
