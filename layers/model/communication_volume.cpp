#include "model/communication_volume.hpp"

namespace meshcomm::layers {

void all_reduce_sum(Communicator& group, float* data, std::size_t count, std::size_t& volume) {
  if (group.size() == 1 || count == 0) return;
  group.all_reduce(ConstBufferView(data, count, DataType::f32), BufferView(data, count, DataType::f32)).wait();
  volume += all_reduce_volume(count * sizeof(float), group.size());
}

}  // namespace meshcomm::layers
